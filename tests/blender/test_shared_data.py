"""Rope data shared by several objects (Alt-D, a linked duplicate): Edit Mode on any of them
pauses the rope, and a Reset through one reaches every rope that shares the data (issue 29,
found by the fuzz)."""

from __future__ import annotations

import bpy
import numpy as np

from xpbd_addon.blender.frame import sim
from xpbd_addon.blender.read import rest

from . import ropes


def _linked_duplicate(scene, obj, name="duplicate"):
    """``obj`` duplicated with its data linked (Alt-D), not simulated itself."""
    duplicate = obj.copy()
    duplicate.name = name
    scene.collection.objects.link(duplicate)
    duplicate.xpbd.enabled = False
    duplicate.location.y += 1.0
    return duplicate


def test_edit_mode_on_a_linked_duplicate_pauses_the_rope(scene):
    obj = ropes.mesh_rope(scene)
    duplicate = _linked_duplicate(scene, obj)
    ropes.play(scene, 1, 5)
    bpy.context.view_layer.objects.active = duplicate
    bpy.ops.object.mode_set(mode="EDIT")
    scene.frame_set(6)
    message = sim.status(obj)
    assert message is not None and "Edit Mode" in message and "duplicate" in message, message
    bpy.ops.object.mode_set(mode="OBJECT")
    ropes.play(scene, 7, 8)  # resumes once nothing edits its data
    assert sim.status(obj) is None
    assert np.isfinite(ropes.local_points(obj)).all()


def test_reset_with_the_current_shape_through_a_linked_duplicate_reaches_the_rope(scene):
    """The duplicate is disabled; Reset (Use Current Shape as Rest) on it stores the shared
    data's current shape as the rest shape, and the simulated rope starts from it."""
    obj = ropes.mesh_rope(scene)
    duplicate = _linked_duplicate(scene, obj)
    ropes.play(scene, 1, 10)
    current = ropes.local_points(obj).copy()
    bpy.context.view_layer.objects.active = duplicate
    assert bpy.ops.xpbd.reset(use_current=True) == {"FINISHED"}
    np.testing.assert_array_equal(rest.load(obj, sim.geometry.build_layout(obj))[:, :3],
                                  current)
    scene.frame_set(1)  # the start frame shows the rest shape
    np.testing.assert_array_equal(ropes.local_points(obj), current)
    assert sim.status(obj) is None
