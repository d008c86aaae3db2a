"""Sleeping ropes in Blender: what a rope carries for sleeping (``core.sleep.Rest``: how long
it has been at rest, whether it sleeps) is part of each cached frame, so a frame computed from
a cached frame equals the frame played in order, bit for bit, also while ropes sleep."""

from __future__ import annotations

import numpy as np
import pytest

from xpbd_addon.blender.frame import sim

from . import ropes

R = 0.01  # rope radius [m]
FRAMES = 48


def _lying(scene, name, height, turn=0.0):
    """A free 0.8 m rope ``height`` [m] above a ground plane, along x (or turned)."""
    obj = ropes.curve_rope(scene, "POLY", n=25, length=0.8, name=name)
    obj.location = (-0.4 * np.cos(turn), -0.4 * np.sin(turn), height)
    obj.rotation_euler[2] = turn
    s = obj.xpbd
    s.pin_first = False
    s.radius = R
    s.use_ground = True
    s.use_self_collision = True
    s.damping = 1.0
    return obj


def _entry(obj):
    return sim.REGISTRY[obj.session_uid]


@pytest.mark.parametrize("count", [1, 2])
def test_frames_computed_from_cached_frames_of_sleeping_ropes_equal_playback(scene, count):
    """One rope dropped on the ground (a run of one), or two crossed (a run of two: the
    ropes' rest is joined and split like x and v): they come to rest and sleep; then the
    frames after frame 12 are dropped from the cache and computed again from it."""
    objects = [_lying(scene, "under", 0.05)]
    if count == 2:
        objects.append(_lying(scene, "over", 0.12, turn=np.pi / 2))
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
