"""The fast lane kernel of the plain XPBD sweep (solver="sweep") gives bit-identical results
to the sequential sweep, plain XPBD edge by edge."""

import numpy as np
import pytest

from xpbd_addon.core import Model, step
from xpbd_addon.core.solver import _advance, step_sequential

from .ropes import many_ropes


def run(model, stepper, frames=24, **kwargs):
    state = model.state()
    state.v[:, 2] = 1.0
    for frame in range(frames):
        targets = model.particle_rest_x + [0.0, 0.0, 0.01 * frame]
        stepper(model, state, 1 / 24, 7, pin_targets=targets, **kwargs)
    return state


@pytest.mark.parametrize("ropes, points, seed", [(20, 30, None), (40, 25, 1), (33, 17, 7)])
def test_lanes_match_the_sequential_sweep_bit_for_bit(ropes, points, seed):
    model = many_ropes(ropes, points, compliance=1e-5, seed=seed, solver="sweep")
    assert model.plan.lanes is not None, "this scene should use the lane kernel"
    fast = run(model, step)
    reference = run(model, step_sequential)
    np.testing.assert_array_equal(fast.x, reference.x)
    np.testing.assert_array_equal(fast.v, reference.v)


def test_threads_do_not_change_the_result():
    model = many_ropes(48, 20, compliance=1e-6, seed=3, solver="sweep")

    def threaded(model, state, dt, substeps, **kwargs):
        _advance(model, state, dt, substeps, (0, 0, -9.81), kwargs.get("pin_targets"),
                 model.plan, parallel=True)

    single = run(model, step)
    parallel = run(model, threaded)
    np.testing.assert_array_equal(single.x, parallel.x)


def test_mixed_graph_chains_and_a_net():
    """A triangle (a cycle, so not a chain) next to ropes: both kernels in one step."""
    ropes = many_ropes(16, 10, compliance=1e-5, solver="sweep")
    n = ropes.particle_count
    positions = np.vstack([ropes.particle_rest_x, [[0, 5, 0], [1, 5, 0], [0.5, 5.8, 0]]])
    edges = np.vstack([ropes.edge_index, [[n, n + 1], [n + 1, n + 2], [n + 2, n]]])
    inv_mass = np.concatenate([ropes.particle_inv_mass, [0.0, 1.0, 1.0]])
    model = Model(positions, edges, inv_mass, 1e-5, solver="sweep")
    assert len(model.decomposition.general_edges) == 3
    fast = run(model, step)
    reference = run(model, step_sequential)
    np.testing.assert_array_equal(fast.x, reference.x)
    # the triangle hangs from its pinned corner and keeps its side lengths
    sides = np.linalg.norm(fast.x[[n, n + 1, n + 2]] - fast.x[[n + 1, n + 2, n]], axis=1)
    np.testing.assert_allclose(sides, [1.0, np.hypot(0.5, 0.8), np.hypot(0.5, 0.8)], rtol=0.02)
