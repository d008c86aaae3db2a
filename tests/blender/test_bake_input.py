"""Bake bad input: a clear message, CANCELLED, and nothing lost or half written."""

from __future__ import annotations

import bpy
import numpy as np
import pytest

from xpbd_addon.blender.bake import job as bake
from xpbd_addon.blender.frame import engine
from xpbd_addon.blender.read.geometry import RopeError

from . import ropes


def _bake_error(**kwargs):
    with pytest.raises(RuntimeError) as info:  # bpy.ops raises on an ERROR report
        bpy.ops.xpbd.bake(**kwargs)
    return str(info.value)


def _untouched(obj, points):
    assert not obj.xpbd.bake.baked
    assert np.array_equal(ropes.local_points(obj), points)
    assert getattr(obj.data, "shape_keys", None) is None
    assert len(bpy.data.actions) == 0 or obj.data.animation_data is None or (
        not obj.data.animation_data.action.name.endswith("XPBD Bake"))


def test_an_object_that_is_not_simulated_is_refused(scene):
    obj = ropes.curve_rope(scene)
    obj.xpbd.enabled = False
    assert "is not simulated" in _bake_error()
    empty = bpy.data.objects.new("empty", None)
    scene.collection.objects.link(empty)
    bpy.context.view_layer.objects.active = empty
    assert "is not simulated" in _bake_error()
    with pytest.raises(RuntimeError, match="No simulated rope"):
        bpy.ops.xpbd.bake_all()


def test_an_empty_frame_range_is_refused(scene):
    obj = ropes.curve_rope(scene)
    before = ropes.local_points(obj).copy()
    obj.xpbd.bake.use_scene_range = False
    obj.xpbd.bake.frame_start, obj.xpbd.bake.frame_end = 20, 10
    assert "end frame must come after the start" in _bake_error()
    _untouched(obj, before)
    obj.xpbd.bake.use_scene_range = True
    scene.frame_start = scene.frame_end = 5
    assert "is empty" in _bake_error()


def test_existing_animation_is_never_replaced(scene):
    obj = ropes.curve_rope(scene)
    obj.data.splines[0].points[3].keyframe_insert("co", frame=1)
    action = obj.data.animation_data.action
    message = _bake_error()
    assert "already has animation" in message and action.name in message
    assert obj.data.animation_data.action == action and len(bpy.data.actions) == 1
    mesh = ropes.mesh_rope(scene)
    mesh.data.vertices[3].keyframe_insert("co", frame=1)
    mesh_action = mesh.data.animation_data.action
    assert "shape keys would hide" in _bake_error()
    assert mesh.data.shape_keys is None and mesh.data.animation_data.action == mesh_action
    bpy.context.view_layer.objects.active = obj
    # Bones leave the rope's own data alone: allowed.
    scene.frame_start, scene.frame_end = 1, 5
    assert bpy.ops.xpbd.bake(target="BONES") == {"FINISHED"}
    assert obj.data.animation_data.action == action


def test_baking_twice_asks_to_free_first(scene):
    obj = ropes.mesh_rope(scene)
    scene.frame_start, scene.frame_end = 1, 5
    # INVOKE (a button press) runs to the end too in background mode: no modal loop there.
    assert bpy.ops.xpbd.bake("INVOKE_DEFAULT") == {"FINISHED"}
    keys = len(obj.data.shape_keys.key_blocks)
    assert "baked already" in _bake_error()
    assert len(obj.data.shape_keys.key_blocks) == keys == 6  # Basis + 5 frames
    with pytest.raises(RuntimeError, match="is not baked"):
        bpy.context.view_layer.objects.active = ropes.curve_rope(scene)
        bpy.ops.xpbd.free_bake()


def test_bones_need_a_chain_numbered_along_the_rope(scene):
    mesh = bpy.data.meshes.new("shuffled")
    mesh.from_pydata(ropes.line(4).tolist(), [(0, 2), (2, 1), (1, 3)], [])
    obj = ropes.link(scene, "shuffled", mesh)
    obj.xpbd.enabled = True
    assert "numbered along" in _bake_error(target="BONES")
    assert not obj.xpbd.bake.baked and len(bpy.data.armatures) == 0


def test_cancelling_half_way_leaves_everything_as_before(scene):
    curve = ropes.curve_rope(scene)
    mesh = ropes.mesh_rope(scene, axis=1)
    scene.frame_start, scene.frame_end = 1, 30
    ropes.play(scene, 1, 7)
    shown = {o.name: ropes.local_points(o).copy() for o in (curve, mesh)}
    n_objects = len(bpy.data.objects)
    for target in ("KEYS", "BONES"):
        job = bake.BakeJob(bpy.context, [curve, mesh], target)
        job.advance(budget=0.0)
        job.advance(budget=0.0)
        assert 0.0 < job.progress < 1.0 and not job.done
        job.cancel()
        assert not bake.BAKING
        assert scene.frame_current == 7 and len(bpy.data.objects) == n_objects
        assert len(bpy.data.actions) == 0 and len(bpy.data.armatures) == 0
        for obj in (curve, mesh):
            _untouched(obj, shown[obj.name])
    ropes.play(scene, 8, 9)  # and the live simulation goes on


def test_a_failing_frame_cancels_the_bake_with_a_message(scene, monkeypatch):
    obj = ropes.curve_rope(scene)
    scene.frame_start, scene.frame_end = 1, 10
    before = ropes.local_points(obj).copy()
    original = engine.Run.step
    calls = []

    def failing(self, previous, targets, *args, **kwargs):
        calls.append(1)
        if len(calls) == 4:
            raise RopeError("The simulation produced NaN; nothing was written")
        return original(self, previous, targets, *args, **kwargs)

    monkeypatch.setattr(engine.Run, "step", failing)
    message = _bake_error()
    assert "stopped at frame 5" in message and "produced NaN" in message
    _untouched(obj, before)
    assert not bake.BAKING


def test_the_cli_command_bakes_a_file_and_saves_it_or_saves_nothing(scene, tmp_path):
    from xpbd_addon import bake_operators

    scene.frame_start, scene.frame_end = 1, 6
    ropes.curve_rope(scene)
    ropes.mesh_rope(scene, axis=1)
    source, baked = tmp_path / "scene.blend", tmp_path / "baked.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(source))
    assert bake_operators.cli_bake([str(source), "--output", str(baked)]) == 0
    bpy.ops.wm.open_mainfile(filepath=str(baked))
    assert all(o.xpbd.bake.baked for o in bpy.data.objects)
    # Reopened with the add-on: still baked, left alone, and Free Bake still works.
    obj = bpy.data.objects["mesh_rope"]
    bpy.context.view_layer.objects.active = obj
    assert bpy.ops.xpbd.free_bake() == {"FINISHED"} and obj.data.shape_keys is None
    assert np.array_equal(ropes.local_points(obj), ropes.line(12, axis=1).astype(np.float32))
    # A file that cannot be baked (everything baked already): exit status 1, not saved.
    for o in bpy.data.objects:
        o.xpbd.enabled = False
    bpy.ops.wm.save_mainfile()
    stamp = baked.stat().st_mtime_ns
    assert bake_operators.cli_bake([str(baked)]) == 1
    assert baked.stat().st_mtime_ns == stamp


def test_settings_the_simulation_refuses_are_reported_before_anything_is_baked(scene):
    good = ropes.curve_rope(scene, name="good")
    bad = ropes.mesh_rope(scene, axis=1)
    bad.xpbd.pin_group = "missing"
    scene.frame_start, scene.frame_end = 1, 5
    ropes.play(scene, 1, 3)
    shown = ropes.local_points(good).copy()
    message = str(pytest.raises(RuntimeError, bpy.ops.xpbd.bake_all).value)
    assert "'mesh_rope'" in message and "missing" in message
    assert not good.xpbd.bake.baked and len(bpy.data.actions) == 0
    assert np.array_equal(ropes.local_points(good), shown)
