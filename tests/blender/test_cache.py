"""Per-frame cache: scrubbing back, jumps, start-frame reset, reset operator, frame range."""

from __future__ import annotations

import bpy
import numpy as np
import pytest

from xpbd_addon.blender.frame import sim

from . import ropes


def _animated_empty(scene, name="driver"):
    """An empty flying a non-linear path over frames 1..100 (so interpolated pins would
    differ from evaluated ones)."""
    empty = bpy.data.objects.new(name, None)
    scene.collection.objects.link(empty)
    for frame, location in ((1, (0, 0, 0)), (30, (1.0, 0.5, 0.3)), (60, (-0.5, 1.0, 0.0)),
                            (100, (0.3, -0.2, 0.8))):
        empty.location = location
        empty.keyframe_insert("location", frame=frame)
    return empty


def test_scrubbing_back_shows_exactly_the_cached_frame(scene):
    obj = ropes.curve_rope(scene, "POLY")
    seen = {}
    for frame in range(1, 31):
        scene.frame_set(frame)
        seen[frame] = ropes.local_points(obj).copy()
    entry = sim.REGISTRY[obj.session_uid]
    cached = dict(entry.cache)
    assert sorted(cached) == list(range(1, 31))
    for frame in (10, 25, 2, 30, 17):
        scene.frame_set(frame)
        assert np.array_equal(ropes.local_points(obj), seen[frame])
    # Nothing was simulated again: the very same cached arrays are still there.
    assert all(entry.cache[k] is cached[k] for k in cached)
    assert not np.array_equal(seen[10], seen[11])


def test_frame_set_100_from_reset_equals_playing(scene):
    obj = ropes.curve_rope(scene, "POLY")
    obj.parent = _animated_empty(scene)
    played = {}
    for frame in range(1, 101):
        scene.frame_set(frame)
        if frame in (37, 64, 100):
            played[frame] = ropes.local_points(obj).copy()
    bpy.ops.xpbd.reset()
    scene.frame_set(1)
    assert not sim.REGISTRY[obj.session_uid].cache.keys() - {1}
    scene.frame_set(100)
    assert np.array_equal(ropes.local_points(obj), played[100])
    # And in any order afterwards.
    for frame in (64, 37, 100):
        scene.frame_set(frame)
        assert np.array_equal(ropes.local_points(obj), played[frame])


def test_jump_to_a_frame_after_reopening_equals_playing_mesh(scene):
    obj = ropes.mesh_rope(scene)
    obj.parent = _animated_empty(scene)
    ropes.play(scene, 1, 40)
    played = ropes.local_points(obj).copy()
    sim.clear()  # what a reopened file has: no simulation in memory
    scene.frame_set(40)
    assert np.array_equal(ropes.local_points(obj), played)


def test_start_frame_and_reset_restore_the_rest_shape_exactly(scene):
    obj = ropes.curve_rope(scene, "BEZIER")
    obj.xpbd.frame_start = 5
    rest = ropes.local_points(obj).copy()
    ropes.play(scene, 1, 30)
    assert not np.array_equal(ropes.local_points(obj), rest)
    scene.frame_set(5)
    assert np.array_equal(ropes.local_points(obj), rest)
    scene.frame_set(3)
    assert np.array_equal(ropes.local_points(obj), rest)
    ropes.play(scene, 5, 20)
    assert bpy.ops.xpbd.reset() == {"FINISHED"}
    assert np.array_equal(ropes.local_points(obj), rest)
    assert obj.session_uid not in sim.REGISTRY


def test_frames_after_the_end_hold_the_end_frame(scene):
    obj = ropes.curve_rope(scene, "POLY")
    obj.xpbd.frame_end = 20
    ropes.play(scene, 1, 20)
    end = ropes.local_points(obj).copy()
    scene.frame_set(21)
    scene.frame_set(60)
    assert np.array_equal(ropes.local_points(obj), end)
    assert max(sim.REGISTRY[obj.session_uid].cache) == 20


def test_changing_a_setting_invalidates_the_cache(scene):
    obj = ropes.curve_rope(scene, "POLY")
    ropes.play(scene, 1, 20)
    before = ropes.local_points(obj).copy()
    obj.xpbd.vertex_mass = 0.5
    obj.xpbd.damping = 5.0
    scene.frame_set(20)
    after = ropes.local_points(obj).copy()
    assert not np.array_equal(before, after)
    # The new result is the one playing from the start with the new settings gives.
    bpy.ops.xpbd.reset()
    ropes.play(scene, 1, 20)
    assert np.array_equal(ropes.local_points(obj), after)


def test_frame_length_follows_fps_and_fps_base(scene):
    obj = ropes.curve_rope(scene, "POLY")
    scene.render.fps = 48
    ropes.play(scene, 1, 3)
    assert sim.REGISTRY[obj.session_uid].dt == 1 / 48
    scene.render.fps = 30
    scene.render.fps_base = 1.001
    scene.frame_set(4)
    # fps_base is stored as float32.
    assert sim.REGISTRY[obj.session_uid].dt == pytest.approx(1.001 / 30, rel=1e-6)


def test_reset_all_resets_every_rope_and_refuses_non_ropes(scene):
    a = ropes.curve_rope(scene, "POLY", name="a")
    b = ropes.mesh_rope(scene)
    rest = {o.name: ropes.local_points(o).copy() for o in (a, b)}
    ropes.play(scene, 1, 10)
    assert bpy.ops.xpbd.reset(all_objects=True) == {"FINISHED"}
    for obj in (a, b):
        assert np.array_equal(ropes.local_points(obj), rest[obj.name])
    plain = ropes.link(scene, "plain", bpy.data.meshes.new("plain"))
    plain.data.from_pydata([(0, 0, 0), (1, 0, 0)], [(0, 1)], [])
    with pytest.raises(RuntimeError, match="not a rope"):
        bpy.ops.xpbd.reset()  # the active object is not simulated: nothing is stored on it
    assert "xpbd_rest" not in plain.data.attributes


def test_replaying_one_rope_keeps_the_cache_of_the_others(scene):
    old = ropes.curve_rope(scene, "POLY", name="old")
    ropes.play(scene, 1, 30)
    cached = dict(sim.REGISTRY[old.session_uid].cache)
    new = ropes.mesh_rope(scene)  # enabled at frame 30: replays 1..30 through frame_set
    scene.frame_set(30)
    assert sorted(sim.REGISTRY[new.session_uid].cache) == list(range(1, 31))
    entry = sim.REGISTRY[old.session_uid]
    assert all(entry.cache[k] is cached[k] for k in cached), "old rope was re-simulated"
