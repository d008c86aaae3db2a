"""Per-point maps in the core: a mass per particle, a compliance per segment, a radius per
particle and soft pins from weights (what vertex groups and curve point weights feed)."""

import numpy as np
import pytest

from xpbd_addon.core import Model, Plane, step
from xpbd_addon.core.soft_pins import from_weights, step_with_soft_pins

DT = 1.0 / 24.0
G = 9.81


def funicular(masses, segment, span):
    """The equilibrium of inextensible links of length ``segment`` between two pins at the
    same height ``span`` apart, carrying point masses ``masses`` (the free particles):
    the horizontal tension H is the same in every link and the vertical one drops by m_i g
    at each particle, so link k points along (H, V_0 - g sum_{i<k} m_i); H and V_0 are
    those for which the chain ends on the second pin (Newton's method). Returns the
    points' (x, z) [m], (len(masses) + 2, 2), from the first pin."""
    loads = np.concatenate([[0.0], np.cumsum(masses) * G])

    def end(h, v0):
        v = v0 - loads
        norm = np.hypot(h, v)
        return np.array([np.sum(segment * h / norm), np.sum(segment * v / norm)])

    h = v0 = 0.5 * loads[-1]  # about half the weight at each pin
    for _ in range(200):
        residual = end(h, v0) - (span, 0.0)
        if np.abs(residual).max() < 1e-13:
            break
        eps = 1e-7
        jac = np.column_stack([(end(h + eps, v0) - end(h, v0)) / eps,
                               (end(h, v0 + eps) - end(h, v0)) / eps])
        dh, dv = np.linalg.solve(jac, -residual)
        h, v0 = max(h + dh, 0.5 * h), v0 + dv  # H stays positive
    v = v0 - loads
    norm = np.hypot(h, v)
    links = segment * np.column_stack([h / norm, -v / norm])  # (x, z) per link
    return np.vstack([[0.0, 0.0], np.cumsum(links, axis=0)])


def test_a_rope_ten_times_heavier_at_one_end_hangs_in_the_shape_of_its_masses():
    points, length, span = 21, 2.0, 1.4
    segment = length / (points - 1)
    masses = np.linspace(0.01, 0.1, points)  # ten times heavier at the last point
    x = np.zeros((points, 3))
    x[:, 0] = np.linspace(0.0, span, points)  # taut start; it sags into shape
    inv_mass = 1.0 / masses
    inv_mass[[0, -1]] = 0.0
    model = Model(x, [(i, i + 1) for i in range(points - 1)], inv_mass, 0.0,
                  rest_length=np.full(points - 1, segment), damping=3.0)
    state = model.state()
    for _ in range(24 * 20):
        step(model, state, DT, 20)
    shape = funicular(masses[1:-1], segment, span)
    expected = np.column_stack([shape[:, 0], np.zeros(points), shape[:, 1]])
    assert np.abs(state.x - expected).max() < 0.01 * length
    # and it is not the uniform chain's shape: the low point moved towards the heavy end
    uniform = funicular(np.full(points - 2, masses.mean()), segment, span)
    assert np.abs(uniform - shape).max() > 0.02 * length  # twice the tolerance above
    assert shape[np.argmin(shape[:, 1]), 0] > 0.55 * span


def test_a_compliance_per_segment_stretches_each_by_alpha_times_its_tension():
    points, segment, mass = 11, 0.1, 0.05
    x = np.zeros((points, 3))
    x[:, 2] = -segment * np.arange(points)
    inv_mass = np.full(points, 1.0 / mass)
    inv_mass[0] = 0.0
    alpha = np.geomspace(1e-3, 1e-2, points - 1)  # [m/N], softer towards the end
    model = Model(x, [(i, i + 1) for i in range(points - 1)], inv_mass, alpha, damping=3.0,
                  strain_limit=None)
    state = model.state()
    for _ in range(24 * 15):
        step(model, state, DT, 20)
    stretch = np.linalg.norm(np.diff(state.x, axis=0), axis=1) - segment
    tension = mass * G * np.arange(points - 1, 0, -1)  # the weight below each segment
    np.testing.assert_allclose(stretch, alpha * tension, rtol=0.01)


@pytest.mark.parametrize("weight", [0.25, 0.5, 0.8])
def test_a_soft_pin_holds_its_point_with_the_spring_its_weight_gives(weight):
    """k(w) = stiffness w / (1 - w): a point of mass m hangs m g / k(w) below its target."""
    mass, stiffness = 0.2, 40.0
    model = Model([[0.0, 0.0, 0.0]], np.zeros((0, 2), dtype=np.int64), [1.0 / mass], 0.0,
                  damping=4.0)
    state = model.state()
    pins, pinned = from_weights([weight], [[0.0, 0.0, 0.0]], stiffness)
    assert not pinned.any()
    for _ in range(24 * 10):
        step_with_soft_pins(model, state, DT, 10, pins)
    k = stiffness * weight / (1.0 - weight)
    assert -state.x[0, 2] == pytest.approx(mass * G / k, rel=0.01)
    if weight == 0.5:
        assert -state.x[0, 2] == pytest.approx(mass * G / stiffness, rel=0.01)


def test_weights_one_and_zero_are_a_pin_and_no_spring():
    pins, pinned = from_weights([1.0, 0.0, 0.5], np.zeros((3, 3)), 10.0)
    assert list(pinned) == [True, False, False]
    assert list(pins.particles) == [2]
    with pytest.raises(ValueError, match="^weights:"):
        from_weights([1.5], np.zeros((1, 3)), 10.0)
    with pytest.raises(ValueError, match="^stiffness:"):
        from_weights([0.5], np.zeros((1, 3)), 0.0)


def test_a_radius_per_point_sets_each_points_distance_from_the_ground():
    points = 9
    x = np.zeros((points, 3))
    x[:, 0] = np.linspace(0.0, 0.8, points)
    x[:, 2] = 0.1
    radius = np.linspace(0.01, 0.05, points)
    model = Model(x, [(i, i + 1) for i in range(points - 1)], np.full(points, 10.0), 0.0,
                  radius=radius, damping=2.0)
    state = model.state()
    for _ in range(48):
        step(model, state, DT, 10, colliders=Plane())
    np.testing.assert_allclose(state.x[:, 2], radius, atol=1e-3)
