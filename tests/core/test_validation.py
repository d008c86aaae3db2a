"""Bad input raises ValueError naming the argument; degenerate geometry runs without NaN."""

import numpy as np
import pytest

from xpbd_addon.core import Model, step

GOOD = dict(positions=[[0, 0, 0], [1, 0, 0], [2, 0, 0]], edges=[[0, 1], [1, 2]],
            inv_mass=[0, 1, 1], compliance=0.0)


def build(**changes):
    args = {**GOOD, **changes}
    extra = {k: args.pop(k) for k in ("rest_length", "damping") if k in args}
    return Model(args["positions"], args["edges"], args["inv_mass"], args["compliance"], **extra)


@pytest.mark.parametrize(
    "changes, name",
    [
        (dict(positions=[[0, 0], [1, 0], [2, 0]]), "positions"),
        (dict(positions=[[0, 0, 0], [1, 0, np.nan], [2, 0, 0]]), "positions"),
        (dict(positions=[[0, 0, 0], [np.inf, 0, 0], [2, 0, 0]]), "positions"),
        (dict(positions="not numbers"), "positions"),
        (dict(edges=[[0, 1, 2]]), "edges"),
        (dict(edges=[[0, 3]]), "edges"),
        (dict(edges=[[-1, 0]]), "edges"),
        (dict(edges=[[0.5, 1]]), "edges"),
        (dict(edges=[["a", "b"]]), "edges"),
        (dict(edges=[[1, 1]]), "edges"),
        (dict(inv_mass=[0, 1]), "inv_mass"),
        (dict(inv_mass=[0, -1, 1]), "inv_mass"),
        (dict(inv_mass=[0, np.nan, 1]), "inv_mass"),
        (dict(compliance=-1e-3), "compliance"),
        (dict(compliance=[0.0, 0.0, 0.0]), "compliance"),
        (dict(compliance=[0.0, np.inf]), "compliance"),
        (dict(compliance=[0.0, -1.0]), "compliance"),
        (dict(rest_length=[1.0]), "rest_length"),
        (dict(rest_length=[1.0, -1.0]), "rest_length"),
        (dict(rest_length=[1.0, np.nan]), "rest_length"),
        (dict(damping=-0.1), "damping"),
        (dict(damping=np.nan), "damping"),
    ],
)
def test_bad_model_input_names_the_argument(changes, name):
    with pytest.raises(ValueError, match=f"^{name}:"):
        build(**changes)


def test_float_indices_that_are_whole_numbers_are_accepted():
    model = build(edges=np.array([[0.0, 1.0], [1.0, 2.0]]))
    assert model.edge_index.dtype == np.int64


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(dt=0.0), "dt"),
        (dict(dt=-1 / 24), "dt"),
        (dict(dt=np.nan), "dt"),
        (dict(dt="fast"), "dt"),
        (dict(substeps=0), "substeps"),
        (dict(substeps=-3), "substeps"),
        (dict(substeps=2.5), "substeps"),
        (dict(substeps=None), "substeps"),
        (dict(gravity=(0, -9.81)), "gravity"),
        (dict(gravity=(0, 0, np.nan)), "gravity"),
        (dict(pin_targets=np.zeros((2, 3))), "pin_targets"),
        (dict(pin_targets=np.full((3, 3), np.inf)), "pin_targets"),
        # a free particle's row is ignored, but NaN there is still refused
        (dict(pin_targets=np.array([[0, 0, 0], [1, 0, np.nan], [2, 0, 0]])), "pin_targets"),
        (dict(pin_targets=[[0, 0, 0], [1, 0, np.inf], [2, 0, 0]]), "pin_targets"),
        (dict(gravity=(0.0, 0.0, float("inf"))), "gravity"),
        (dict(gravity=[0.0, -9.81]), "gravity"),
    ],
)
def test_bad_step_input_names_the_argument_and_changes_nothing(kwargs, name):
    model = build()
    state = model.state()
    state.v[:] = 0.25
    before = state.copy()
    args = dict(dt=1 / 24, substeps=10)
    args.update(kwargs)
    dt, substeps = args.pop("dt"), args.pop("substeps")
    with pytest.raises(ValueError, match=f"^{name}:"):
        step(model, state, dt, substeps, **args)
    np.testing.assert_array_equal(state.x, before.x)
    np.testing.assert_array_equal(state.v, before.v)


def test_nan_in_the_state_is_refused():
    model = build()
    state = model.state()
    state.x[1, 0] = np.nan
    with pytest.raises(ValueError, match=r"^state\.x:"):
        step(model, state, 1 / 24, 10)


def test_inf_in_the_velocity_is_refused_and_changes_nothing():
    model = build()
    state = model.state()
    state.v[2, 1] = -np.inf
    before = state.copy()
    with pytest.raises(ValueError, match=r"^state\.v:"):
        step(model, state, 1 / 24, 10)
    np.testing.assert_array_equal(state.x, before.x)
    np.testing.assert_array_equal(state.v, before.v)


def run_frames(model, frames=48, substeps=10):
    state = model.state()
    for _ in range(frames):
        step(model, state, 1 / 24, substeps)
    assert np.all(np.isfinite(state.x)) and np.all(np.isfinite(state.v))
    return state


def test_coincident_particles_do_not_produce_nan():
    model = Model([[0, 0, 0], [0, 0, 0], [0, 0, 0]], [[0, 1], [1, 2]], [0, 1, 1], 0.0,
                  rest_length=[0.5, 0.5])
    run_frames(model)


def test_zero_length_edges_do_not_produce_nan():
    model = Model([[0, 0, 0], [0, 0, 0], [1, 0, 0]], [[0, 1], [1, 2]], [0, 1, 1], 1e-4)
    assert model.edge_rest_length[0] == 0.0
    run_frames(model)


def test_everything_pinned_stays_put():
    model = build(inv_mass=[0, 0, 0])
    state = run_frames(model)
    np.testing.assert_array_equal(state.x, model.particle_rest_x)


def test_no_edges_is_free_fall():
    model = Model([[0, 0, 0], [1, 0, 0]], np.zeros((0, 2), dtype=int), [1, 1], 0.0)
    state = model.state()
    step(model, state, 1.0, 1000, gravity=(0, 0, -10))
    # symplectic Euler over 1000 substeps of 1 ms: z = -10 * 1 * (1 + 1/1000) / 2
    np.testing.assert_allclose(state.x[:, 2], -5.005, rtol=1e-9)


def test_a_single_particle_runs():
    model = Model([[0, 0, 0]], [], [1.0], 0.0)
    run_frames(model)
    pinned = Model([[0, 0, 0]], [], [0.0], 0.0)
    np.testing.assert_array_equal(run_frames(pinned).x, [[0, 0, 0]])


def test_empty_model_runs():
    model = Model(np.zeros((0, 3)), [], [], 0.0)
    state = model.state()
    step(model, state, 1 / 24, 10)
    assert state.x.shape == (0, 3)


def test_step_refuses_more_damping_than_a_substep_holds():
    """damping * h beyond core.solver.MAX_DAMPING_PER_SUBSTEP (exp(-d h) / h would be 0 past
    d h = 745, and the contacts divide by it): a ValueError naming damping, the state as it
    was; at the limit the step runs and stays finite, with a self-contact radius too."""
    from xpbd_addon.core import State
    from xpbd_addon.core.solver import MAX_DAMPING_PER_SUBSTEP

    dt, substeps = 1 / 24, 10
    limit = MAX_DAMPING_PER_SUBSTEP * substeps / dt
    model = Model(GOOD["positions"], GOOD["edges"], GOOD["inv_mass"], 0.0,
                  damping=limit * 1.001)
    state = State(np.array(GOOD["positions"], dtype=float), np.zeros((3, 3)))
    before = state.x.copy()
    with pytest.raises(ValueError, match="damping"):
        step(model, state, dt, substeps)
    assert np.array_equal(state.x, before)
    model = Model(GOOD["positions"], GOOD["edges"], GOOD["inv_mass"], 0.0, damping=limit,
                  radius=0.05, self_collision=True)
    step(model, state, dt, substeps)
    assert np.isfinite(state.x).all() and np.isfinite(state.v).all()
