"""``edge_tension``: the force in every constraint after a step, on every solver path."""

from __future__ import annotations

import numpy as np
import pytest

from xpbd_addon import core

N, MASS, G = 16, 0.05, 9.81


def _hanging(solver="direct", closed=False, ropes=1):
    """``ropes`` ropes of N points hanging straight down from their pinned first point."""
    x, edges, inv = [], [], []
    for r in range(ropes):
        p = np.zeros((N, 3))
        p[:, 0] = r
        p[:, 2] = -np.linspace(0.0, 1.5, N)
        x.append(p)
        edges += [(r * N + i, r * N + i + 1) for i in range(N - 1)]
        w = np.full(N, 1.0 / MASS)
        w[0] = 0.0
        inv.append(w)
    if closed:  # a brace that makes the rope a general graph (swept edge by edge)
        edges.append((N - 3, N - 1))
    return core.Model(np.vstack(x), np.array(edges), np.concatenate(inv), 1e-6,
                      solver=solver, damping=2.0)


@pytest.mark.parametrize("solver, closed, ropes", [
    ("direct", False, 1), ("direct", False, 20), ("direct", True, 1), ("sweep", False, 1)])
def test_a_hanging_rope_holds_the_weight_below_each_segment(solver, closed, ropes):
    model = _hanging(solver, closed, ropes)
    state = model.state()
    for _ in range(60):
        core.step(model, state, 1 / 24, 10)
    tension = core.edge_tension(model, state, 1 / 24, 10)
    below = (N - 1 - np.arange(N - 1)) * MASS * G  # [N] weight hanging from each segment
    tolerance = 0.005 if solver == "direct" and not closed else 0.02
    np.testing.assert_allclose(tension[:N - 1][:8], below[:8], rtol=tolerance)
    assert np.isfinite(tension).all()


def test_before_a_step_nothing_pulls_and_another_model_is_refused():
    model = _hanging()
    state = model.state()
    assert not core.edge_tension(model, state, 1 / 24, 10).any()
    core.step(model, state, 1 / 24, 10)
    with pytest.raises(ValueError, match="state"):
        core.edge_tension(_hanging(), state, 1 / 24, 10)


def test_the_lane_sweep_keeps_no_multiplier():
    model = _hanging("sweep", ropes=20)
    state = model.state()
    core.step(model, state, 1 / 24, 10)
    assert np.isnan(core.edge_tension(model, state, 1 / 24, 10)).all()
