"""Ropes at rest sleep in the air too: sleeping is decided over the whole frame, keyed by the
forces and the air (the wind), not by the drag, which follows the ropes' own velocities
(``core.sleep.balance_key``). Until 2026-12-06 ropes in the air (the default for ropes from
Add > Curve > XPBD Rope) never slept."""

from __future__ import annotations

import numpy as np
import pytest

from xpbd_addon.core import Air, Model, Plane, step

R = 0.01
DT = 1.0 / 24.0
POINTS = 25
AIR = Air()


def crossed() -> Model:
    """Two ropes of 0.8 m, one lying on the ground, the other dropped across it from 12 cm."""
    s = np.linspace(-0.4, 0.4, POINTS)
    x = np.concatenate([np.stack([s, np.zeros(POINTS), np.full(POINTS, 0.05)], -1),
                        np.stack([np.zeros(POINTS), s, np.full(POINTS, 0.12)], -1)])
    segment = np.stack([np.arange(POINTS - 1), np.arange(1, POINTS)], -1)
    return Model(x, np.concatenate([segment, segment + POINTS]), np.full(2 * POINTS, 20.0),
                 1e-7, radius=R, sleep_speed=1e-3, damping=1.0, self_collision=True)


def asleep_counts(model, state, frames, wind=None, air=AIR):
    """How many of the two ropes slept through each of ``frames`` frames in ``air``."""
    counts = []
    for _ in range(frames):
        step(model, state, DT, 10, colliders=[Plane((0.0, 0.0, 0.0))], air=air, wind=wind)
        rest = state.rest
        counts.append(0 if rest is None else int(rest.asleep.reshape(2, POINTS)[:, 0].sum()))
    return counts


@pytest.mark.parametrize("air", [None, AIR])
def test_crossed_ropes_come_to_rest_and_sleep_in_the_air_as_without(air):
    """Both asleep by frame 30 (1.25 s), and asleep to the end, with air as without."""
    model = crossed()
    counts = asleep_counts(model, model.state(), 48, air=air)
    assert min(counts[30:]) == 2, counts


def test_in_the_air_a_wind_wakes_them_and_frames_from_the_cache_are_those_played():
    """Asleep in still air, the two ropes wake when a wind of 3 m/s starts (what their
    balance depends on changed) and the wind moves them (a little: the ground's friction holds
    them); frames computed from a copy of the state (x, v, the tensions and
    what sleeping carries) are those played, asleep and after the wind starts."""
    model = crossed()
    state = model.state()
    assert asleep_counts(model, state, 36)[-1] == 2
    cached = model.state()
    cached.x[:], cached.v[:], cached.rest = state.x, state.v, state.rest.copy()
    cached.tension = state.tension.copy()
    before = state.x.copy()
    wind = np.array([3.0, 0.0, 0.0])
    for index, gust in enumerate([None] * 6 + [wind] * 6):
        asleep = asleep_counts(model, state, 1, wind=gust)[0]
        asleep_counts(model, cached, 1, wind=gust)
        np.testing.assert_array_equal(cached.x, state.x)
        np.testing.assert_array_equal(cached.v, state.v)
        if index <= 6:  # (held by friction on the ground, a rope may sleep again later)
            assert asleep == (2 if gust is None else 0), index
    assert np.abs(state.x - before).max() > 1e-5  # the wind moved them (friction holds them)


def test_a_frame_in_the_air_is_one_call_and_asleep_it_solves_no_substep(monkeypatch):
    """The air's drag is a stage of the frame's substeps (``core.substep_forces``), not a call
    of ``step``'s machinery per substep: one frame, one pass of set-up (until 2026-12-07 ten,
    which made a default rope's frame 2.5 times dearer). Awake, the frame solves its ten
    substeps; with every rope asleep, none."""
    from xpbd_addon.core import solver
    from xpbd_addon.core.solve.substeps import RopeSubsteps

    frames, solves = [], []
    original_frame, original_solve = solver._advance_with_contacts, RopeSubsteps.solve

    def counted_frame(*args, **kwargs):
        frames.append(1)
        return original_frame(*args, **kwargs)

    def counted_solve(self, *args, **kwargs):
        solves.append(1)
        return original_solve(self, *args, **kwargs)

    monkeypatch.setattr(solver, "_advance_with_contacts", counted_frame)
    monkeypatch.setattr(RopeSubsteps, "solve", counted_solve)
    model = crossed()
    state = model.state()
    asleep_counts(model, state, 1)
    assert (len(frames), len(solves)) == (1, 10)  # awake: ten substeps in one call
    counts = asleep_counts(model, state, 39)
    assert counts[-1] == 2
    frames.clear()
    solves.clear()
    asleep_counts(model, state, 1)
    assert (len(frames), len(solves)) == (1, 0)
