"""A rope modelled curled, with bending towards straight, uncoils: the safety net counts the
bending energy it was made with and lets it (it used to stop such a rope at its first frame
as "gained energy it cannot have")."""

from __future__ import annotations

import bpy
import numpy as np
import pytest

from xpbd_addon.blender.frame import sim
from xpbd_addon.blender.frame.checks import energy

from . import ropes


def _curl(scene, points=24, turn_degrees=241.0, length=1.0):
    """A poly curve turning through ``turn_degrees`` in the xz plane, first point pinned,
    Material stiffness with bending towards straight (Rest Shape: Straight)."""
    turn = np.radians(turn_degrees)
    radius = length / turn
    angle = np.linspace(0.0, turn, points)
    co = np.ones((points, 4), dtype=np.float32)
    co[:, 0] = radius * np.sin(angle)
    co[:, 1] = 0.0
    co[:, 2] = radius * (1.0 - np.cos(angle))
    curve = bpy.data.curves.new("curl", "CURVE")
    curve.dimensions = "3D"
    spline = curve.splines.new("POLY")
    spline.points.add(points - 1)
    spline.points.foreach_set("co", co.ravel())
    obj = ropes.link(scene, "curl", curve)
    obj.location = (0.0, 0.0, 1.5)
    s = obj.xpbd
    s.enabled = True
    s.pin_first = True
    s.stiffness_mode = "MATERIAL"
    s.use_bend_stiffness = True
    s.bend_rest = "STRAIGHT"  # bending towards straight: the curl uncoils
    return obj


@pytest.mark.parametrize("substeps", [10, 40])
@pytest.mark.parametrize("bend_stiffness", [0.5, 5.0])
def test_a_curl_uncoiling_is_not_taken_for_an_unstable_rope(scene, substeps, bend_stiffness):
    obj = _curl(scene)
    obj.xpbd.bend_stiffness = bend_stiffness  # EI [N m^2], far stiffer than the default
    obj.xpbd.substeps = substeps
    start = ropes.world_points(obj).copy()
    ropes.play(scene, 1, 48)
    assert sim.status(obj) is None  # not stopped by the safety net
    moved = np.linalg.norm(ropes.world_points(obj) - start, axis=1).max()
    assert moved > 0.05  # it uncoiled (bending pulls towards straight)
    # and it did not gain: kinetic + gravitational now within what it had, stored included
    rope = sim.REGISTRY[obj.session_uid]
    model, frame = rope.track.model, rope.track.cache[48]
    gravity = np.array(scene.gravity)
    assert energy(model, frame.x, frame.v, gravity) <= rope.track.cache[1].budget + 1e-6
