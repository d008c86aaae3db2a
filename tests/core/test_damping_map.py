"""A damping map (``Model(damping=(N,))``): each particle's speed decays at its own rate,
only ever taking energy out; a uniform map is the scalar, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from xpbd_addon.core import Model, step

from .ropes import hanging_chain


def _two_pairs(damping, solver="direct"):
    """Two free two-point ropes side by side (particles 0-1 and 2-3)."""
    x = np.array([[0.0, 0.0, 0.0], [0.1, 0.0, 0.0], [0.0, 1.0, 0.0], [0.1, 1.0, 0.0]])
    return Model(x, [(0, 1), (2, 3)], np.ones(4), 0.0, damping=damping, solver=solver)


@pytest.mark.parametrize("solver", ["direct", "sweep"])
@pytest.mark.parametrize("substeps", [1, 10])
def test_each_particle_slows_at_its_own_rate(substeps, solver):
    rates = np.array([1.0, 1.0, 5.0, 5.0])  # [1/s]
    model = _two_pairs(rates, solver)
    assert model.damping == 1.0 and model.particle_damping is not None
    state = model.state()
    state.v[:] = (0.0, 0.0, 2.0)  # every rope moving as a whole: no constraint acts
    for _ in range(24):
        step(model, state, 1 / 24, substeps, gravity=(0.0, 0.0, 0.0))
    speed = np.linalg.norm(state.v, axis=1)
    np.testing.assert_allclose(speed, 2.0 * np.exp(-rates), rtol=1e-9)


def test_a_uniform_map_is_the_scalar_bit_for_bit():
    chain_a = hanging_chain(12, 0.1, 1e-6, damping=0.7)
    chain_b = Model(chain_a.particle_rest_x, chain_a.edge_index, chain_a.particle_inv_mass,
                    1e-6, damping=np.full(12, 0.7))
    assert chain_b.particle_damping is None
    a, b = chain_a.state(), chain_b.state()
    a.x[-1, 0] = b.x[-1, 0] = 0.3
    for _ in range(24):
        step(chain_a, a, 1 / 24, 10)
        step(chain_b, b, 1 / 24, 10)
    assert np.array_equal(a.x, b.x) and np.array_equal(a.v, b.v)


def test_a_swinging_rope_with_a_damping_map_never_gains_energy():
    model = hanging_chain(20, 0.1, 0.0)
    rates = np.linspace(0.0, 3.0, 20)  # from none at the pin to 3 /s at the tip
    model = Model(model.particle_rest_x, model.edge_index, model.particle_inv_mass, 0.0,
                  damping=rates)
    state = model.state()
    state.x[:, 0], state.x[:, 2] = state.x[:, 2] * -1.0, 0.0  # released horizontal
    mass = 1.0
    energies = []
    for _ in range(96):
        step(model, state, 1 / 24, 10)
        free = model.particle_inv_mass > 0
        energies.append(float((0.5 * mass * (state.v[free] ** 2).sum(axis=1)
                               + mass * 9.81 * state.x[free, 2]).sum()))
    assert np.all(np.diff(energies) <= 1e-9)
    # and more than the same rope at the least rate loses
    still = hanging_chain(20, 0.1, 0.0)
    plain = still.state()
    plain.x[:, 0], plain.x[:, 2] = plain.x[:, 2] * -1.0, 0.0
    for _ in range(96):
        step(still, plain, 1 / 24, 10)
    kept = float(0.5 * (plain.v[1:] ** 2).sum() + 9.81 * plain.x[1:, 2].sum())
    assert energies[-1] < kept


def test_the_map_survives_a_change_of_the_rope():
    rates = np.array([1.0, 1.0, 5.0, 5.0])
    changed = _two_pairs(rates).with_changes(removed_edges=[0])
    assert np.array_equal(changed.particle_damping, rates)


@pytest.mark.parametrize("bad", [np.array([1.0, -1.0, 0.0, 0.0]), np.array([1.0, np.nan, 0, 0]),
                                 np.ones(3)])
def test_a_bad_map_is_refused_naming_damping(bad):
    with pytest.raises(ValueError, match="damping"):
        _two_pairs(bad)


def test_a_pinned_particles_rate_is_ignored_while_its_pin_moves():
    """A damping map is applied at each substep's start to the free particles only: a pinned
    particle follows its target's straight path whatever its rate (here 40 1/s), so the rope
    moves as with the scalar, bit for bit."""
    scalar = hanging_chain(12, 0.1, 1e-6, damping=0.5)
    rates = np.full(12, 0.5)
    rates[scalar.particle_inv_mass == 0.0] = 40.0
    mapped = Model(scalar.particle_rest_x, scalar.edge_index, scalar.particle_inv_mass, 1e-6,
                   damping=rates)
    assert mapped.particle_damping is not None
    a, b = scalar.state(), mapped.state()
    target = scalar.particle_rest_x.copy()
    for frame in range(24):
        target[scalar.particle_inv_mass == 0.0, 0] = 0.05 * (frame + 1)
        step(scalar, a, 1 / 24, 10, pin_targets=target)
        step(mapped, b, 1 / 24, 10, pin_targets=target)
    assert np.abs(a.x[:, 0]).max() > 0.5  # the pin carried the rope
    assert np.array_equal(a.x, b.x) and np.array_equal(a.v, b.v)
