"""A rope with two coincident points (issue 34): a mesh or curve rope whose points 5 and 6
sit on each other (a zero-length segment) plays: the zero-length link holds the two points
together, nothing is stopped with "gained energy", and reset returns them onto each other.
Before, both were stopped at frame 15 with "The simulation gained energy it cannot have
(11.5 J more than at the start frame ...). More Substeps ... keeps it stable"."""

from __future__ import annotations

import bpy
import numpy as np
import pytest

from xpbd_addon.blender.frame import sim

from . import ropes

LENGTH = 1.98
"""The test rope's length [m] (12 points)."""


def _doubled(scene, kind):
    """The test rope (12 points, pinned at point 0) with point 6 moved onto point 5."""
    if kind == "MESH":
        obj = ropes.mesh_rope(scene)
        co = ropes.line(12, LENGTH)
        co[6] = co[5]
        obj.data.vertices.foreach_set("co", co.astype(np.float32).ravel())
        obj.data.update()
    else:
        obj = ropes.curve_rope(scene, kind)
        points = obj.data.splines[0].points
        points[6].co = points[5].co
    return obj


@pytest.mark.parametrize("kind", ["MESH", "POLY"])
@pytest.mark.parametrize("bending", [False, True])
def test_a_rope_with_two_coincident_points_plays_with_them_together(scene, kind, bending):
    obj = _doubled(scene, kind)
    obj.xpbd.use_bending = bending
    start = ropes.world_points(obj)
    assert np.array_equal(start[5], start[6])
    gap = 0.0
    for frame in range(1, 97):  # 4 s: the rope falls from horizontal and swings
        scene.frame_set(frame)
        assert sim.status(obj) is None, (frame, sim.status(obj))
        points = ropes.world_points(obj)
        assert np.all(np.isfinite(points))
        gap = max(gap, float(np.linalg.norm(points[5] - points[6])))
        # held together: the end is never farther from the pin than the rope is long
        assert np.linalg.norm(points[-1] - points[0]) < LENGTH * 1.01, frame
    print(f"{kind} bending={bending}: largest gap of the zero-length link {gap * 1e3:.3f} mm")
    assert gap < 0.005  # about a substep's fall, g h^2 (segments are 18 cm)
    assert bpy.ops.xpbd.reset() == {"FINISHED"}
    np.testing.assert_array_equal(ropes.world_points(obj), start)
