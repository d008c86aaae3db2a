"""Sleeping ropes in Blender: what a rope carries for sleeping (``core.sleep.Rest``: how long
it has been at rest, whether it sleeps) is part of each cached frame, so a frame computed from
a cached frame equals the frame played in order, bit for bit, also while ropes sleep."""

from __future__ import annotations

import bpy
import numpy as np
import pytest

from xpbd_addon.blender.frame import sim

from . import ropes

R = 0.01  # rope radius [m]
FRAMES = 48


def _lying(scene, name, height, turn=0.0, air=False, rod=False):
    """A free 0.8 m rope ``height`` [m] above a ground plane, along x (or turned), in the
    air with ``air``; a rod (it bends and twists) with ``rod``."""
    obj = ropes.curve_rope(scene, "POLY", n=25, length=0.8, name=name)
    obj.location = (-0.4 * np.cos(turn), -0.4 * np.sin(turn), height)
    obj.rotation_euler[2] = turn
    s = obj.xpbd
    s.pin_first = False
    s.radius = R
    s.use_ground = True
    s.use_self_collision = True
    s.damping = 1.0
    s.use_air = air
    if rod:
        s.use_bending = True
        s.use_twist = True
    return obj


def _entry(obj):
    return sim.REGISTRY[obj.session_uid]


@pytest.mark.parametrize("kind", ["rope", "rope in the air", "rod"])
@pytest.mark.parametrize("count", [1, 2])
def test_frames_computed_from_cached_frames_of_sleeping_ropes_equal_playback(scene, count,
                                                                              kind):
    """One rope dropped on the ground (a run of one), or two crossed (a run of two: the
    ropes' rest is joined and split like x and v), in the air or not, or rods (their frames
    cached too): they come to rest and sleep; then the frames after frame 12 are dropped
    from the cache and computed again from it. (Until 2026-12-06 ropes in the air never
    slept, until 2026-12-07 rods.)"""
    air, rod = kind == "rope in the air", kind == "rod"
    objects = [_lying(scene, "under", 0.05, air=air, rod=rod)]
    if count == 2:
        objects.append(_lying(scene, "over", 0.12, turn=np.pi / 2, air=air, rod=rod))
    played = {}
    for frame in range(1, FRAMES + 1):
        scene.frame_set(frame)
        played[frame] = [ropes.local_points(o).copy() for o in objects]
    rests = [_entry(o).track.cache[FRAMES].rest for o in objects]
    assert all(r is not None and r.asleep.all() for r in rests), "the ropes must sleep"
    asleep_from = min(f for f in range(1, FRAMES + 1)
                      if all(_entry(o).track.cache[f].rest is not None
                             and _entry(o).track.cache[f].rest.asleep.all() for o in objects))
    assert asleep_from < 40
    for again_from in (12, asleep_from - 1, asleep_from + 2):
        for obj in objects:
            cache = _entry(obj).track.cache
            for k in [k for k in cache if k > again_from]:
                del cache[k]
        for frame in range(again_from + 1, FRAMES + 1):
            scene.frame_set(frame)
            for obj, points in zip(objects, played[frame], strict=True):
                np.testing.assert_array_equal(ropes.local_points(obj), points,
                                              err_msg=f"{obj.name} at frame {frame}")


def test_a_default_rope_dropped_on_the_ground_sleeps(scene):
    """As a user does it: Add > Curve > XPBD Rope at the defaults (Air on), its pin off and
    Ground on, 20 cm up: it lands, comes to rest and sleeps within 1 s, and stays asleep
    (until 2026-12-06 a rope in the air never slept)."""
    scene.cursor.location = (-1.0, 0.0, 0.2)
    assert bpy.ops.xpbd.rope_add() == {"FINISHED"}
    rope = bpy.context.object
    assert rope.xpbd.use_air
    rope.xpbd.pin_first = False
    rope.xpbd.use_ground = True
    for frame in range(1, FRAMES + 1):
        scene.frame_set(frame)
    cache = _entry(rope).track.cache
    asleep = [f for f in range(1, FRAMES + 1)
              if cache[f].rest is not None and cache[f].rest.asleep.all()]
    assert asleep and asleep[0] <= 24 and asleep == list(range(asleep[0], FRAMES + 1)), asleep
    assert sim.status(rope) is None
