"""The README's two recipes, done as a user would with operators: a rope parented to a bone
of an animated armature follows the hand, and a mesh cable made from a rope (Thickness 0,
converted to a mesh) and pinned by a vertex group at both ends hangs taut between them."""

from __future__ import annotations

import bpy
import numpy as np

from . import ropes


def test_a_rope_parented_to_a_bone_follows_the_hand(scene):
    bpy.ops.object.armature_add(location=(0.0, 0.0, 0.0))
    rig = bpy.context.object
    bone = rig.pose.bones[0]
    bone.location = (0.0, 0.0, 0.0)
    bone.keyframe_insert("location", frame=1)
    bone.location = (0.0, 0.0, 0.5)  # the bone's y axis is world z for the default bone
    bone.keyframe_insert("location", frame=24)
    bpy.context.scene.cursor.location = (0.0, 0.0, 1.0)  # the bone's tail: the "hand"
    bpy.ops.xpbd.rope_add()
    rope = bpy.context.object
    # select the rope, then the armature, Pose Mode, the bone, Ctrl+P > Bone
    rope.select_set(True)
    rig.select_set(True)
    bpy.context.view_layer.objects.active = rig
    bpy.ops.object.mode_set(mode="POSE")
    rig.data.bones.active = rig.data.bones[0]
    bpy.ops.object.parent_set(type="BONE")
    bpy.ops.object.mode_set(mode="OBJECT")
    assert rope.parent is rig and rope.parent_bone == rig.data.bones[0].name
    scene.frame_set(1)
    start = ropes.world_points(rope)
    ropes.play(scene, 2, 24)
    end = ropes.world_points(rope)
    hand_moved = np.linalg.norm(end[0] - start[0])
    assert abs(hand_moved - 0.5) < 1e-4, hand_moved  # the pinned point rode on the bone
    assert end[-1, 2] < start[-1, 2] - 0.5  # the free end fell and swung down


def test_a_mesh_cable_pinned_by_a_vertex_group_hangs_between_its_pins(scene):
    bpy.ops.xpbd.rope_add(thickness=0.0)
    bpy.ops.object.convert(target="MESH")
    cable = bpy.context.object
    assert cable.type == "MESH"
    assert (len(cable.data.vertices), len(cable.data.edges)) == (20, 19)
    group = cable.vertex_groups.new(name="pins")
    group.add([0, 19], 1.0, "REPLACE")
    cable.xpbd.enabled = True
    cable.xpbd.pin_group = "pins"
    scene.frame_set(1)
    start = ropes.world_points(cable)
    ropes.play(scene, 2, 72)
    end = ropes.world_points(cable)
    np.testing.assert_allclose(end[[0, 19]], start[[0, 19]], atol=1e-6)  # held
    # Modelled straight between its pins it has no slack: it sags by its stretch only (3 cm
    # for 2 m at the default compliance), as the README says.
    middle = end[10, 2] - start[10, 2]
    assert -0.1 < middle < -0.01, middle
    assert np.all(np.isfinite(end))
