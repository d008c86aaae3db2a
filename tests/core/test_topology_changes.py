"""A rope that changes while it plays (``Model.with_changes``): cut, winched, stiffened.

The Model stays immutable: each change is a new Model of the same particles, and the State
goes on with it (no reset; its workspace is made again). A cut rope's lower piece falls
freely (its centre of mass accelerates at g) while the upper piece hangs on; a rope whose
rest lengths are halved over a second shortens to half without thrashing or gaining energy.
"""

import weakref

import numpy as np
import pytest

from xpbd_addon.core import Model, Plane, step
from xpbd_addon.core.solver import step_sequential

DT = 1.0 / 24.0
G = 9.81
MASS = 0.05  # [kg] per point


def hanging(points=21, length=2.0, compliance=1e-8, **options):
    x = np.zeros((points, 3))
    x[:, 2] = np.linspace(0.0, -length, points)
    inv_mass = np.full(points, 1.0 / MASS)
    inv_mass[0] = 0.0
    edges = [(i, i + 1) for i in range(points - 1)]
    return Model(x, edges, inv_mass, compliance, **options)


def settle(model, state, frames, substeps=10):
    for _ in range(frames):
        step(model, state, DT, substeps)


@pytest.mark.parametrize("options", [{}, {"solver": "sweep", "iterations": 8},
                                     {"integrator": "bdf2"}])
def test_a_cut_rope_lets_its_lower_piece_fall_freely_and_the_upper_piece_hang(options):
    model = hanging(**options)
    state = model.state()
    settle(model, state, 48)
    cut = 8  # the edge between points 8 and 9
    lower = np.arange(cut + 1, model.particle_count)
    upper = np.arange(1, cut + 1)
    upper_before = state.x[upper].copy()
    cut_model = model.with_changes(removed_edges=[cut])
    assert cut_model.edge_count == model.edge_count - 1
    assert state.workspace is not None and state.workspace.model is model
    z0 = state.x[lower, 2].mean()
    vz0 = state.v[lower, 2].mean()
    frames = 12
    for _ in range(frames):
        step(cut_model, state, DT, 10)
    assert state.workspace.model is cut_model  # the state went on, its workspace made again
    t = frames * DT
    # free fall of the centre of mass (the rope's inner constraints cancel in it)
    assert state.v[lower, 2].mean() - vz0 == pytest.approx(-G * t, rel=1e-6)
    h = DT / 10  # (the integrators' first-order error in the position: at most g t h)
    assert state.x[lower, 2].mean() - z0 == pytest.approx(vz0 * t - 0.5 * G * t * t,
                                                          abs=G * t * h)
    # the upper piece only lets go of the stretch the lower one's weight gave it (the
    # sweep's few iterations leave 2 mm of it, the direct solve a tenth of a millimetre)
    assert np.abs(state.x[upper] - upper_before).max() < 5e-3
    lengths = np.linalg.norm(np.diff(state.x[lower], axis=0), axis=1)
    assert np.allclose(lengths, model.edge_rest_length[cut + 1:], rtol=1e-3)  # intact


def test_a_cut_by_mask_equals_a_cut_by_index():
    model = hanging()
    mask = np.zeros(model.edge_count, dtype=np.bool_)
    mask[[3, 11]] = True
    by_mask, by_index = model.with_changes(removed_edges=mask), model.with_changes(
        removed_edges=np.array([11, 3]))
    assert np.array_equal(by_mask.edge_index, by_index.edge_index)
    assert by_mask.edge_count == model.edge_count - 2


def _energy(model, state):
    """Kinetic + gravitational + elastic [J] (pinned points carry no mass)."""
    w = model.particle_inv_mass
    mass = np.divide(1.0, w, out=np.zeros_like(w), where=w > 0.0)
    kinetic = 0.5 * np.sum(mass * np.einsum("ij,ij->i", state.v, state.v))
    gravity = G * np.sum(mass * state.x[:, 2])
    e = model.edge_index
    stretch = np.linalg.norm(state.x[e[:, 0]] - state.x[e[:, 1]], axis=1) - model.edge_rest_length
    alpha = model.edge_compliance
    elastic = np.sum(np.divide(stretch ** 2, 2.0 * alpha, out=np.zeros_like(alpha),
                               where=alpha > 0.0))
    return kinetic + gravity + elastic, kinetic


@pytest.mark.parametrize("substeps", [5, 20])
def test_rest_lengths_halved_over_frames_shorten_the_rope_without_energy_gain(substeps):
    """A winch: the rest lengths go to half over 24 frames. The rope shortens to half of its
    length within 2 %; it never moves faster than the winch pulls it (no thrash), and at
    rest afterwards its energy is no more than the start's plus the work the winch did
    lifting it (the rise of its centre of mass times m g)."""
    model = hanging(damping=1.0)
    state = model.state()
    for _ in range(24):
        step(model, state, DT, substeps)
    start, _ = _energy(model, state)
    com_start = state.x[1:, 2].mean()
    rest = model.edge_rest_length.copy()
    frames = 24
    fastest = 0.0
    for frame in range(1, frames + 1):
        model = model.with_changes(rest_length=rest * (1.0 - 0.5 * frame / frames))
        step(model, state, DT, substeps)
        fastest = max(fastest, float(np.abs(state.v).max()))
    for _ in range(96):
        step(model, state, DT, substeps)
    length = np.linalg.norm(np.diff(state.x, axis=0), axis=1).sum()
    assert length == pytest.approx(0.5 * rest.sum(), rel=0.02)
    assert state.x[-1, 2] == pytest.approx(-0.5 * rest.sum(), rel=0.02)
    # the bottom rises at 1 m/s (1 m in 1 s): nothing should go much faster than that
    assert fastest < 2.0
    end, kinetic = _energy(model, state)
    lift = G * MASS * (model.particle_count - 1) * (state.x[1:, 2].mean() - com_start)
    assert end <= start + lift + 1e-6
    assert kinetic < 1e-6  # at rest


def test_a_stiffness_change_goes_on_from_the_state():
    """A softer rope (compliance 1000 x) sags more: the same State goes on with it."""
    model = hanging()
    state = model.state()
    settle(model, state, 24)
    soft = model.with_changes(compliance=1e-4)
    settle(soft, state, 72)
    assert state.x[-1, 2] < -2.0 - 0.01  # stretched by its weight


def test_one_model_is_shared_by_several_states():
    """A Model holds nothing a step writes: two states stepped in turns with one Model move
    exactly as each would alone."""
    model = hanging(points=30)
    alone = hanging(points=30)
    a, b = model.state(), model.state()
    b.v[:, 0] = 0.3
    a_alone, b_alone = alone.state(), alone.state()
    b_alone.v[:, 0] = 0.3
    ground = Plane((0.0, 0.0, -2.05))
    for _ in range(24):
        step(model, a, DT, 10, colliders=ground)
        step(model, b, DT, 10, colliders=ground)
    for _ in range(24):
        step(alone, a_alone, DT, 10, colliders=ground)
    other = hanging(points=30)
    for _ in range(24):
        step(other, b_alone, DT, 10, colliders=ground)
    assert np.array_equal(a.x, a_alone.x) and np.array_equal(b.x, b_alone.x)
    assert a.workspace is not b.workspace


def test_a_model_holds_only_its_declared_attributes():
    """No cache can hide on a Model (``__slots__``); the Blender side keeps weak sets of
    them (the preparation thread's models)."""
    model = hanging()
    with pytest.raises(AttributeError):
        model.cache = 1  # type: ignore[attr-defined]
    assert weakref.ref(model)() is model
    state = model.state()
    with pytest.raises(AttributeError):
        state.cache = 1  # type: ignore[attr-defined]


def test_a_copied_state_has_no_workspace_and_computes_the_same_frames():
    model = hanging()
    state = model.state()
    settle(model, state, 6)
    copy = state.copy()
    assert copy.workspace is None
    step(model, state, DT, 10)
    step(model, copy, DT, 10)
    assert np.array_equal(state.x, copy.x)
    step_sequential(model, copy, DT, 10)  # (the reference path shares the workspace)


@pytest.mark.parametrize("kwargs, name", [
    ({"removed_edges": [99]}, "removed_edges"),
    ({"removed_edges": np.zeros(3, dtype=np.bool_)}, "removed_edges"),
    ({"removed_edges": [0.5]}, "removed_edges"),
    ({"rest_length": -1.0}, "rest_length"),
    ({"rest_length": np.ones(3)}, "rest_length"),
    ({"rest_length": np.nan}, "rest_length"),
    ({"compliance": -1.0}, "compliance"),
])
def test_bad_changes_name_the_argument(kwargs, name):
    with pytest.raises(ValueError, match=name):
        hanging().with_changes(**kwargs)
