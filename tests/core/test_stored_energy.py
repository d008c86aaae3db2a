"""The energy a rope stores in its constraints (core/energy.py): what a check of the total
energy must count, so that a rope releasing the bending energy it was modelled with is not
taken for an unstable one."""

from __future__ import annotations

import numpy as np
import pytest

from xpbd_addon.core import Model, step
from xpbd_addon.core.energy import bending_energy, stored_energy, stretch_energy

MASS = 0.05  # [kg] per point


def _curl(points: int, turn_degrees: float, length: float = 1.0) -> np.ndarray:
    """Points of an arc of ``length`` [m] turning through ``turn_degrees``, in the xz plane."""
    turn = np.radians(turn_degrees)
    radius = length / turn
    angle = np.linspace(0.0, turn, points)
    return np.stack([radius * np.sin(angle), np.zeros(points), radius * (1 - np.cos(angle))], 1)


def test_a_straight_rope_at_its_rest_length_stores_nothing():
    x = np.zeros((5, 3))
    x[:, 0] = np.linspace(0.0, 1.0, 5)
    model = Model(x, [(i, i + 1) for i in range(4)], np.ones(5), 1e-3, bending_compliance=0.1)
    assert stored_energy(model, x) == 0.0


def test_bending_energy_is_half_the_squared_constraint_over_the_compliance():
    # three points, the middle one lifted: C = t_after - t_before with t = d / L
    x = np.array([[0.0, 0.0, 0.0], [0.5, 0.0, 0.0], [1.0, 0.0, 0.0]])
    alpha_b = 0.02  # [1/(N m)]
    model = Model(x, [(0, 1), (1, 2)], np.ones(3), 0.0, bending_compliance=alpha_b)
    bent = x.copy()
    bent[1, 2] = 0.1
    c = (bent[2] - bent[1]) / 0.5 - (bent[1] - bent[0]) / 0.5
    assert bending_energy(model, bent) == pytest.approx(0.5 * (c @ c) / alpha_b, rel=1e-12)
    # only the interior point bends: the ends have no row
    assert bending_energy(model, x) == 0.0


def test_stretch_energy_is_half_the_squared_stretch_over_the_compliance():
    x = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    alpha = 1e-3  # [m/N]
    model = Model(x, [(0, 1)], np.ones(2), alpha)
    stretched = x.copy()
    stretched[1, 0] = 1.01
    assert stretch_energy(model, stretched) == pytest.approx(0.5 * 0.01 ** 2 / alpha, rel=1e-9)
    # a segment of zero compliance holds its length: it stores nothing
    rigid = Model(x, [(0, 1)], np.ones(2), 0.0)
    assert stretch_energy(rigid, stretched) == 0.0


@pytest.mark.parametrize("substeps", [5, 20, 80])
def test_a_released_curl_turns_its_bending_energy_into_motion_and_never_gains(substeps):
    """Weightless, no damping: a curl modelled with bending towards straight uncoils. Its
    kinetic energy comes from the bending energy it was made with (a check that left that
    out saw energy from nowhere); the total, kinetic + stored, does not rise beyond the
    splitting of stretch and bending within a substep (measured: +0.17 % of the stored
    energy at 5 substeps, none at 20 and 80)."""
    x = _curl(24, 241.0)
    inv_mass = np.full(len(x), 1.0 / MASS)
    inv_mass[0] = 0.0
    segment = float(np.linalg.norm(x[1] - x[0]))
    model = Model(x, [(i, i + 1) for i in range(len(x) - 1)], inv_mass, 0.0,
                  bending_compliance=segment / 0.05)  # EI = 0.05 N m^2
    state = model.state()
    start = stored_energy(model, state.x)
    assert start > 0.0
    most_kinetic, worst_rise = 0.0, -np.inf
    for _ in range(48):
        step(model, state, 1 / 24, substeps, gravity=(0.0, 0.0, 0.0))
        kinetic = 0.5 * MASS * float((state.v[1:] ** 2).sum())
        most_kinetic = max(most_kinetic, kinetic)
        worst_rise = max(worst_rise, kinetic + stored_energy(model, state.x) - start)
    assert most_kinetic > 0.1 * start  # it moved: the stored energy was released
    assert worst_rise <= 0.01 * start
