"""Ropes at rest sleep in the air too: a frame with air is stepped one substep per call
(``solver._advance_each_substep``), and sleeping is decided over the whole frame
(``core.sleep.SubstepSleep``): from its start, keyed by the forces and the air (the wind), not
by the drag, which follows the ropes' own velocities. Until 2026-12-06 ropes in the air (the
default for ropes from Add > Curve > XPBD Rope) never slept."""

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
    them); frames computed from a copy of the state (x, v and
    what sleeping carries) are those played, asleep and after the wind starts."""
    model = crossed()
    state = model.state()
    assert asleep_counts(model, state, 36)[-1] == 2
    cached = model.state()
    cached.x[:], cached.v[:], cached.rest = state.x, state.v, state.rest.copy()
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


def test_a_frame_with_every_rope_asleep_makes_two_calls_and_the_same_bits(monkeypatch):
    """Once every rope sleeps, a frame in the air calls the substep twice, not ten times (the
    first finds them all asleep, the last measures the frame): the states are those of every
    call made, bit for bit, and so is when they sleep."""
    from xpbd_addon.core import solver

    class EveryCall(solver.SubstepSleep):
        """A frame's sleeping that never lets calls be passed over"""

        @property
        def everything_asleep(self):
            return False

        @everything_asleep.setter
        def everything_asleep(self, value):
            pass

    def play(frames):
        model = crossed()
        state = model.state()
        counts = asleep_counts(model, state, frames)
        return counts, model, state

    calls = []
    original = solver._advance_with_contacts

    def counted(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(solver, "_advance_with_contacts", counted)
    skipped_counts, model, skipped = play(40)
    calls.clear()
    asleep_counts(model, model.state(), 1)
    assert len(calls) == 10  # (awake: a call a substep)
    calls.clear()
    asleep_counts(model, skipped.copy(), 1)
    assert len(calls) == 2  # every rope asleep (from frame 30, above)
    skipped_counts, model, skipped = play(40)
    monkeypatch.setattr(solver, "SubstepSleep", EveryCall)
    every_counts, model, every = play(40)
    calls.clear()
    asleep_counts(model, every, 1)
    assert len(calls) == 10
    assert skipped_counts == every_counts and skipped_counts[-1] == 2
    np.testing.assert_array_equal(skipped.x, every.x)
    np.testing.assert_array_equal(skipped.v, every.v)
