"""A frame looks the same however it is reached (issue 29): a rope that starts after the
frame the playhead came from, and subframes (``frame_set(f, subframe=s)``, motion blur)."""

from __future__ import annotations

import bpy
import numpy as np

from xpbd_addon.blender.frame import sim

from . import ropes


def _animated_rope(scene, name="rope", start=1):
    """A curve rope (first point pinned) whose object moves from (0, 0, 0) at frame 1 to
    (2, 0, 1) at frame 30, simulated from ``start``."""
    obj = ropes.curve_rope(scene, "POLY", name=name)
    obj.location = (0.0, 0.0, 0.0)
    obj.keyframe_insert("location", frame=1)
    obj.location = (2.0, 0.0, 1.0)
    obj.keyframe_insert("location", frame=30)
    obj.xpbd.frame_start = start
    return obj


def test_a_late_start_does_not_depend_on_the_frame_the_playhead_came_from(scene):
    """Simulation Start 10, the playhead at 1: going to frame 1 and then 20 shows what
    playing 1..20 in order showed (the start state is built at frame 10, not at 1)."""
    obj = _animated_rope(scene, start=10)
    modelled = ropes.local_points(obj).copy()
    played = ropes.played_points(scene, [obj], 1, 20)
    for frame in (11, 15, 20):
        scene.frame_set(1)
        scene.frame_set(frame)
        np.testing.assert_array_equal(ropes.world_points(obj), played[frame][obj.name],
                                      err_msg=f"frame {frame} after a jump from frame 1")
    # Before its start the rope holds its modelled shape, moving with its object.
    scene.frame_set(5)
    np.testing.assert_array_equal(ropes.local_points(obj), modelled)
    assert sim.status(obj) is None


def test_a_late_start_after_reopening_with_an_earlier_rope(scene, tmp_path):
    """One rope from 1, one from 10; saved at frame 5 and reopened: frame 20 (replayed from
    frame 1 through the late rope's start) equals playing in order."""
    early = _animated_rope(scene, "early", start=1)
    late = _animated_rope(scene, "late", start=10)
    late.location.y = early.location.y = 0.0
    late.delta_location = (0.0, 0.5, 0.0)
    played = ropes.played_points(scene, [early, late], 1, 20)
    scene.frame_set(5)
    path = str(tmp_path / "late.blend")
    bpy.ops.wm.save_as_mainfile(filepath=path)
    bpy.ops.wm.open_mainfile(filepath=path)
    scene = bpy.context.scene
    scene.frame_set(20)
    for name in ("early", "late"):
        obj = bpy.data.objects[name]
        assert sim.status(obj) is None
        np.testing.assert_array_equal(ropes.world_points(obj), played[20][name],
                                      err_msg=name)


def test_a_subframe_is_shown_but_never_cached_as_a_whole_frame(scene):
    """Frames 1, 2, then 3.75, then 4..10: every whole frame equals a replay without the
    subframe, and the rope shown at 3.75 lies between frames 3 and 4 (its free end falls)."""
    obj = _animated_rope(scene)
    played = ropes.played_points(scene, [obj], 1, 10)
    sim.clear()
    ropes.play(scene, 1, 2)
    scene.frame_set(3, subframe=0.75)
    between = ropes.world_points(obj).copy()
    for frame in range(4, 11):
        scene.frame_set(frame)
        np.testing.assert_array_equal(ropes.world_points(obj), played[frame][obj.name],
                                      err_msg=f"frame {frame}")
    z3, z4, z = played[3][obj.name][-1, 2], played[4][obj.name][-1, 2], between[-1, 2]
    assert z3 > z > z4, (z3, z, z4)


def test_a_jump_to_a_subframe_replays_whole_frames(scene):
    """A jump from frame 1 straight to 6.5 (nothing cached past 1): the whole frames 2..6
    are simulated as playback does; going on to 7..10 equals playback."""
    obj = _animated_rope(scene)
    played = ropes.played_points(scene, [obj], 1, 10)
    sim.clear()
    scene.frame_set(1)
    scene.frame_set(6, subframe=0.5)
    z6, z7, z = played[6][obj.name][-1, 2], played[7][obj.name][-1, 2], \
        ropes.world_points(obj)[-1, 2]
    assert z6 > z > z7, (z6, z, z7)
    for frame in range(6, 11):
        scene.frame_set(frame)
        np.testing.assert_array_equal(ropes.world_points(obj), played[frame][obj.name],
                                      err_msg=f"frame {frame}")


def test_a_motion_blur_render_leaves_playback_unchanged(scene, tmp_path):
    """Frames 1..10 played; a Cycles render of frame 5 with motion blur (it evaluates the
    scene at subframes around 5); then every frame 1..10 equals playback without the
    render, bit for bit, and the rope rendered at each subframe lies between the whole
    frames around it."""
    obj = _animated_rope(scene)
    obj.data.bevel_depth = 0.02
    played = ropes.played_points(scene, [obj], 1, 10)
    seen = {}

    def record(scene_, depsgraph=None):
        if depsgraph is not None and depsgraph.mode == "RENDER":
            # the rope's data in world space with the matrix of this (sub)frame
            m = np.array(obj.evaluated_get(depsgraph).matrix_world)
            p = ropes.local_points(obj).astype(np.float64)
            seen[scene_.frame_current + scene_.frame_subframe] = p @ m[:3, :3].T + m[:3, 3]

    scene.render.engine = "CYCLES"
    scene.cycles.samples = 1
    scene.cycles.device = "CPU"
    scene.render.use_motion_blur = True
    scene.render.motion_blur_shutter = 0.5
    scene.render.resolution_x = scene.render.resolution_y = 8
    scene.render.filepath = str(tmp_path / "blur_")
    camera = bpy.data.objects.new("camera", bpy.data.cameras.new("camera"))
    camera.location = (1.0, -6.0, 0.0)
    camera.rotation_euler = (np.pi / 2, 0.0, 0.0)
    scene.collection.objects.link(camera)
    scene.camera = camera
    scene.frame_set(5)
    bpy.app.handlers.frame_change_post.append(record)
    try:
        bpy.ops.render.render(write_still=True)
    finally:
        bpy.app.handlers.frame_change_post.remove(record)
    # (Cycles, shutter 0.5: the scene at 4.75, 5 and 5.25)
    assert {4.75, 5.0, 5.25} <= set(seen), sorted(seen)
    np.testing.assert_array_equal(seen[5.0], played[5][obj.name])
    subframes = [t for t in seen if t != int(t)]
    for t in subframes:
        before, after = played[int(t)][obj.name][-1, 2], played[int(t) + 1][obj.name][-1, 2]
        assert before > seen[t][-1, 2] > after, (t, before, seen[t][-1, 2], after)
    for frame in range(1, 11):
        scene.frame_set(frame)
        np.testing.assert_array_equal(ropes.world_points(obj), played[frame][obj.name],
                                      err_msg=f"frame {frame} after the render")
