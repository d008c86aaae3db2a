"""Bake to Bones from a rod: the bones roll with the rod's twist (Physics > XPBD Rope >
Stiffness > Shape & Twist), so a cable turned at its plug bakes into bones that turn along
it; a plain rope's bones do not roll."""

from __future__ import annotations

import bpy
import numpy as np
import pytest

from xpbd_addon.blender.frame import sim

from .test_rods import _curve, _turned_by_parent, _twisting

LAST = 48


def _bone_x_axes(rig):
    """Every pose bone's X axis, world [B, 3], in the rig's bone order."""
    world = np.array(rig.matrix_world)[:3, :3]
    return np.array([world @ np.array(bone.matrix)[:3, 0] for bone in rig.pose.bones])


@pytest.mark.parametrize("twist", [True, False])
def test_a_rod_turned_at_its_plug_bakes_bones_that_roll(scene, twist):
    """A straight 0.6 m cable along x in no gravity, its first point held by an empty that
    turns half a turn about the cable's axis over a second. As a rod (Twist on) the turn
    travels down it and the baked bones turn with it, the last one by about half a turn; as
    a plain rope nothing turns it, and its bones keep their roll."""
    scene.use_gravity = False
    scene.frame_start, scene.frame_end = 1, LAST
    co = np.zeros((13, 3))
    co[:, 0] = np.linspace(0.0, 0.6, 13)
    obj = _curve(scene, "cable", co)
    if twist:
        _twisting(obj, 0.4)
    _turned_by_parent(scene, obj, "plug", True)
    bpy.context.view_layer.objects.active = obj
    obj.select_set(True)
    assert bpy.ops.xpbd.bake(target="BONES") == {"FINISHED"}
    assert sim.status(obj) is None
    rig = obj.xpbd.bake.rig
    scene.frame_set(1)
    first = _bone_x_axes(rig)
    scene.frame_set(LAST)
    last = _bone_x_axes(rig)
    turned = np.einsum("bi,bi->b", first, last)  # cos of each bone's roll since frame 1
    if twist:
        assert turned[0] < -0.95  # held by the plug: half a turn
        assert turned[-1] < -0.8  # the free end followed
    else:
        assert turned.min() > 0.999
