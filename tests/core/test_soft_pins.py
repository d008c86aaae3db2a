"""Soft pins (``step_with_soft_pins``): particles held by springs to moving targets."""

from __future__ import annotations

import numpy as np
import pytest

from xpbd_addon import core
from xpbd_addon.core.soft_pins import SoftPins, spring_forces, step_with_soft_pins

N, MASS, G, DT = 16, 0.05, 9.81, 1 / 24


def _rope(n=N, compliance=1e-6, damping=0.0, strain_limit=0.002):
    """A rope of n points along x from the origin, first point pinned, 1.5 m."""
    x = np.zeros((n, 3))
    x[:, 0] = np.linspace(0.0, 1.5, n)
    inv = np.full(n, 1.0 / MASS)
    inv[0] = 0.0
    edges = np.array([(i, i + 1) for i in range(n - 1)])
    return core.Model(x, edges, inv, compliance, damping=damping, strain_limit=strain_limit)


def _energy(model, state):
    """Kinetic + gravitational + elastic energy [J] (elastic of the rope's segments only)."""
    m = np.where(model.particle_inv_mass > 0, 1.0 / np.maximum(model.particle_inv_mass, 1e-300),
                 0.0)
    kinetic = 0.5 * float((m[:, None] * state.v ** 2).sum())
    potential = float((m * G * state.x[:, 2]).sum())
    e = model.edge_index
    stretch = np.linalg.norm(state.x[e[:, 0]] - state.x[e[:, 1]], axis=1) - model.edge_rest_length
    return kinetic + potential + 0.5 * float((stretch ** 2 / model.edge_compliance).sum())


def _spring_energy(state, particle, target, alpha):
    return 0.5 * float(np.sum((state.x[particle] - target) ** 2)) / alpha


@pytest.mark.parametrize("substeps", [4, 20])
@pytest.mark.parametrize("alpha", [1e-3, 1e-5])
@pytest.mark.parametrize("limit", [0.002, None], ids=["strain limiter", "no limiter"])
@pytest.mark.parametrize("n", [N, 100])
def test_a_rope_held_by_a_spring_at_its_end_never_gains_energy(substeps, alpha, limit, n):
    """The rope starts straight and level, its first point pinned, its last held by a spring
    at its start place: it swings down between them; with no damping its total energy
    (spring included) never rises beyond the rounding of a long run."""
    model = _rope(n, strain_limit=limit)
    state = model.state()
    target = model.particle_rest_x[n - 1].copy()
    pins = SoftPins([n - 1], [target], alpha)
    start = _energy(model, state) + _spring_energy(state, n - 1, target, alpha)
    worst = -np.inf
    for _ in range(240):
        step_with_soft_pins(model, state, DT, substeps, pins)
        energy = _energy(model, state) + _spring_energy(state, n - 1, target, alpha)
        worst = max(worst, energy - start)
    assert np.isfinite(state.x).all()
    assert worst < 1e-3 * n * MASS * G * 1.5  # [J] nothing gained
    assert np.linalg.norm(state.x[n - 1] - target) < 0.5  # held near the target


def test_the_spring_stretches_by_compliance_times_its_load():
    """A rope hanging from a spring only (no pin) settles with the spring stretched by
    alpha * weight."""
    n, alpha = 10, 2e-3
    x = np.zeros((n, 3))
    x[:, 2] = -np.linspace(0.0, 1.0, n)
    model = core.Model(x, np.array([(i, i + 1) for i in range(n - 1)]), np.full(n, 1 / MASS),
                       1e-7, damping=3.0)
    state = model.state()
    pins = SoftPins([0], [[0.0, 0.0, 0.0]], alpha)
    for _ in range(240):
        step_with_soft_pins(model, state, DT, 20, pins)
    sag = -state.x[0, 2]
    assert sag == pytest.approx(alpha * n * MASS * G, rel=0.03)
    assert spring_forces(state, pins)[0] == pytest.approx(n * MASS * G, rel=0.03)
    assert np.abs(state.v).max() < 1e-3


def test_a_moving_target_carries_the_point():
    model = _rope(damping=1.0)
    state = model.state()
    a = model.particle_rest_x[N - 1].copy()
    for _frame in range(48):
        b = a + (0.0, 0.01, 0.0)
        step_with_soft_pins(model, state, DT, 10, SoftPins([N - 1], [b], 1e-6, start=[a]))
        a = b
    assert np.linalg.norm(state.x[N - 1] - a) < 0.01


def test_bad_soft_pins_name_the_argument_and_leave_the_state():
    model = _rope()
    state = model.state()
    before = state.x.copy()
    for pins, name in ((SoftPins([N], [[0, 0, 0]], 1e-3), "particles"),
                       (SoftPins([1, 1], [[0, 0, 0]] * 2, 1e-3), "particles"),
                       (SoftPins([1], [[np.nan, 0, 0]], 1e-3), "targets"),
                       (SoftPins([1], [[0, 0, 0]], 0.0), "compliance")):
        with pytest.raises(ValueError, match=f"soft_pins.{name}"):
            step_with_soft_pins(model, state, DT, 10, pins)
        np.testing.assert_array_equal(state.x, before)


@pytest.mark.parametrize("substeps", [4, 20])
def test_a_target_moving_within_frames_puts_in_no_more_than_its_spring_work(substeps):
    """A rope's free end held by a spring whose target sways 30 cm within every frame (an
    attachment's spring pulled along, 0.8 Hz), no damping: the energy the rope and the
    spring hold at each frame's end never exceeds the start's plus ``State.spring_work``,
    the work the moving target did (summed substep by substep); and that work is what
    raised it (without it the energy would be over budget)."""
    model = _rope(damping=0.0)
    state = model.state()
    end, alpha = N - 1, 1e-3
    rest = model.particle_rest_x[end]

    def target(t):
        return rest + np.array([0.0, 0.3 * np.sin(5.0 * t), 0.2 * np.sin(2.5 * t)])

    start_energy = _energy(model, state) + _spring_energy(state, end, target(0.0), alpha)
    over_without_work = 0.0
    for frame in range(72):
        begin, finish = target(frame * DT), target((frame + 1) * DT)
        step_with_soft_pins(model, state, DT, substeps,
                            SoftPins([end], finish[None], alpha, begin[None]))
        now = _energy(model, state) + _spring_energy(state, end, finish, alpha)
        budget = start_energy + float(state.spring_work.sum())
        assert now <= budget + 1e-9 * abs(budget), (frame, now, budget)
        over_without_work = max(over_without_work, now - start_energy)
    print(f"S = {substeps}: energy rose by up to {over_without_work:.3f} J, the target's "
          f"work {float(state.spring_work.sum()):.3f} J in all")
    assert over_without_work > 0.5  # the swaying target put energy in: it had to be counted
