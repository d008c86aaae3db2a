"""Bending stiffness and materials given per unit length (``core.material``): a clamped
cable droops as the Euler-Bernoulli cantilever does, the same at any substep count and any
resolution, and a rope's stretch under its own weight does not depend on its point count."""

import numpy as np
import pytest

from xpbd_addon.core import Model, step
from xpbd_addon.core.material import PRESETS, RopeMaterial, rope_parameters

DT = 1.0 / 24.0
G = 9.81


def cantilever_droop(points: int, substeps: int, bend_stiffness: float, *, free_length=0.5,
                     density=0.1) -> float:
    """Tip droop [m] of a cable clamped by its first two points, the free part horizontal."""
    segment = free_length / (points - 2)
    x = np.zeros((points, 3))
    x[:, 0] = segment * (np.arange(points) - 1)
    pinned = np.zeros(points, dtype=bool)
    pinned[:2] = True
    edges = [(i, i + 1) for i in range(points - 1)]
    inv_mass, compliance, bending = rope_parameters(
        x, edges, RopeMaterial(density, None, bend_stiffness), pinned=pinned)
    model = Model(x, edges, inv_mass, compliance, bending_compliance=bending, damping=3.0)
    state = model.state()
    for _ in range(24 * 8):
        step(model, state, DT, substeps)
    assert np.abs(state.v).max() < 1e-5, "the cable has not come to rest"
    return float(-state.x[-1, 2])


@pytest.mark.parametrize("bend_stiffness", [1.0, 0.1])
def test_cantilever_droop_does_not_depend_on_substeps(bend_stiffness):
    coarse = cantilever_droop(20, 10, bend_stiffness)
    fine = cantilever_droop(20, 40, bend_stiffness)
    assert coarse == pytest.approx(fine, rel=0.05)


@pytest.mark.parametrize("bend_stiffness", [1.0, 0.1])
def test_cantilever_droop_does_not_depend_on_resolution(bend_stiffness):
    assert cantilever_droop(20, 20, bend_stiffness) == pytest.approx(
        cantilever_droop(200, 20, bend_stiffness), rel=0.05)


def test_small_droop_matches_beam_theory():
    """delta = q L^4 / (8 EI) for a uniformly loaded cantilever (small deflection)."""
    q, length, stiffness = 0.1 * G, 0.5, 1.0
    assert cantilever_droop(50, 20, stiffness) == pytest.approx(
        q * length**4 / (8 * stiffness), rel=0.02)


def test_a_chain_without_bending_hangs_straight_down():
    points = 20
    x = np.zeros((points, 3))
    x[:, 0] = np.linspace(0.0, 0.5, points)
    pinned = np.zeros(points, dtype=bool)
    pinned[:2] = True
    edges = [(i, i + 1) for i in range(points - 1)]
    inv_mass, compliance, bending = rope_parameters(x, edges, PRESETS["chain"], pinned=pinned)
    assert bending is None
    model = Model(x, edges, inv_mass, compliance, damping=3.0)
    state = model.state()
    for _ in range(24 * 8):
        step(model, state, DT, 20)
    assert -state.x[-1, 2] > 0.4  # it falls and hangs, nothing holds it up


def test_bending_is_rotation_invariant():
    """A straight stiff cable spinning freely (no gravity) stays straight and keeps its speed."""
    points = 30
    x = np.zeros((points, 3))
    x[:, 0] = np.linspace(-0.5, 0.5, points)
    edges = [(i, i + 1) for i in range(points - 1)]
    inv_mass, compliance, bending = rope_parameters(x, edges, RopeMaterial(0.1, None, 0.5))
    model = Model(x, edges, inv_mass, compliance, bending_compliance=bending)
    state = model.state()
    state.v[:, 1] = 2.0 * x[:, 0]  # rigid rotation about z at 2 rad/s
    for _ in range(24):
        step(model, state, DT, 20)
    direction = state.x[-1] - state.x[0]
    offsets = state.x - state.x[0]
    deviation = np.linalg.norm(np.cross(offsets, direction / np.linalg.norm(direction)), axis=1)
    assert deviation.max() < 1e-3
    assert np.linalg.norm(direction) == pytest.approx(1.0, rel=1e-3)


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_material_stretch_is_resolution_independent(name):
    """Hanging under its own weight, a 2 m rope stretches the same at 20 and 200 points."""
    material = PRESETS[name]
    results = []
    for points in (20, 200):
        x = np.zeros((points, 3))
        x[:, 2] = -np.linspace(0.0, 2.0, points)
        pinned = np.zeros(points, dtype=bool)
        pinned[0] = True
        edges = [(i, i + 1) for i in range(points - 1)]
        inv_mass, compliance, bending = rope_parameters(x, edges, material, pinned=pinned)
        model = Model(x, edges, inv_mass, compliance, bending_compliance=bending, damping=3.0)
        state = model.state()
        for _ in range(24 * 10):
            step(model, state, DT, 20)
        results.append(np.linalg.norm(np.diff(state.x, axis=0), axis=1).sum() - 2.0)
    # continuum: total stretch = rho g L^2 / (2 EA)
    expected = material.linear_density * G * 2.0**2 / (2 * material.stretch_stiffness)
    assert results[0] == pytest.approx(results[1], rel=0.02)
    assert results[1] == pytest.approx(expected, rel=0.05)
