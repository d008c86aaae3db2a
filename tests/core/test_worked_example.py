"""The worked example of docs/physics.md ("One constraint by hand"), run through the public
`step`."""

import numpy as np
import pytest

from xpbd_addon.core import Model, step

H = 1.0 / 60.0


def one_link(compliance: float) -> tuple[Model, np.ndarray]:
    """Pinned particle i at the origin, free j (w = 1) at (0, -1.2), rest length 1.0."""
    model = Model([[0.0, 0.0, 0.0], [0.0, -1.2, 0.0]], [[0, 1]], [0.0, 1.0], compliance,
                  rest_length=[1.0])
    state = model.state()
    step(model, state, H, 1, gravity=(0.0, 0.0, 0.0))
    return model, state.x


def test_rigid_constraint_is_solved_in_one_step():
    _, x = one_link(0.0)
    np.testing.assert_allclose(x[1], [0.0, -1.0, 0.0], atol=1e-12)
    np.testing.assert_array_equal(x[0], [0.0, 0.0, 0.0])
    assert np.linalg.norm(x[1] - x[0]) == pytest.approx(1.0, abs=1e-12)


def test_compliant_constraint_leaves_the_worked_residual():
    _, x = one_link(1e-3)
    alpha_tilde = 1e-3 / H**2  # 3.6
    delta_lambda = -0.2 / (0.0 + 1.0 + alpha_tilde)
    assert delta_lambda == pytest.approx(-0.0435, abs=5e-5)
    # x_j rises by -w_j n dlambda = (0, 0.0435): to (0, -1.1565), C ~ 0.157 left.
    np.testing.assert_allclose(x[1], [0.0, -1.2 - delta_lambda, 0.0], rtol=0, atol=1e-12)
    assert x[1][1] == pytest.approx(-1.1565, abs=1e-4)
    assert np.linalg.norm(x[1]) - 1.0 == pytest.approx(0.157, abs=1e-3)


def test_velocity_is_recovered_from_the_position_change():
    model = Model([[0.0, 0.0, 0.0], [0.0, -1.2, 0.0]], [[0, 1]], [0.0, 1.0], 0.0,
                  rest_length=[1.0])
    state = model.state()
    step(model, state, H, 1, gravity=(0.0, 0.0, 0.0))
    np.testing.assert_allclose(state.v[1], [0.0, 0.2 / H, 0.0], atol=1e-9)
    np.testing.assert_array_equal(state.v[0], 0.0)
