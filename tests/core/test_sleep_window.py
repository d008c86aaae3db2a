"""Ropes at rest sleep within a second of coming to rest, on the ground or on each other, and
a slow swing is never frozen at its turning point (``core.sleep``).

A rope sleeps once every particle of it has moved less than ``sleep_speed`` x dt in each
frame for ``SLEEP_TIME`` (0.5 s): a pile whose contacts leave it creeping by hundredths of a
millimetre a frame sleeps, while a swing is that slow only for a moment around each turning
point.
"""

from __future__ import annotations

import numpy as np
import pytest

from xpbd_addon.core import Model, step
from xpbd_addon.core.collision import Plane

R = 0.005
DT = 1.0 / 24.0
SPEED = 1e-3  # [m/s] the default sleep_speed


def asleep_ropes(state, points):
    """How many ropes (of ``points`` particles each, in order) slept through the last frame."""
    if state.rest is None:
        return 0
    return int(state.rest.asleep.reshape(-1, points)[:, 0].sum())


def play(model, frames, substeps, colliders):
    """Positions after each frame, the largest move of a particle in each [m], and the ropes
    asleep in each."""
    state = model.state()
    xs, moves, asleep = [], [], []
    points = model.particle_count // max(1, len(model.decomposition.chains))
    for _ in range(frames):
        before = state.x.copy()
        step(model, state, DT, substeps, colliders=colliders)
        xs.append(state.x.copy())
        moves.append(float(np.linalg.norm(state.x - before, axis=1).max()))
        asleep.append(asleep_ropes(state, points))
    return xs, np.array(moves), asleep


def dropped_rope(sleep_speed, points=30):
    """A 1 m rope 10 cm above the ground, slightly slanted, 5 g a point."""
    s = np.linspace(0.0, 1.0, points)
    x = np.stack([s, 0.1 * s, 0.1 + 0.05 * s], -1)
    edges = np.stack([np.arange(points - 1), np.arange(1, points)], -1)
    return Model(x, edges, np.full(points, 200.0), 1e-7, radius=R, damping=0.2,
                 sleep_speed=sleep_speed)


def test_a_rope_dropped_on_the_ground_sleeps_within_a_second_of_coming_to_rest():
    ground = [Plane((0.0, 0.0, 0.0), static_friction=0.5, dynamic_friction=0.4)]
    frames = 120
    awake_x, awake_moves, never = play(dropped_rope(0.0), frames, 20, ground)
    assert max(never) == 0
    # at rest: from the frame after which it never again moves sleep_speed x dt in a frame
    moving = np.flatnonzero(awake_moves > SPEED * DT)
    rest_frame = int(moving[-1]) + 1
    assert rest_frame < frames - 40, "the rope must come to rest within the run"
    x, moves, asleep = play(dropped_rope(SPEED), frames, 20, ground)
    slept = int(np.flatnonzero(asleep)[0])
    assert all(asleep[slept:]), "once asleep it stays asleep"
    assert (slept - rest_frame) * DT <= 1.0, (rest_frame, slept)
    assert moves[slept:].max() == 0.0  # asleep, it does not move at all
    # it sleeps where it would rest awake (what it would still creep: < sleep_speed)
    assert np.abs(x[-1] - awake_x[-1]).max() < SPEED * (frames - rest_frame) * DT
    assert np.abs(x[-1][:, 2] - R).max() < 0.05 * R  # lying on the ground


def crossed_pile(count, sleep_speed, points=40, length=1.0, drop=0.0):
    """``count`` ropes along x on the ground 10 cm apart and ``count`` along y across them,
    10 g a point (``test_collision_stacks``' pile), ``drop`` [m] above where they rest."""
    s = np.linspace(-length / 2, length / 2, points)
    offsets = (np.arange(count) - (count - 1) / 2) * 0.1
    ropes = [np.stack([s, np.full(points, y), np.full(points, R + 1e-4 + drop)], -1)
             for y in offsets]
    ropes += [np.stack([np.full(points, x), s, np.full(points, 3 * R + 1e-4 + 2 * drop)], -1)
              for x in offsets]
    x = np.concatenate(ropes)
    base = np.arange(len(ropes))[:, None] * points
    edges = np.stack([base + np.arange(points - 1), base + np.arange(1, points)], -1)
    return Model(x, edges.reshape(-1, 2), np.full(len(x), 100.0), 1e-7, radius=R,
                 self_collision=True, damping=0.2, sleep_speed=sleep_speed)


@pytest.mark.parametrize("count, points, length, drop, seconds", [
    (4, 40, 1.0, 0.0, 2.0),  # laid on each other: all asleep after 0.54 s
    (10, 60, 1.2, 0.015, 10.0),  # dropped, as ``benchmarks/bench_pile.py``'s: 5.5 s
])
def test_a_pile_of_crossed_ropes_sleeps_and_then_costs_nothing(count, points, length, drop,
                                                                 seconds):
    """Crossed ropes on each other and the floor: the contacts between awake ropes leave
    them creeping (the large pile by 0.2-7 mm/s for as long as it plays), but the ropes on
    the floor come to rest and sleep, the ropes on them then rest on static ropes and sleep
    too: the whole pile within ``seconds``. Then no rope moves, frame after frame."""
    ground = [Plane((0.0, 0.0, 0.0))]
    frames = int(seconds * 24)
    _, moves, asleep = play(crossed_pile(count, SPEED, points, length, drop), frames, 20,
                            ground)
    assert asleep[-1] == 2 * count, asleep[-24:]
    # the ropes on the floor first, then those on them (on static ropes they stop creeping)
    slept = int(np.flatnonzero(np.array(asleep) < 2 * count)[-1]) + 1
    assert moves[slept:].max() == 0.0


def swinging_rope(sleep_speed, tip, points=20, length=2.0):
    """A 2 m rope pinned at its top, released straight but slanted so that its free end is
    ``tip`` [m] to the side: it swings with a period of about 2 s. 1 m above the ground,
    which it never touches (the frame has contacts, so sleeping is on)."""
    s = np.linspace(0.0, 1.0, points)
    x = np.stack([tip * s, np.zeros(points), 1.0 + length * (1.0 - s)], -1)
    edges = np.stack([np.arange(points - 1), np.arange(1, points)], -1)
    w = np.full(points, 20.0)
    w[0] = 0.0
    return Model(x, edges, w, 1e-7, radius=R, damping=0.0, sleep_speed=sleep_speed)


def test_a_slow_small_swing_is_never_frozen_at_its_turning_point():
    """Released at rest, the rope starts at a turning point: its first frame moves its tip
    by a dt^2 / 2 = 26 um, less than sleep_speed x dt (42 um). Over the 0.5 s the sleep
    asks for, the swing moves far more, so it never sleeps: ten turning points in 10 s, the
    same bits as with sleeping off."""
    ground = [Plane((0.0, 0.0, 0.0))]
    frames = 240
    x, _, asleep = play(swinging_rope(SPEED, 0.003), frames, 20, ground)
    awake_x, _, _ = play(swinging_rope(0.0, 0.003), frames, 20, ground)
    assert max(asleep) == 0
    for frame, (a, b) in enumerate(zip(x, awake_x, strict=True)):
        np.testing.assert_array_equal(a, b, err_msg=f"frame {frame}")
    tips = np.array([p[-1, 0] for p in x])
    assert tips[-48:].max() > 0.002 and tips[-48:].min() < -0.002  # still swinging
