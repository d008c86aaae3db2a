"""Rendering an animation shows the same frames as playback (the handler runs on the render
depsgraph, ``depsgraph.mode == 'RENDER'``)."""

from __future__ import annotations

import bpy
import numpy as np

from xpbd_addon.blender.frame import engine, sim

from . import ropes


def test_rendered_frames_equal_played_frames(scene, tmp_path):
    obj = ropes.curve_rope(scene, "POLY")
    obj.data.bevel_depth = 0.02
    played = {}
    for frame in range(1, 7):
        scene.frame_set(frame)
        played[frame] = ropes.local_points(obj).copy()
    bpy.ops.xpbd.reset()
    scene.frame_set(1)
    sim.clear()  # nothing cached: the render has to simulate every frame itself

    rendered = {}
    modes = []

    def record(scene_, depsgraph=None):
        modes.append(depsgraph.mode if depsgraph is not None else None)
        rendered[scene_.frame_current] = ropes.local_points(obj).copy()

    scene.render.engine = "BLENDER_WORKBENCH"
    scene.render.resolution_x = scene.render.resolution_y = 32
    scene.render.filepath = str(tmp_path / "frame_")
    scene.frame_start, scene.frame_end = 1, 6
    camera = bpy.data.objects.new("camera", bpy.data.cameras.new("camera"))
    camera.location = (1.0, -6.0, -1.0)
    camera.rotation_euler = (np.pi / 2, 0.0, 0.0)
    scene.collection.objects.link(camera)
    scene.camera = camera
    bpy.app.handlers.frame_change_post.append(record)  # after ours
    try:
        bpy.ops.render.render(animation=True)
    finally:
        bpy.app.handlers.frame_change_post.remove(record)
    assert "RENDER" in modes
    for frame in range(2, 7):
        assert np.array_equal(rendered[frame], played[frame]), frame
    assert len(list(tmp_path.glob("frame_*.png"))) == 6


def _render_only(scene, frame, path):
    """A tiny Workbench render of ``frame`` alone to ``path``, with a camera."""
    scene.render.engine = "BLENDER_WORKBENCH"
    scene.render.resolution_x = scene.render.resolution_y = 16
    scene.render.filepath = str(path)
    scene.frame_start = scene.frame_end = frame
    camera = bpy.data.objects.new("camera", bpy.data.cameras.new("camera"))
    scene.collection.objects.link(camera)
    scene.camera = camera


def test_render_of_a_single_late_frame_simulates_the_missing_frames(scene, tmp_path,
                                                                   monkeypatch):
    """A render job that starts at frame 8 with nothing cached (the handler cannot step the
    scene from the render thread): the missing frames are filled with interpolated pins,
    which is exact for pins that do not move."""
    obj = ropes.curve_rope(scene, "POLY")
    ropes.play(scene, 1, 8)
    played = ropes.local_points(obj).copy()
    bpy.ops.xpbd.reset()
    sim.clear()
    rendered = {}

    def record(scene_, depsgraph=None):
        if depsgraph is not None and depsgraph.mode == "RENDER":
            rendered[scene_.frame_current] = ropes.local_points(obj).copy()

    _render_only(scene, 8, tmp_path / "late_")
    filled = []
    original = engine.Run.fill_interpolated

    def counting(self, *args, **kwargs):
        filled.append(args[2])  # (members, depsgraph, frame, render)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(engine.Run, "fill_interpolated", counting)
    bpy.app.handlers.frame_change_post.append(record)
    try:
        bpy.ops.render.render(animation=True)
    finally:
        bpy.app.handlers.frame_change_post.remove(record)
    assert filled == [8]
    assert np.array_equal(rendered[8], played)


def test_render_of_a_late_frame_fills_a_batch_of_ropes(scene, tmp_path):
    """Three plain ropes (stepped as one batch) rendered at frame 8 with nothing cached: the
    missing frames are filled for the batch, and each rope shows what it played."""
    objects = []
    for k in range(3):
        obj = ropes.curve_rope(scene, "POLY", n=8 + 4 * k, name=f"rope{k}")
        obj.location.y = 0.3 * k
        objects.append(obj)
    ropes.play(scene, 1, 8)
    played = {o.name: ropes.local_points(o).copy() for o in objects}
    bpy.ops.xpbd.reset()
    sim.clear()
    rendered = {}

    def record(scene_, depsgraph=None):
        if depsgraph is not None and depsgraph.mode == "RENDER":
            rendered.update({o.name: ropes.local_points(o).copy() for o in objects})

    _render_only(scene, 8, tmp_path / "batch_")
    bpy.app.handlers.frame_change_post.append(record)
    try:
        bpy.ops.render.render(animation=True)
    finally:
        bpy.app.handlers.frame_change_post.remove(record)
    assert sim.REGISTRY[objects[0].session_uid].run.batch
    for obj in objects:
        np.testing.assert_array_equal(rendered[obj.name], played[obj.name])
