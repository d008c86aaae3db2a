"""Rods sleep as ropes do (``core.sleep``): a rod at rest on the ground sleeps within a second
of coming to rest and then neither moves nor turns its frames, a rod that lies still while
its frames turn (a twist running along it) stays awake, a held end that turns wakes it, and
a frame from a copied state is the frame played in order.
"""

from __future__ import annotations

import numpy as np

from xpbd_addon.core import Model, Rod, step
from xpbd_addon.core.collision import Plane

R = 0.005
DT = 1.0 / 24.0
SPEED = 1e-3  # [m/s] the default sleep_speed
POINTS = 30
GROUND = [Plane((0.0, 0.0, 0.0), static_friction=0.5, dynamic_friction=0.4)]


def rod(sleep_speed, *, shape="wavy", pinned=False):
    """A 1 m rod of 30 points, 5 g a point, with a modelled bend: ``shape`` "wavy", 10 cm
    above the ground and slanted (it drops onto it and keeps its waves), or "lying": straight
    on the ground; ``pinned``: its first point held."""
    s = np.linspace(0.0, 1.0, POINTS)
    if shape == "wavy":
        x = np.stack([s, 0.1 * s + 0.05 * np.sin(6.0 * s), 0.1 + 0.05 * s], -1)
    else:
        x = np.stack([s, np.zeros(POINTS), np.full(POINTS, R)], -1)
    edges = np.stack([np.arange(POINTS - 1), np.arange(1, POINTS)], -1)
    w = np.full(POINTS, 200.0)
    if pinned:
        w[0] = 0.0
    return Model(x, edges, w, 1e-7, radius=R, damping=0.2, sleep_speed=sleep_speed,
                 bending_compliance=1e-2, rod=Rod())


def play(model, frames, state=None, **kwargs):
    """(positions, frame normals, asleep) after each frame."""
    state = model.state() if state is None else state
    xs, normals, asleep = [], [], []
    for _ in range(frames):
        step(model, state, DT, 20, colliders=GROUND, **kwargs)
        xs.append(state.x.copy())
        normals.append(state.rod.normal.copy())
        asleep.append(bool(state.rest is not None and state.rest.asleep.any()))
    return xs, normals, asleep


def test_a_rod_dropped_on_the_ground_sleeps_within_a_second_of_coming_to_rest():
    frames = 48
    awake_x, awake_normals, never = play(rod(0.0), frames)
    assert not any(never)
    moves = [np.abs(b - a).max() for a, b in zip(awake_x, awake_x[1:], strict=False)]
    rest_frame = 1 + max(i for i, m in enumerate(moves) if m > SPEED * DT) + 1
    assert rest_frame < frames // 2, "the rod must come to rest within the run"
    x, normals, asleep = play(rod(SPEED), frames)
    slept = asleep.index(True)
    assert all(asleep[slept:]), "once asleep it stays asleep"
    assert (slept - rest_frame) * DT <= 1.0, (rest_frame, slept)
    for frame in range(slept + 1, frames):  # asleep: not a bit of it moves or turns
        np.testing.assert_array_equal(x[frame], x[slept])
        np.testing.assert_array_equal(normals[frame], normals[slept])
    # where it rests awake, its waves kept
    assert np.abs(x[-1] - awake_x[-1]).max() < SPEED * (frames - rest_frame) * DT
    assert np.abs(normals[-1] - awake_normals[-1]).max() < 1e-3


def test_a_rod_lying_still_while_a_twist_runs_along_it_stays_awake():
    """A straight rod on the ground with half its segments turning at 20 rad/s: its
    centreline does not move at all, but its frames turn (the twist runs along it and
    slowly dies away), faster than ``sleep_speed`` at its surface: it is not frozen, and
    turns as it does with sleeping off."""
    runs = []
    for sleep_speed in (0.0, SPEED):
        model = rod(sleep_speed, shape="lying")
        state = model.state()
        step(model, state, DT, 20, colliders=GROUND)
        state.rod.twist_rate[:POINTS // 2] = 20.0
        x, normals, asleep = play(model, 48, state)
        runs.append((x, normals))
        assert np.abs(x[-1] - x[0]).max() < 1e-9  # the centreline lies still
    assert not any(asleep)
    for a, b in zip(runs[0][1], runs[1][1], strict=True):
        np.testing.assert_array_equal(a, b)
    assert np.abs(runs[1][1][-1] - runs[1][1][-2]).max() > 1e-3  # still turning


def test_a_sleeping_rod_wakes_when_its_held_end_turns():
    """A rod held at one end, asleep on the ground: the hand holding it rolls its end by a
    quarter turn over a frame (``pin_turns``). It wakes, and the turn travels down it."""
    model = rod(SPEED, shape="lying", pinned=True)
    state = model.state()
    _, normals, asleep = play(model, 24, state)
    assert asleep[-1]
    turns = np.full(POINTS, np.nan)
    turns[0] = np.pi / 2
    _, turned, woke = play(model, 3, state, pin_turns=turns)
    assert not woke[0]
    # the frames beyond the held end turned too
    assert np.abs(turned[-1][1:POINTS // 2] - normals[-1][1:POINTS // 2]).max() > 1e-2


def test_a_frame_of_a_rod_from_a_copied_state_equals_the_frame_played_in_order():
    """Copied just after landing, before it sleeps: the copy's frames, through its falling
    asleep, are those played in order, bit for bit (x, the frames, the rest)."""
    model = rod(SPEED)
    state = model.state()
    play(model, 4, state)
    copied = state.copy()
    played, played_normals, played_asleep = play(model, 8, state)
    again, again_normals, again_asleep = play(model, 8, copied)
    assert played_asleep == again_asleep and any(played_asleep)
    for a, b in zip(played + played_normals, again + again_normals, strict=True):
        np.testing.assert_array_equal(a, b)


def test_a_rod_asleep_beside_an_awake_one_keeps_its_frames():
    """Two rods in one Model: one asleep on the ground, the other held 1 m away and swinging
    (awake, its frames carried along every substep). The lying one was left turning at 0.1
    rad/s (0.5 mm/s at its surface, slower than ``sleep_speed``): it falls asleep, and
    asleep its frames, twist rates and rest shape stay as they are, bit for bit (its twist
    rate 0, as its velocities)."""
    s = np.linspace(0.0, 1.0, POINTS)
    lying = np.stack([s, np.zeros(POINTS), np.full(POINTS, R)], -1)
    swinging = np.stack([s, np.full(POINTS, 1.0), np.full(POINTS, 1.0)], -1)
    x = np.concatenate([lying, swinging])
    base = np.arange(2)[:, None] * POINTS
    edges = np.stack([base + np.arange(POINTS - 1), base + np.arange(1, POINTS)], -1)
    w = np.full(2 * POINTS, 200.0)
    w[POINTS] = 0.0  # the swinging rod's first point held
    model = Model(x, edges.reshape(-1, 2), w, 1e-7, radius=R, damping=0.2,
                  bending_compliance=1e-2, rod=Rod())
    state = model.state()
    step(model, state, DT, 20, colliders=GROUND)
    state.rod.twist_rate[:POINTS - 1] = 0.1
    for _ in range(11):
        step(model, state, DT, 20, colliders=GROUND)
    lying_rows = slice(0, POINTS)
    assert state.rest.asleep[lying_rows].all() and not state.rest.asleep[POINTS:].any()
    kept = state.rod.part(0, POINTS)
    assert not kept.twist_rate.any()
    for _ in range(6):
        step(model, state, DT, 20, colliders=GROUND)
        assert state.rest.asleep[lying_rows].all()
        now = state.rod.part(0, POINTS)
        for name in ("normal", "twist_rate", "bend_rest", "twist_rest"):
            np.testing.assert_array_equal(getattr(now, name), getattr(kept, name), name)


def test_a_still_rod_takes_its_last_substep_count_and_one_moved_asks_again(monkeypatch):
    """The substeps a rod's pull needs (``rod.least_substeps``, 0.5 ms a frame at 1,200
    points) are computed again only when the rod moved: a sleeping rod's frames take the
    last answer. A point moved by the caller asks again, and the frame equals that of a
    copied state, which has nothing kept."""
    from xpbd_addon.core import solver

    model = rod(SPEED)
    state = model.state()
    _, _, asleep = play(model, 24, state)
    assert asleep[-1]
    asked = []
    least = solver.least_substeps

    def counted(*args, **kwargs):
        asked.append(1)
        return least(*args, **kwargs)

    monkeypatch.setattr(solver, "least_substeps", counted)
    play(model, 3, state)
    assert not asked
    state.x[POINTS // 2, 2] += 0.02  # lifted: it wakes and falls back
    copy = state.copy()
    play(model, 1, state)
    play(model, 1, copy)
    assert len(asked) == 2
    np.testing.assert_array_equal(state.x, copy.x)
    np.testing.assert_array_equal(state.rod.normal, copy.rod.normal)
