"""``edge_tension``: the force in every constraint after a step, on every solver path."""

from __future__ import annotations

import numpy as np
import pytest

from xpbd_addon import core

N, MASS, G = 16, 0.05, 9.81


def _hanging(solver="direct", closed=False, ropes=1, integrator="euler"):
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
                      solver=solver, damping=2.0, integrator=integrator)


@pytest.mark.parametrize("solver, closed, ropes, integrator", [
    ("direct", False, 1, "euler"), ("direct", False, 20, "euler"), ("direct", True, 1, "euler"),
    ("sweep", False, 1, "euler"), ("direct", False, 1, "bdf2"), ("direct", True, 1, "bdf2")])
def test_a_hanging_rope_holds_the_weight_below_each_segment(solver, closed, ropes, integrator):
    """(BDF2's substeps after a frame's first solve with 2 h / 3: their multipliers are
    read over that step, the brace's swept one over h.)"""
    model = _hanging(solver, closed, ropes, integrator)
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


def _swinging():
    """Three ropes of N points released sideways from their pins: a frame with tension
    changing everywhere."""
    model = _hanging(ropes=3)
    state = model.state()
    state.v[:, 1] = np.linspace(0.0, 2.0, N * 3) % 2.0
    for _ in range(12):
        core.step(model, state, 1 / 24, 10)
    return model, state


def test_a_copy_of_the_state_resumes_bit_for_bit_and_the_tension_is_only_a_first_guess():
    """The next frame's solve starts from the tension the state carries (``State.tension``):
    a copy (what a cache keeps) resumes bit for bit. Without it (None, NaN, or another
    Model's shape, as after a cut) the frame estimates the tension from x, v, and lands
    within the solve's tolerance of the played one."""
    model, state = _swinging()
    assert state.tension.shape == (model.edge_count,) and state.tension.max() > 0.1
    copy = state.copy()
    lost = [state.copy() for _ in range(3)]
    lost[0].tension = None
    lost[1].tension = np.full(model.edge_count, np.nan)
    lost[2].tension = np.ones(model.edge_count - 1)
    for s in [state, copy, *lost]:
        core.step(model, s, 1 / 24, 10)
    np.testing.assert_array_equal(copy.x, state.x)
    np.testing.assert_array_equal(copy.v, state.v)
    np.testing.assert_array_equal(copy.tension, state.tension)
    # a copy reads as the state it was copied from
    kept = state.copy()
    np.testing.assert_array_equal(core.edge_tension(model, kept, 1 / 24, 10),
                                  core.edge_tension(model, state, 1 / 24, 10))
    assert not np.array_equal(lost[0].x, state.x)  # the carried tension was used
    np.testing.assert_allclose(lost[0].x, state.x, atol=1e-6)
    for other in lost[1:]:
        np.testing.assert_array_equal(other.x, lost[0].x)
    np.testing.assert_allclose(lost[0].tension, state.tension, rtol=1e-3, atol=1e-4)
    # kept read-only, or as a strided view, it is the same first guess
    played = copy.copy()
    core.step(model, played, 1 / 24, 10)
    for kept in (copy.tension.copy(), np.repeat(copy.tension, 2)[::2]):
        kept.flags.writeable = False
        again = copy.copy()
        again.tension = kept
        core.step(model, again, 1 / 24, 10)
        np.testing.assert_array_equal(again.x, played.x)


def test_without_a_carried_tension_the_ropes_asleep_keep_none_whatever_the_workspace_held():
    """Ropes asleep through a frame are not solved. Stepped without a carried tension (a
    State made from x, v and what sleeping keeps), their tension after the frame is the same
    whether the State's workspace held an earlier frame's or none: 0, the solve's start."""
    from xpbd_addon.core.collision import Plane

    x = np.zeros((N, 3))
    x[:, 0] = np.linspace(0.0, 1.4, N)  # pinned at both ends, 1.5 m of rope: it sags
    x[:, 2] = 1.0
    w = np.full(N, 1.0 / MASS)
    w[0] = w[-1] = 0.0
    model = core.Model(x, np.array([(i, i + 1) for i in range(N - 1)]), w, 1e-6,
                       rest_length=np.full(N - 1, 0.1), radius=0.005, damping=4.0)
    ground = [Plane((0.0, 0.0, 0.0))]  # (far below: with a collider, ropes at rest sleep)
    played = model.state()
    for _ in range(120):
        core.step(model, played, 1 / 24, 10, colliders=ground)
    assert played.rest.asleep.all() and played.tension.min() > 0.1  # asleep, and taut
    fresh = played.copy()  # no workspace
    for state in (played, fresh):
        state.tension = None
        core.step(model, state, 1 / 24, 10, colliders=ground)
    np.testing.assert_array_equal(played.tension, fresh.tension)
    np.testing.assert_array_equal(played.x, fresh.x)
