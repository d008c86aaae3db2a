"""Rope-rope searches that look past the frame's end (``contacts.constants.CARRY_FRAMES``):
where the particles move slowly, a search's pairs hold for the next frames too, and a frame
that goes on from the last searches nothing at its start. The pairs are candidates only:
every contact is among them either way, so the ropes move the same bits."""

from __future__ import annotations

import math

import numpy as np
import pytest

from xpbd_addon.core import step
from xpbd_addon.core.collision import Plane
from xpbd_addon.core.contacts import constants
from xpbd_addon.core.contacts.kernels_segments import frames_past_end

from .ropes import crossed_ropes

FRAME = 1.0 / 24.0


def _past_end(velocity, acceleration, remaining=FRAME, most=4, reach=0.005, far=0.04,
              spare=0):
    velocity = np.asarray(velocity, dtype=float).reshape(-1, 3)
    acceleration = np.asarray(acceleration, dtype=float).reshape(-1, 3)
    ids = np.arange(len(velocity), dtype=np.int64)
    return frames_past_end(velocity, acceleration, ids, remaining, FRAME, most, reach, far,
                           spare)


def test_still_particles_let_the_pairs_hold_the_longest():
    assert _past_end(np.zeros((5, 3)), np.zeros((5, 3))) == 4


@pytest.mark.parametrize("speed", [0.01, 0.03, 0.05, 0.2])
def test_the_look_ahead_ends_before_a_particle_moves_its_reach(speed):
    """|v| T within 5 mm, T = the rest of the frame + k frames."""
    frames = _past_end([[speed, 0.0, 0.0]], np.zeros(3))
    expected = min(max(math.floor((0.005 / speed - FRAME) / FRAME), 0), 4)
    assert frames == expected
    assert speed * (FRAME + frames * FRAME) <= 0.005 or frames == 0


def test_a_falling_particle_keeps_the_search_within_its_frame():
    """Gravity from rest covers 4 cm in 0.09 s: past the frame's end only by one frame,
    and not at all within 5 mm."""
    assert _past_end([[0.0, 0.0, 0.0]], [[0.0, 0.0, -9.81]]) == 0
    assert _past_end([[0.0, 0.0, 0.0]], [[0.0, 0.0, -9.81]], reach=0.04) == 1


def test_a_few_particles_past_their_reach_are_spared_but_none_past_far():
    velocity = np.zeros((100, 3))
    velocity[0] = (0.05, 0.0, 0.0)  # 5 mm in 0.1 s, 4 cm in 0.8 s
    assert _past_end(velocity, np.zeros((100, 3)), spare=0) == 1
    assert _past_end(velocity, np.zeros((100, 3)), spare=1) == 4
    velocity[0] = (0.5, 0.0, 0.0)  # 4 cm in 0.08 s
    assert _past_end(velocity, np.zeros((100, 3)), spare=1) == 0


def _play(frames: int, substeps: int,
          nudge_at: int | None = None) -> tuple[list[np.ndarray], int]:
    """The crossed ropes landing on each other and on the ground; at frame
    ``nudge_at`` the last rope is pushed sideways (0.3 m/s) across the others. Returns
    every frame's x and v, and how many frames began with pairs holding past their start's
    frame (their pairs went on without a search)."""
    model = crossed_ropes()
    state = model.state()
    ground = [Plane((0.0, 0.0, -0.01))]
    out, carried = [], 0
    for frame in range(frames):
        if frame == nudge_at:
            state.v[-30:] += (0.3, 0.0, 0.0)
        carry = state.workspace.pair_carry if state.workspace is not None else None
        if carry is not None and carry.pair_until > 2.0 * carry.span * (1.0 - 1e-9):
            carried += 1
        step(model, state, FRAME, substeps, colliders=ground)
        out.append(np.concatenate([state.x, state.v]))
    return out, carried


@pytest.mark.parametrize("substeps, nudge_at", [(10, None), (10, 40), (5, None)])
def test_ropes_move_the_same_bits_with_pairs_held_past_the_frame(monkeypatch, substeps,
                                                                 nudge_at):
    """Landing, lying on each other, and one rope pushed across the others after they lie:
    the same x and v every frame with the look past the frame's end as without it, and the
    look ahead saves searches (frames start with their pairs holding). At 5 substeps the
    contacts stretch the ropes and they are solved again, with the contacts between them
    held: the holds must not depend on when a list of pairs was found."""
    held, carried = _play(56, substeps, nudge_at)
    monkeypatch.setattr(constants, "CARRY_FRAMES", 0)
    plain, none_carried = _play(56, substeps, nudge_at)
    assert none_carried == 0
    assert carried >= 5, f"only {carried} frames went on with their pairs"
    for index, (a, b) in enumerate(zip(held, plain, strict=True)):
        assert np.array_equal(a, b), f"frame {index}"
    assert held[-1][:len(held[-1]) // 2, 2].min() > -0.01, "the ropes lie on the ground"


def _slide(frames: int, speed: float, gap: float) -> list[np.ndarray]:
    """A rope lying on a frictionless ground and a second one beside it, ``gap`` [m] apart,
    sliding towards it at ``speed`` [m/s]; a third lies 10 cm away (most particles are at
    rest, so the searches share no motion and a frame can go on with the last one's)."""
    from xpbd_addon.core import Model

    t = np.linspace(-0.15, 0.15, 30)
    x = np.concatenate([np.stack([np.zeros(30), t, np.zeros(30)], -1),
                        np.stack([np.full(30, -2 * 0.005 - gap), t, np.zeros(30)], -1),
                        np.stack([np.full(30, 0.1), t, np.zeros(30)], -1)])
    edges = [(30 * r + i, 30 * r + i + 1) for r in range(3) for i in range(29)]
    model = Model(x, np.array(edges), np.full(90, 100.0), 1e-7, radius=0.005,
                  self_collision=True, self_friction=0.0, damping=0.0)
    state = model.state()
    state.v[30:60] = (speed, 0.0, 0.0)
    ground = [Plane((0.0, 0.0, -0.005), static_friction=0.0, dynamic_friction=0.0)]
    out = []
    for _ in range(frames):
        step(model, state, FRAME, 10, colliders=ground)
        out.append(np.concatenate([state.x, state.v]))
    return out


@pytest.mark.parametrize("speed, gap, reach", [(0.03, 0.006, None), (0.1, 0.011, 8.0)])
def test_a_slowly_sliding_rope_meets_the_next_as_without_the_look_ahead(monkeypatch, speed,
                                                                       gap, reach):
    """The pairs found frames before the touch hold it: the same bits as searching every
    frame; the sliding rope stops at the other, their centre lines 2 radii apart. At 3 cm/s
    it touches in the fifth frame; at 10 cm/s (a reach of 8 radii, so that the searches
    look past the frame's end) in the third, within the first search's look ahead, and
    its boxes must hold the whole look ahead for the pair to be found."""
    if reach is not None:
        monkeypatch.setattr(constants, "CARRY_REACH", reach)
    held = _slide(16, speed, gap)
    monkeypatch.setattr(constants, "CARRY_FRAMES", 0)
    plain = _slide(16, speed, gap)
    for index, (a, b) in enumerate(zip(held, plain, strict=True)):
        assert np.array_equal(a, b), f"frame {index}"
    x = held[-1][:90]
    assert x[:30, 0].mean() > 0.0, "the resting rope was pushed"
    assert 2 * 0.005 * 0.95 < (x[:30, 0] - x[30:60, 0]).min() < 2 * 0.005 * 1.1
