"""Pins follow animation (decision 1): object parents, bone parents, Hook modifiers on curve
points, Armature modifier weights. Only free points are written back."""

from __future__ import annotations

import bpy
import numpy as np
import pytest

from . import ropes


def _keyframed_empty(scene, name, path):
    empty = bpy.data.objects.new(name, None)
    scene.collection.objects.link(empty)
    for frame, location in path:
        empty.location = location
        empty.keyframe_insert("location", frame=frame)
    return empty


PATH = ((1, (0.0, 0.0, 0.0)), (15, (1.0, 0.0, 0.5)), (30, (0.0, 1.0, 0.0)))


def _eval_world(obj):
    depsgraph = bpy.context.evaluated_depsgraph_get()
    return np.array(obj.evaluated_get(depsgraph).matrix_world)


def test_rope_parented_to_an_animated_empty_follows_it(scene):
    obj = ropes.mesh_rope(scene)
    empty = _keyframed_empty(scene, "parent", PATH)
    obj.parent = empty
    rest = ropes.local_points(obj).copy()
    for frame in range(1, 31):
        scene.frame_set(frame)
        world = ropes.world_points(obj)
        # The pinned vertex is exactly where the parent carries it...
        np.testing.assert_allclose(world[0], np.array(empty.matrix_world.translation),
                                   atol=1e-6)
    # ...its object-space coordinates were never written...
    assert np.array_equal(ropes.local_points(obj)[0], rest[0])
    # ...and the rope is dragged along: its centre moved towards +y with the parent (world y
    # of every point starts at 0).
    assert world[1:, 1].mean() > 0.3


@pytest.mark.parametrize("kind", ["POLY", "BEZIER"])
def test_curve_hooked_to_an_animated_empty_follows_it(scene, kind):
    obj = ropes.curve_rope(scene, kind)
    obj.xpbd.pin_first = False  # the hook alone pins point 0
    empty = _keyframed_empty(scene, "hook", PATH)
    hook = obj.modifiers.new("Hook", "HOOK")
    hook.object = empty
    # Hook indices count a Bezier point three times (left handle, point, right handle).
    hook.vertex_indices_set([0, 1, 2] if kind == "BEZIER" else [0])
    hook.falloff_type = "NONE"
    depsgraph = bpy.context.evaluated_depsgraph_get()
    for frame in range(1, 31):
        scene.frame_set(frame)
        depsgraph = bpy.context.evaluated_depsgraph_get()
        # Blender's own evaluation of the hooked curve (tessellated poly curve: one vertex
        # per point) puts point 0 on the empty; the simulated rope hangs from it.
        mesh = obj.evaluated_get(depsgraph).to_mesh()
        evaluated0 = np.array(mesh.vertices[0].co)
        obj.evaluated_get(depsgraph).to_mesh_clear()
        np.testing.assert_allclose(evaluated0, np.array(empty.matrix_world.translation),
                                   atol=1e-6)
        world = ropes.world_points(obj)
        segment = np.linalg.norm(world[1] - evaluated0)
        assert abs(segment - 0.18) < 0.01, f"frame {frame}: first link {segment:.3f} m"
    assert world[1:, 1].mean() > 0.3  # the rope was dragged towards +y


def _armature(scene):
    arm = bpy.data.armatures.new("rig")
    rig = ropes.link(scene, "rig", arm)
    bpy.ops.object.mode_set(mode="EDIT")
    bone = arm.edit_bones.new("hand")
    bone.head = (0.0, 0.0, 0.0)
    bone.tail = (0.0, 0.0, 0.5)
    bpy.ops.object.mode_set(mode="OBJECT")
    pose_bone = rig.pose.bones["hand"]
    for frame, location in ((1, (0, 0, 0)), (15, (0.8, 0.4, 0.0)), (30, (0.0, 0.0, -0.6))):
        pose_bone.location = location
        pose_bone.keyframe_insert("location", frame=frame)
    return rig


def test_armature_weights_move_the_pinned_vertices(scene):
    rig = _armature(scene)
    obj = ropes.mesh_rope(scene)
    obj.vertex_groups.new(name="hand").add([0], 1.0, "REPLACE")
    modifier = obj.modifiers.new("Armature", "ARMATURE")
    modifier.object = rig
    rest = ropes.local_points(obj).copy()
    moved = 0.0
    for frame in range(1, 31):
        scene.frame_set(frame)
        depsgraph = bpy.context.evaluated_depsgraph_get()
        pose_bone = rig.evaluated_get(depsgraph).pose.bones["hand"]
        deform = (np.array(rig.matrix_world) @ np.array(pose_bone.matrix)
                  @ np.linalg.inv(np.array(pose_bone.bone.matrix_local)))
        expected = deform[:3, :3] @ rest[0] + deform[:3, 3]
        entry_pin = _pinned_world(obj)
        np.testing.assert_allclose(entry_pin, expected, atol=1e-5)
        moved = max(moved, float(np.linalg.norm(expected - rest[0])))
        # The first link keeps its length while the hand moves.
        link = np.linalg.norm(ropes.world_points(obj)[1] - expected)
        assert abs(link - 0.18) < 0.01
    assert moved > 0.5


def _pinned_world(obj):
    from xpbd_addon.blender.frame import sim

    entry = sim.REGISTRY[obj.session_uid]
    frame = entry.cache[max(entry.cache)]
    return frame.x[entry.pinned_ids[0]]


def test_rope_parented_to_a_bone_follows_it(scene):
    rig = _armature(scene)
    obj = ropes.curve_rope(scene, "POLY")
    obj.parent = rig
    obj.parent_type = "BONE"
    obj.parent_bone = "hand"
    for frame in range(1, 31):
        scene.frame_set(frame)
        world = _eval_world(obj)
        np.testing.assert_allclose(ropes.world_points(obj)[0], world[:3, 3], atol=1e-6)
        np.testing.assert_allclose(_pinned_world(obj), world[:3, 3], atol=1e-6)
    assert np.linalg.norm(_eval_world(obj)[:3, 3]) > 0.3


def test_few_points_are_transformed_with_the_same_bits_as_many():
    """``pins.transform`` takes a rope's few pins one by one in Python floats (each frame:
    a dozen numpy calls cost more than the maths): the same operations in the same order as
    the vectorised path, so a pin target does not depend on how many there are."""
    from xpbd_addon.blender.read import pins

    rng = np.random.default_rng(7)
    for count in range(pins.FEW_POINTS + 1):
        matrix = rng.normal(size=(4, 4)) * 10.0
        points = rng.normal(size=(count, 3)).astype(np.float32)
        few = pins.transform(matrix, points)
        padded = np.concatenate([points, np.zeros((pins.FEW_POINTS + 1, 3), np.float32)])
        many = pins.transform(matrix, padded)[:count]  # the vectorised path
        assert few.shape == (count, 3) and few.dtype == np.float64
        np.testing.assert_array_equal(few, many)
