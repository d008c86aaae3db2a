"""Frames under a rotating parent are exact (issue 19, case 6): reached in any order, or after
saving and reopening, a frame equals playback bit for bit.

The rope used to be built (its Model's world rest lengths) with the matrix of whatever frame
it was first seen at; under rotation, float32 matrices of different frames give lengths
that differ in their last bits, and the solve carried that into 1e-7..1e-5 m."""

from __future__ import annotations

import random

import bpy
import numpy as np

from xpbd_addon.blender.frame import sim

from . import isolated, ropes


def _spinning_empty(scene):
    empty = bpy.data.objects.new("spin", None)
    scene.collection.objects.link(empty)
    empty.rotation_euler = (0.0, 0.0, 0.0)
    empty.keyframe_insert("rotation_euler", frame=1)
    empty.rotation_euler = (0.3, 0.5, 2.0)
    empty.keyframe_insert("rotation_euler", frame=60)
    return empty


def _bone_rig(scene):
    arm = bpy.data.objects.new("rig", bpy.data.armatures.new("rig"))
    scene.collection.objects.link(arm)
    bpy.context.view_layer.objects.active = arm
    bpy.ops.object.mode_set(mode="EDIT")
    bone = arm.data.edit_bones.new("Bone")
    bone.head, bone.tail = (0.0, 0.0, 0.0), (0.0, 0.0, 1.0)
    bpy.ops.object.mode_set(mode="OBJECT")
    pose_bone = arm.pose.bones["Bone"]
    pose_bone.rotation_mode = "XYZ"
    pose_bone.rotation_euler = (0.0, 0.0, 0.0)
    pose_bone.keyframe_insert("rotation_euler", frame=1)
    pose_bone.rotation_euler = (0.7, -0.4, 1.3)
    pose_bone.keyframe_insert("rotation_euler", frame=60)
    return arm


def _frames(scene, objects, order):
    """Each frame of ``order`` shown from an empty cache: the points of ``objects``."""
    sim.clear()
    out = {}
    for frame in order:
        scene.frame_set(frame)
        out[frame] = np.vstack([ropes.local_points(o) for o in objects])
    return out


def _any_order_equals_playback(scene, rope):
    played = _frames(scene, (rope,), range(1, 61))
    order = list(range(2, 61))
    random.Random(19).shuffle(order)
    jumped = _frames(scene, (rope,), order)  # built at a frame other than the start
    differ = [f for f in order if not np.array_equal(played[f], jumped[f])]
    assert differ == []
    assert sim.status(rope) is None


def test_rotating_empty_parent_any_order_equals_playback(scene):
    rope = ropes.mesh_rope(scene)
    rope.parent = _spinning_empty(scene)
    _any_order_equals_playback(scene, rope)


def test_bone_parent_any_order_equals_playback(scene):
    rig = _bone_rig(scene)
    rope = ropes.curve_rope(scene, "POLY")
    rope.parent = rig
    rope.parent_type = "BONE"
    rope.parent_bone = "Bone"
    _any_order_equals_playback(scene, rope)


def test_reopened_file_under_a_rotating_parent_equals_playback(tmp_path):
    blend = tmp_path / "spin.blend"
    setup = """
        empty = bpy.data.objects.new("spin", None)
        scene.collection.objects.link(empty)
        empty.keyframe_insert("rotation_euler", frame=1)
        empty.rotation_euler = (0.3, 0.5, 2.0)
        empty.keyframe_insert("rotation_euler", frame=60)
        rope = ropes.mesh_rope(scene)
        rope.parent = empty
    """
    played = isolated.run(setup + f"""
        ropes.play(scene, 1, 60)
        result["at60"] = ropes.local_points(rope).tolist()
        scene.frame_set(45)
        bpy.ops.wm.save_as_mainfile(filepath={str(blend)!r})
    """)
    reopened = isolated.run(f"""
        bpy.ops.wm.open_mainfile(filepath={str(blend)!r})
        scene = bpy.context.scene
        scene.frame_set(60)
        result["at60"] = ropes.local_points(bpy.data.objects["mesh_rope"]).tolist()
    """)
    assert np.array_equal(np.array(played["at60"], dtype=np.float32),
                          np.array(reopened["at60"], dtype=np.float32))


def test_ropes_colliding_with_a_rope_under_a_rotating_parent_equal_playback(scene):
    """Two ropes simulated together (one group Model) when one is parented to a spinning
    empty: the group Model follows its member's rebuilt Model."""
    spun = ropes.mesh_rope(scene, name="spun")
    spun.parent = _spinning_empty(scene)
    other = ropes.curve_rope(scene, "POLY", axis=1, name="crossing")
    other.location = (1.0, -1.0, -0.3)
    for obj in (spun, other):
        obj.xpbd.use_self_collision = True
        obj.xpbd.radius = 0.02
    played = _frames(scene, (spun, other), range(1, 61))
    order = list(range(2, 61))
    random.Random(7).shuffle(order)
    jumped = _frames(scene, (spun, other), order)
    assert len(sim.REGISTRY[spun.session_uid].run.ropes) == 2
    assert [f for f in order if not np.array_equal(played[f], jumped[f])] == []
    assert sim.status(spun) is None and sim.status(other) is None
