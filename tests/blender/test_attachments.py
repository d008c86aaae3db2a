"""Attachments (``Object.xpbd.attachments``): points held by an object or a bone while on."""

from __future__ import annotations

import bpy
import numpy as np

from xpbd_addon.blender.frame import sim

from . import ropes


def _key_bool(owner, path, frames_values):
    for frame, value in frames_values:
        setattr(owner, path, value)
        owner.keyframe_insert(path, frame=frame)


def _hand(scene, start=(2.2, 0.0, 0.0), end=(2.2, 0.0, 1.0)):
    """An empty moving in a straight line from ``start`` (frame 1) to ``end`` (frame 60)."""
    empty = bpy.data.objects.new("hand", None)
    scene.collection.objects.link(empty)
    empty.location = start
    empty.keyframe_insert("location", frame=1)
    empty.location = end
    empty.keyframe_insert("location", frame=60)
    return empty


def _attached_rope(scene, target, subtarget=""):
    """A 2 m curve rope along x pinned at its first point, with an attachment of its last
    point to ``target`` keyed on at frame 20 and off at frame 40."""
    obj = ropes.curve_rope(scene, "POLY", n=16, length=2.0)
    bpy.context.view_layer.objects.active = obj
    assert bpy.ops.xpbd.attachment_add() == {"FINISHED"}
    item = obj.xpbd.attachments[0]
    item.target = target
    item.subtarget = subtarget
    item.point = -1
    _key_bool(item, "enabled", [(1, False), (20, True), (40, False)])
    return obj


def _played(scene, objects, first, last):
    return ropes.played_points(scene, objects, first, last)


def _target_points(scene, target, subtarget, frames):
    out = {}
    for frame in frames:
        scene.frame_set(frame)
        matrix = np.array(target.matrix_world)
        if subtarget:
            matrix = matrix @ np.array(target.pose.bones[subtarget].matrix)
        out[frame] = matrix[:3, 3].copy()
    return out


def _check_grab_and_release(scene, obj, target, subtarget):
    scene.frame_start, scene.frame_end = 1, 60
    played = _played(scene, [obj], 1, 60)
    assert sim.status(obj) is None
    hand = _target_points(scene, target, subtarget, range(1, 61))
    tip = {f: played[f][obj.name][-1] for f in played}
    # before 20 the rope ignores the target: the same as a rope without the attachment
    free = ropes.curve_rope(scene, "POLY", n=16, length=2.0, name="free")
    alone = _played(scene, [free], 1, 25)
    for frame in range(1, 20):
        np.testing.assert_allclose(played[frame][obj.name], alone[frame]["free"], atol=1e-6)
    # from 20 to 39 the tip follows the target, keeping its offset of frame 20
    offset = tip[20] - hand[20]
    for frame in range(20, 40):
        assert np.linalg.norm(tip[frame] - hand[frame] - offset) < 1e-3, frame
    # after 40 it swings free: it leaves the target's path
    assert max(np.linalg.norm(tip[f] - hand[f] - offset) for f in range(45, 61)) > 0.05
    assert all(np.isfinite(p[obj.name]).all() for p in played.values())


def test_an_attachment_to_an_empty_grabs_follows_and_lets_go(scene):
    hand = _hand(scene)
    obj = _attached_rope(scene, hand)
    _check_grab_and_release(scene, obj, hand, "")


def test_an_attachment_to_a_bone_follows_the_pose(scene):
    armature = bpy.data.armatures.new("rig")
    rig = bpy.data.objects.new("rig", armature)
    scene.collection.objects.link(rig)
    bpy.context.view_layer.objects.active = rig
    bpy.ops.object.mode_set(mode="EDIT")
    bone = armature.edit_bones.new("hand")
    bone.head, bone.tail = (2.2, 0.0, -0.5), (2.2, 0.0, -0.3)
    bpy.ops.object.mode_set(mode="OBJECT")
    pose_bone = rig.pose.bones["hand"]
    pose_bone.location = (0.0, 0.0, 0.0)
    pose_bone.keyframe_insert("location", frame=1)
    pose_bone.location = (0.0, 0.8, 0.3)  # bone space: along the bone and sideways
    pose_bone.keyframe_insert("location", frame=60)
    obj = _attached_rope(scene, rig, "hand")
    _check_grab_and_release(scene, obj, rig, "hand")


def test_an_attachment_breaks_above_its_break_force(scene):
    scene.frame_start, scene.frame_end = 1, 40
    anchor = bpy.data.objects.new("anchor", None)
    scene.collection.objects.link(anchor)
    anchor.location = (0.0, 0.0, 0.0)
    obj = ropes.curve_rope(scene, "POLY", n=16, length=2.0, axis=2)  # hanging down from 0
    obj.xpbd.pin_first = False
    bpy.context.view_layer.objects.active = obj
    bpy.ops.xpbd.attachment_add()
    item = obj.xpbd.attachments[0]
    item.target, item.point = anchor, 0
    weight = 16 * obj.xpbd.vertex_mass * 9.81  # [N]
    item.break_force = 2.0 * weight  # holds the hanging rope
    held = _played(scene, [obj], 1, 40)[40][obj.name]
    assert abs(held[0, 2]) < 1e-6 and held[-1, 2] > -2.1  # hanging from the anchor
    item.break_force = 0.5 * weight  # below the load: it lets go
    fallen = _played(scene, [obj], 1, 40)[40][obj.name]
    assert fallen[0, 2] < -1.0  # the whole rope falls (1.6 s: 12 m free fall)
    assert sim.status(obj) is None


def test_bad_attachments_stop_the_rope_with_a_message(scene):
    obj = ropes.mesh_rope(scene)
    bpy.context.view_layer.objects.active = obj
    bpy.ops.xpbd.attachment_add()
    obj.xpbd.attachments[0].target = _hand(scene)
    scene.frame_set(2)
    assert "choose the vertex group" in sim.status(obj)
    obj.xpbd.attachments[0].vertex_group = "missing"
    scene.frame_set(3)
    assert "'missing' does not exist" in sim.status(obj)
    obj.xpbd.attachments[0].vertex_group = "pin"
    scene.frame_set(1)
    scene.frame_set(2)
    assert sim.status(obj) is None
    assert bpy.ops.xpbd.attachment_remove() == {"FINISHED"}
    assert len(obj.xpbd.attachments) == 0


def test_a_springy_attachment_holds_with_its_compliance(scene):
    """Compliance > 0: the held point hangs below its target by compliance * load, and a
    grip that moves carries the rope on its spring; frames in any order equal playback."""
    scene.frame_start, scene.frame_end = 1, 60
    anchor = bpy.data.objects.new("anchor", None)
    scene.collection.objects.link(anchor)
    obj, item = ropes.hung_from_a_spring(scene, anchor, damping=3.0)
    played = ropes.played_points(scene, [obj], 1, 60)
    assert sim.status(obj) is None
    load = 12 * obj.xpbd.vertex_mass * 9.81  # [N] the whole rope hangs from the spring
    sag = -played[60][obj.name][0, 2]
    assert abs(sag / (item.compliance * load) - 1.0) < 0.05, sag
    ropes.assert_any_order_equals(scene, obj, played, 1, 60, seed=2)
