"""Bad input of the pipeline bakes (issue 18): a clear message naming the object and the
setting, CANCELLED, nothing changed; and the headless command bakes to a cache."""

from __future__ import annotations

import bpy
import numpy as np
import pytest

from . import ropes


def _error(op, **kwargs):
    with pytest.raises(RuntimeError) as info:  # bpy.ops raises on an ERROR report
        op(**kwargs)
    return str(info.value)


def _armature(scene, name="character"):
    arm = bpy.data.objects.new(name, bpy.data.armatures.new(name))
    scene.collection.objects.link(arm)
    bpy.context.view_layer.objects.active = arm
    bpy.ops.object.mode_set(mode="EDIT")
    bone = arm.data.edit_bones.new("hand")
    bone.head, bone.tail = (0.0, 0.0, 0.0), (0.0, 0.0, 0.5)
    bpy.ops.object.mode_set(mode="OBJECT")
    return arm


def test_bones_into_an_armature_refuse_wrong_settings_and_change_nothing(scene):
    scene.frame_start, scene.frame_end = 1, 5
    arm = _armature(scene)
    rope = ropes.curve_rope(scene, name="rope")
    bpy.context.view_layer.objects.active = rope
    settings = rope.xpbd.bake
    settings.bone_parent = "hand"
    message = _error(bpy.ops.xpbd.bake, target="BONES")
    assert "'rope'" in message and "'hand'" in message and "bone_armature" in message
    settings.bone_armature = arm
    settings.bone_parent = "wrist"
    message = _error(bpy.ops.xpbd.bake, target="BONES")
    assert "'rope'" in message and "'character'" in message and "'wrist'" in message
    assert "bake.bone_parent" in message
    empty = bpy.data.objects.new("not an armature", None)
    scene.collection.objects.link(empty)
    settings.bone_parent = "hand"
    settings.bone_armature = empty  # the panel offers armatures only; Python can set any
    assert settings.bone_armature == empty
    assert "is not an armature" in _error(bpy.ops.xpbd.bake, target="BONES")
    settings.bone_armature = arm
    arm.hide_viewport = True
    assert "hidden" in _error(bpy.ops.xpbd.bake, target="BONES")
    arm.hide_viewport = False
    assert [b.name for b in arm.data.bones] == ["hand"] and arm.animation_data is None
    assert not settings.baked and len(bpy.data.armatures) == 1
    # Right settings bake; Free Bake removes exactly the rope's bones.
    assert bpy.ops.xpbd.bake(target="BONES") == {"FINISHED"}
    assert len(arm.data.bones) == 13 and arm.data.bones["rope.0.000"].parent.name == "hand"
    assert bpy.ops.xpbd.free_bake() == {"FINISHED"}
    assert [b.name for b in arm.data.bones] == ["hand"]
    # A bone of the armature already named as the rope's would be: refused.
    bpy.context.view_layer.objects.active = arm
    bpy.ops.object.mode_set(mode="EDIT")
    clash = arm.data.edit_bones.new("rope.0.000")
    clash.head, clash.tail = (1.0, 0.0, 0.0), (1.0, 0.0, 0.5)
    bpy.ops.object.mode_set(mode="OBJECT")
    bpy.context.view_layer.objects.active = rope
    message = _error(bpy.ops.xpbd.bake, target="BONES")
    assert "already has bones named 'rope.0.000'" in message and "'rope'" in message


def test_a_cache_bake_needs_a_file_it_can_write(scene, tmp_path):
    scene.frame_start, scene.frame_end = 1, 5
    rope = ropes.curve_rope(scene, name="rope")
    bpy.context.view_layer.objects.active = rope
    before = ropes.local_points(rope).copy()
    message = _error(bpy.ops.xpbd.bake, target="CACHE")  # an unsaved file, a relative path
    assert "'rope'" in message and "bake.cache_path" in message and "not saved" in message
    rope.xpbd.bake.cache_path = str(tmp_path / "rope.obj")
    message = _error(bpy.ops.xpbd.bake, target="CACHE")
    assert "'rope'" in message and ".abc" in message
    assert not rope.xpbd.bake.baked and np.array_equal(ropes.local_points(rope), before)
    assert not [o for o in bpy.data.objects if o.name.endswith("Cache")]
    # A file that cannot be written: found out after simulating, nothing is kept.
    blocker = tmp_path / "a file"
    blocker.write_text("")
    rope.xpbd.bake.cache_path = str(blocker / "rope.abc")
    message = _error(bpy.ops.xpbd.bake, target="CACHE")
    assert "Bake failed" in message and "nothing was kept" in message
    assert not rope.xpbd.bake.baked and not rope.hide_viewport
    assert not [o for o in bpy.data.objects if o.name.endswith("Cache")]
    assert len(bpy.data.meshes) == 0 and len(bpy.data.cache_files) == 0


def test_exporting_needs_a_rope_baked_to_bones(scene, tmp_path):
    scene.frame_start, scene.frame_end = 1, 5
    rope = ropes.curve_rope(scene, name="rope")
    bpy.context.view_layer.objects.active = rope
    path = tmp_path / "rope.glb"
    assert "No rope baked to bones" in _error(bpy.ops.xpbd.export_gltf, filepath=str(path))
    assert bpy.ops.xpbd.bake() == {"FINISHED"}  # keyframes: nothing to export as a rig
    assert "No rope baked to bones" in _error(bpy.ops.xpbd.export_fbx,
                                              filepath=str(tmp_path / "rope.fbx"))
    assert not path.exists()


def test_the_cli_command_bakes_to_a_cache_file_next_to_the_blend(scene, tmp_path):
    from xpbd_addon import bake_operators

    scene.frame_start, scene.frame_end = 1, 6
    ropes.curve_rope(scene, name="rope")
    source = tmp_path / "scene.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(source))
    assert bake_operators.cli_bake([str(source), "--target", "CACHE"]) == 0
    assert (tmp_path / "xpbd_cache" / "rope.abc").stat().st_size > 0
    bpy.ops.wm.open_mainfile(filepath=str(source))
    rope = bpy.data.objects["rope"]
    assert rope.xpbd.bake.baked and rope.xpbd.bake.kind == "CACHE"
    assert rope.xpbd.bake.skin.modifiers["XPBD Cache"].cache_file is not None


def test_a_cache_frame_that_fails_to_write_keeps_nothing(scene, tmp_path, monkeypatch):
    from xpbd_addon.blender.bake import point_cache as bake_cache

    scene.frame_start, scene.frame_end = 1, 6
    rope = ropes.curve_rope(scene, name="rope")
    bpy.context.view_layer.objects.active = rope
    rope.xpbd.bake.cache_path = str(tmp_path / "rope.abc")
    original = bake_cache._Batch.show

    def show(self, frame):
        if frame == 4:
            raise ValueError("no memory for frame 4")
        original(self, frame)

    monkeypatch.setattr(bake_cache._Batch, "show", show)
    message = _error(bpy.ops.xpbd.bake, target="CACHE")
    assert "no memory for frame 4" in message and "nothing was kept" in message
    assert not rope.xpbd.bake.baked and not rope.hide_viewport
    assert not [o for o in bpy.data.objects if o.name.endswith("Cache")]
