"""External accelerations per particle (``step(..., accelerations=...)``): gravity is one
source of acceleration, wind or a force field another, and the solver cannot tell them apart.

A uniform field equal to gravity moves a rope exactly as that gravity does (bit for bit, on
every path: lanes, sweep, second order, contacts); a sideways field tilts a hanging rope to
tan(theta) = a / g; with the field counted in the potential energy (it is uniform, so
conservative), no solver gains energy from it.
"""

import numpy as np
import pytest

from xpbd_addon.core import Model, Plane, step
from xpbd_addon.core.solver import step_sequential

DT = 1.0 / 24.0
G = np.array([0.0, 0.0, -9.81])


def hanging(points=16, length=1.5, *, damping=0.0, **options):
    """A vertical rope, the top point pinned, 0.1 kg per point."""
    x = np.zeros((points, 3))
    x[:, 2] = np.linspace(0.0, -length, points)
    inv_mass = np.full(points, 10.0)
    inv_mass[0] = 0.0
    edges = [(i, i + 1) for i in range(points - 1)]
    return Model(x, edges, inv_mass, 1e-7, damping=damping, **options)


def ropes_on_a_plane(ropes=6, points=12):
    """Horizontal ropes just above a ground (no pins): the contacts path."""
    rows = []
    for r in range(ropes):
        p = np.zeros((points, 3))
        p[:, 0] = np.linspace(0.0, 1.0, points)
        p[:, 1] = 0.1 * r
        p[:, 2] = 0.05
        rows.append(p)
    x = np.concatenate(rows)
    edges = [(r * points + i, r * points + i + 1) for r in range(ropes) for i in range(points - 1)]
    return Model(x, edges, np.full(len(x), 10.0), 1e-7, radius=0.01)


@pytest.mark.parametrize("options, stepper, colliders", [
    ({}, step, ()),
    ({"solver": "sweep"}, step, ()),
    ({"integrator": "bdf2"}, step, ()),
    ({}, step_sequential, ()),
    ({}, step, (Plane((0.0, 0.0, -0.8)),)),
])
def test_a_uniform_acceleration_equal_to_gravity_moves_the_rope_as_gravity(options, stepper,
                                                                           colliders):
    model = hanging(**options)
    by_gravity, by_field = model.state(), model.state()
    for state in (by_gravity, by_field):
        state.v[:, 0] = np.linspace(0.0, 2.0, model.particle_count)  # a swing
    field = np.tile(G, (model.particle_count, 1))
    for _ in range(24):
        stepper(model, by_gravity, DT, 8, gravity=tuple(G), colliders=colliders)
        stepper(model, by_field, DT, 8, gravity=(0.0, 0.0, 0.0), accelerations=field,
                colliders=colliders)
    assert np.array_equal(by_gravity.x, by_field.x)
    assert np.array_equal(by_gravity.v, by_field.v)


def test_on_the_contacts_path_too():
    model = ropes_on_a_plane()
    ground = Plane()
    by_gravity, by_field = model.state(), model.state()
    field = np.tile(G, (model.particle_count, 1))
    for _ in range(12):
        step(model, by_gravity, DT, 10, colliders=ground)
        step(model, by_field, DT, 10, gravity=(0.0, 0.0, 0.0), accelerations=field,
             colliders=ground)
    assert np.array_equal(by_gravity.x, by_field.x)
    assert by_field.x[:, 2].min() > 0.0  # resting on the ground


def test_without_accelerations_after_a_frame_with_them_the_field_is_gone():
    """The field is an input of one frame: a frame without it is gravity's alone."""
    model = hanging()
    windy, calm = model.state(), model.state()
    step(model, windy, DT, 8, accelerations=np.tile((3.0, 0.0, 0.0), (model.particle_count, 1)))
    calm.x[:], calm.v[:], calm.tension = windy.x, windy.v, windy.tension.copy()
    step(model, windy, DT, 8)
    step(model, calm, DT, 8)  # (a fresh workspace: nothing left of the field)
    assert np.array_equal(windy.x, calm.x)


@pytest.mark.parametrize("solver", ["direct", "sweep"])
def test_a_sideways_acceleration_tilts_a_hanging_rope_to_its_angle(solver):
    """At rest in the field g + a the rope hangs along it: tan(theta) = a / g."""
    model = hanging(damping=3.0, solver=solver, iterations=4 if solver == "sweep" else 1)
    state = model.state()
    a = 4.0
    field = np.tile((a, 0.0, 0.0), (model.particle_count, 1))
    for _ in range(24 * 6):
        step(model, state, DT, 10, accelerations=field)
    hang = state.x[-1] - state.x[0]
    theta = np.degrees(np.arctan2(hang[0], -hang[2]))
    assert theta == pytest.approx(np.degrees(np.arctan2(a, 9.81)), abs=0.5)
    assert np.abs(state.v).max() < 1e-3  # at rest


@pytest.mark.parametrize("solver, substeps", [("direct", 4), ("direct", 20)])
def test_the_field_adds_no_energy_beyond_its_work(solver, substeps):
    """Released hanging straight down into a sideways field (no damping): kinetic + elastic
    + the potential of g + a (uniform, so -m (g + a) . x) never rises."""
    model = hanging(solver=solver)
    state = model.state()
    field_vector = np.array([5.0, 0.0, 0.0])
    field = np.tile(field_vector, (model.particle_count, 1))
    w = model.particle_inv_mass
    mass = np.divide(1.0, w, out=np.zeros_like(w), where=w > 0.0)
    edges = model.edge_index

    def energy():
        kinetic = 0.5 * np.sum(mass * np.einsum("ij,ij->i", state.v, state.v))
        potential = -np.sum(mass * (state.x @ (G + field_vector)))
        stretch = np.linalg.norm(state.x[edges[:, 0]] - state.x[edges[:, 1]], axis=1)
        elastic = np.sum((stretch - model.edge_rest_length) ** 2 / (2.0 * 1e-7))
        return kinetic + potential + elastic

    start = energy()
    highest, reach = start, 0.0
    for _ in range(48):
        step(model, state, DT, substeps, accelerations=field)
        highest = max(highest, energy())
        reach = max(reach, state.x[-1, 0])
    # the work the field can do on the swing: at most m |g + a| L
    work = np.sum(mass) * np.linalg.norm(G + field_vector) * 1.5
    assert highest <= start + 1e-6 * work
    assert reach > 0.5  # it did swing


@pytest.mark.parametrize("value, message", [
    (np.zeros((3, 3)), "accelerations"),
    (np.zeros(16 * 3), "accelerations"),
    (np.full((16, 3), np.nan), "accelerations"),
    (np.full((16, 3), np.inf), "accelerations"),
    ("wind", "accelerations"),
])
def test_bad_accelerations_name_the_argument_and_leave_the_state(value, message):
    model = hanging()
    state = model.state()
    state.v[:] = 0.5
    before = state.x.copy(), state.v.copy()
    with pytest.raises(ValueError, match=message):
        step(model, state, DT, 4, accelerations=value)
    assert np.array_equal(state.x, before[0]) and np.array_equal(state.v, before[1])
