"""Pinned particles are kinematic: still without targets, on a straight line to them with."""

import numpy as np

from xpbd_addon.core import Model, step

from .ropes import hanging_chain


def test_pinned_particle_never_moves_without_targets():
    model = hanging_chain(8, 0.25, 1e-4)
    state = model.state()
    state.v[:] = 3.0  # even a velocity the caller left on the pin does not move it
    for _ in range(50):
        step(model, state, 1 / 24, 10)
    np.testing.assert_array_equal(state.x[0], model.particle_rest_x[0])
    assert not np.allclose(state.x[1:], model.particle_rest_x[1:])


def test_pin_reaches_its_target_exactly_and_moves_linearly():
    # One pinned particle, no edges: its path within the frame is visible through substeps=1
    # frames of a tenth of the length.
    model = Model([[0, 0, 0], [0, 0, -1]], [[0, 1]], [0, 1], 0.0)
    target = np.array([[0.3, -0.2, 0.1], [9.0, 9.0, 9.0]])  # the free row is ignored
    state = model.state()
    step(model, state, 1 / 24, 10, pin_targets=target)
    np.testing.assert_array_equal(state.x[0], target[0])
    np.testing.assert_allclose(state.v[0], target[0] * 24, rtol=1e-12)
    assert np.linalg.norm(state.x[1] - state.x[0]) < 1.0 + 1e-6


def test_pulled_rope_follows_its_pin():
    model = hanging_chain(10, 0.1, 0.0, damping=3.0)
    state = model.state()
    for frame in range(1, 24 * 6):
        target = model.particle_rest_x.copy()
        target[0, 0] = min(frame, 48) / 48 * 2.0  # the hand moves 2 m in x over 2 s
        step(model, state, 1 / 24, 20, pin_targets=target)
    assert state.x[0, 0] == 2.0
    # after 4 s of rest the rope hangs below the new pin
    np.testing.assert_allclose(state.x[:, 0], 2.0, atol=0.05)
