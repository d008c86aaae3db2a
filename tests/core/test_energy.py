"""No solver adds energy: ropes released, nudged at rest and left on their equilibrium, at
many point counts and substep counts, with the strain limiter off as well as on.

With no pin moving and no contact, kinetic + gravitational + elastic energy (sum of
C^2 / (2 alpha) over the segments) may only fall. The released-rope figure is the peak kinetic
energy over what the fall can give (m g L / 2 for a rope pinned at one end, released from
horizontal): a stiff rope stays below 1. Before the stable solve (one linearised step per
substep along the predicted directions) a 200-point rope at S = 10 reached 251 and a hanging
100-point rope nudged by 1 mm/s thrashed at 64 times that speed.
"""

import numpy as np
import pytest

from xpbd_addon.core import Model, step
from xpbd_addon.core.solver import _advance

DT = 1.0 / 24.0
LENGTH = 2.0
G = 9.81


def rope(points, *, horizontal, mass, compliance, damping, strain_limit, bending=None,
         integrator="euler"):
    x = np.zeros((points, 3))
    if horizontal:
        x[:, 0] = np.linspace(0.0, LENGTH, points)
    else:
        x[:, 2] = np.linspace(0.0, -LENGTH, points)
    inv_mass = np.full(points, 1.0 / mass)
    inv_mass[0] = 0.0
    edges = [(i, i + 1) for i in range(points - 1)]
    return Model(x, edges, inv_mass, compliance, damping=damping, strain_limit=strain_limit,
                 bending_compliance=bending, integrator=integrator)


def energies(model, state):
    """(kinetic, gravitational + elastic) [J] of a rope (pinned points carry no mass)."""
    w = model.particle_inv_mass
    mass = np.divide(1.0, w, out=np.zeros_like(w), where=w > 0.0)
    kinetic = 0.5 * float(np.sum(mass[:, None] * state.v ** 2))
    potential = float(np.sum(mass * G * state.x[:, 2]))
    a, b = model.edge_index[:, 0], model.edge_index[:, 1]
    stretch = np.linalg.norm(state.x[a] - state.x[b], axis=1) - model.edge_rest_length
    alpha = model.edge_compliance
    elastic = float(np.sum(np.where(alpha > 0.0, stretch ** 2 / (2.0 * np.where(
        alpha > 0.0, alpha, 1.0)), 0.0)))
    return kinetic, potential + elastic


def release(points, substeps, *, compliance, strain_limit, seconds=6.0, mass=0.05,
            damping=0.1, bending=None, parallel=None, integrator="euler"):
    """(peak kinetic energy / m g L / 2, largest rise of the total energy over its start [J],
    what the fall can give [J]) of a rope released from horizontal."""
    model = rope(points, horizontal=True, mass=mass, compliance=compliance, damping=damping,
                 strain_limit=strain_limit, bending=bending, integrator=integrator)
    state = model.state()
    available = mass * (points - 1) * G * LENGTH / 2.0
    start = sum(energies(model, state))
    peak, rise = 0.0, -np.inf
    for _ in range(int(seconds * 24)):
        _advance(model, state, DT, substeps, (0.0, 0.0, -G), None, model.plan,
                 parallel=parallel)
        kinetic, potential = energies(model, state)
        assert np.isfinite(kinetic)
        peak = max(peak, kinetic)
        rise = max(rise, kinetic + potential - start)
    return peak / available, rise, available


@pytest.mark.parametrize("compliance", [0.0, 1e-6])
@pytest.mark.parametrize("points", [100, 200, 1000])
@pytest.mark.parametrize("substeps", [10, 20, 40])
@pytest.mark.parametrize("strain_limit", [None, 0.002])
@pytest.mark.parametrize("integrator", ["euler", "bdf2"])
def test_a_released_rope_gains_no_energy(points, substeps, compliance, strain_limit,
                                         integrator):
    """The add-on's defaults (0.05 kg per point, alpha 1e-6, damping 0.1 /s) and alpha 0."""
    ratio, rise, available = release(points, substeps, compliance=compliance,
                                     strain_limit=strain_limit, integrator=integrator)
    assert ratio <= 1.0
    assert rise <= 1e-9 * available


@pytest.mark.parametrize("substeps", [1, 3, 100])
@pytest.mark.parametrize("integrator", ["euler", "bdf2"])
def test_few_and_many_substeps_gain_no_energy(substeps, integrator):
    ratio, rise, available = release(200, substeps, compliance=0.0, strain_limit=None,
                                     seconds=4.0, integrator=integrator)
    assert ratio <= 1.0 and rise <= 1e-9 * available


@pytest.mark.parametrize("compliance", [1e-4, 1e-2])
@pytest.mark.parametrize("integrator", ["euler", "bdf2"])
def test_soft_ropes_gain_no_energy(compliance, integrator):
    """A soft rope stretches far beyond its rest length (its fall is longer than L / 2, so
    only the total energy is bounded)."""
    _, rise, available = release(200, 10, compliance=compliance, strain_limit=None,
                                 seconds=4.0, integrator=integrator)
    assert rise <= 1e-9 * available


def test_heavy_points_and_bending_gain_no_energy():
    """1 kg points (the benchmark's ropes) and bending stiffness."""
    ratio, rise, available = release(100, 20, compliance=1e-6, strain_limit=None, mass=1.0,
                                     seconds=4.0)
    assert ratio <= 1.0 and rise <= 1e-9 * available
    ratio, rise, available = release(200, 10, compliance=0.0, strain_limit=None,
                                     bending=1e-1, seconds=4.0)
    assert ratio <= 1.0 and rise <= 1e-9 * available


def test_threads_and_many_ropes_gain_no_energy():
    """The 16-lane blocks spread over threads: 40 ropes at once."""
    x, edges, w = [], [], []
    for r in range(40):
        points = np.zeros((150, 3))
        points[:, 0] = np.linspace(0.0, LENGTH, 150)
        points[:, 1] = 0.1 * r
        x.append(points)
        edges += [(150 * r + i, 150 * r + i + 1) for i in range(149)]
        inv = np.full(150, 20.0)
        inv[0] = 0.0
        w.append(inv)
    model = Model(np.concatenate(x), edges, np.concatenate(w), 1e-6, damping=0.1,
                  strain_limit=None)
    state = model.state()
    start = sum(energies(model, state))
    for _ in range(72):
        _advance(model, state, DT, 10, (0.0, 0.0, -G), None, model.plan, parallel=True)
        assert sum(energies(model, state)) <= start


@pytest.mark.slow
@pytest.mark.parametrize("integrator", ["euler", "bdf2"])
def test_a_long_run_gains_no_energy(integrator):
    """60 s of a 200-point rope swinging and settling, damping 0."""
    ratio, rise, available = release(200, 10, compliance=1e-6, strain_limit=None,
                                     damping=0.0, seconds=60.0, integrator=integrator)
    assert ratio <= 1.0 and rise <= 1e-9 * available


def settled(points, substeps, strain_limit, *, damping=2.0, seconds=10.0,
            integrator="euler"):
    model = rope(points, horizontal=False, mass=1.0 / points, compliance=0.0, damping=damping,
                 strain_limit=strain_limit, integrator=integrator)
    state = model.state()
    for _ in range(int(seconds * 24)):
        step(model, state, DT, substeps)
    return model, state


@pytest.mark.parametrize("points, substeps", [(50, 10), (100, 10), (200, 20), (1000, 20)])
@pytest.mark.parametrize("strain_limit", [None, 0.002])
@pytest.mark.parametrize("integrator", ["euler", "bdf2"])
def test_a_hanging_rope_nudged_sideways_settles(points, substeps, strain_limit, integrator):
    """Every free point of a rope hanging at rest given a random sideways speed (1 mm/s):
    the energy of the disturbance falls at least as fast as damping alone makes an
    oscillation's energy fall, exp(-d t)."""
    damping = 2.0
    model, state = settled(points, substeps, strain_limit, damping=damping,
                           integrator=integrator)
    equilibrium = state.x.copy()
    state.v[:] = 0.0
    state.v[1:, :2] = np.random.default_rng(7).normal(0.0, 1e-3, (points - 1, 2))
    mass = np.where(model.particle_inv_mass > 0.0, 1.0 / points, 0.0)

    def disturbance():
        kinetic = 0.5 * np.sum(mass[:, None] * state.v ** 2)
        return kinetic + np.sum(mass * G * (state.x[:, 2] - equilibrium[:, 2]))

    start = disturbance()
    for frame in range(1, 49):
        step(model, state, DT, substeps)
        if frame in (12, 24, 48):
            assert disturbance() <= start * np.exp(-damping * frame * DT), frame


@pytest.mark.parametrize("points, substeps", [(50, 10), (200, 20)])
@pytest.mark.parametrize("stages", ["air", "damping map", "air and damping map"])
def test_a_hanging_rope_swung_sideways_settles_with_the_air_and_a_damping_map(points,
                                                                               substeps,
                                                                               stages):
    """A rope hanging at rest, swung as a whole (5 cm/s at the tip), with what acts anew at
    every substep's start inside the frame (``core.substep_forces``): still air as dense as
    water on a rope of 1 cm radius (at that speed its drag outweighs the damping), a
    damping map from 0.5 to 1.5 /s along the rope, or both. They only take energy out: the
    disturbance falls at least as fast as the least damping alone makes it fall (a drag
    turned round, or a map that speeds particles up, fails it)."""
    from xpbd_addon.core import Air

    damping = 0.5
    x = np.zeros((points, 3))
    x[:, 2] = np.linspace(0.0, -LENGTH, points)
    inv_mass = np.full(points, float(points))
    inv_mass[0] = 0.0
    rates = np.linspace(damping, 3.0 * damping, points) if "map" in stages else damping
    model = Model(x, [(i, i + 1) for i in range(points - 1)], inv_mass, 0.0, damping=rates,
                  radius=0.01)
    air = Air(1000.0, 1.2, 0.01) if "air" in stages else None
    state = model.state()
    for _ in range(24 * 10):
        step(model, state, DT, substeps, air=air)
    equilibrium = state.x.copy()
    state.v[:] = 0.0
    # the rope swung as a whole (the slowest mode, which the solve itself damps least)
    state.v[:, 1] = 0.05 * (equilibrium[0, 2] - equilibrium[:, 2]) / LENGTH
    mass = np.where(inv_mass > 0.0, 1.0 / points, 0.0)

    def disturbance():
        kinetic = 0.5 * np.sum(mass[:, None] * state.v ** 2)
        return kinetic + np.sum(mass * G * (state.x[:, 2] - equilibrium[:, 2]))

    start = disturbance()
    for frame in range(1, 49):
        step(model, state, DT, substeps, air=air)
        if frame in (12, 24, 48):
            assert disturbance() <= start * np.exp(-damping * frame * DT), frame


@pytest.mark.parametrize("points, substeps", [(100, 10), (200, 20)])
def test_a_catenary_started_on_its_equilibrium_stays_on_it(points, substeps):
    """A rope pinned at both ends, settled, then run on without damping: it stays where it
    is (no motion grows out of rounding)."""
    x = np.zeros((points, 3))
    x[:, 0] = np.linspace(0.0, 1.6, points)  # 1.6 m apart, 2 m of rope: it sags
    rest = np.full(points - 1, LENGTH / (points - 1))
    inv_mass = np.full(points, 20.0)
    inv_mass[[0, -1]] = 0.0
    edges = [(i, i + 1) for i in range(points - 1)]
    settling = Model(x, edges, inv_mass, 0.0, rest_length=rest, damping=5.0,
                     strain_limit=None)
    state = settling.state()
    state.x[1:-1, 2] -= 0.5 * np.sin(np.linspace(0.0, np.pi, points))[1:-1]
    for _ in range(24 * 20):
        step(settling, state, DT, substeps)
    shape = state.x.copy()
    state.v[:] = 0.0
    free = Model(x, edges, inv_mass, 0.0, rest_length=rest, damping=0.0, strain_limit=None)
    for _ in range(24 * 10):
        step(free, state, DT, substeps)
    assert np.abs(state.x - shape).max() < 1e-4
    assert np.abs(state.v).max() < 1e-3


@pytest.mark.parametrize("points, substeps", [(100, 10), (200, 20)])
def test_a_rope_swinging_onto_the_ground_gains_no_energy(points, substeps):
    """Released from horizontal 1.5 m above a ground with friction, self-collision on: it
    swings into the ground and comes to rest on it. Contacts only take energy out."""
    from xpbd_addon.core import Plane

    x = np.zeros((points, 3))
    x[:, 0] = np.linspace(0.0, LENGTH, points)
    inv_mass = np.full(points, 20.0)
    inv_mass[0] = 0.0
    edges = [(i, i + 1) for i in range(points - 1)]
    model = Model(x, edges, inv_mass, 1e-6, damping=0.1, strain_limit=None, radius=0.005,
                  self_collision=True)
    state = model.state()
    ground = Plane((0.0, 0.0, -1.5))
    start = sum(energies(model, state))
    for _ in range(24 * 4):
        step(model, state, DT, substeps, colliders=[ground])
        assert sum(energies(model, state)) <= start
    assert state.x[:, 2].min() > -1.5


@pytest.mark.parametrize("integrator, kept", [("euler", 85.0), ("bdf2", 112.0)])
def test_numerical_damping_of_a_pendulum(integrator, kept):
    """A 2 m pendulum (one segment) released from 120 degrees, damping 0, S = 20: the swing
    left after 20 s (the exact motion keeps 120). Implicit Euler keeps 89, BDF2 117."""
    angle = np.radians(120.0)
    x = np.array([[0.0, 0.0, 0.0], [2.0 * np.sin(angle), 0.0, -2.0 * np.cos(angle)]])
    model = Model(x, [(0, 1)], [0.0, 1.0], 0.0, damping=0.0, strain_limit=None,
                  integrator=integrator)
    state = model.state()
    angles = []
    for _ in range(24 * 20):
        step(model, state, DT, 20)
        angles.append(np.degrees(np.arctan2(state.x[1, 0], -state.x[1, 2])))
    swing = np.abs(angles[-48:]).max()
    assert kept <= swing <= 120.0


def test_second_order_frames_with_contacts_stay_on_the_ground():
    """With a ground, frames fall back to implicit Euler: a BDF2 rope dropped on the ground
    comes to rest on it without bouncing off or gaining energy."""
    from xpbd_addon.core import Plane

    x = np.zeros((50, 3))
    x[:, 0] = np.linspace(0.0, 1.0, 50)
    model = Model(x, [(i, i + 1) for i in range(49)], np.full(50, 50.0), 0.0, damping=0.1,
                  radius=0.005, integrator="bdf2", strain_limit=None)
    state = model.state()
    ground = Plane((0.0, 0.0, -0.5))
    start = sum(energies(model, state))
    for _ in range(48):
        step(model, state, DT, 10, colliders=[ground])
        assert sum(energies(model, state)) <= start
    assert np.abs(state.v).max() < 0.05
    assert state.x[:, 2].max() < -0.49


# --- fields and air (issue 31) ---------------------------------------------------------------

def _field_energy(model, state, field):
    """Kinetic + gravitational + elastic energy [J], plus the potential -m a.x of a constant
    field of acceleration ``field`` [m/s^2]: the work the field does is taken from it."""
    kinetic, potential = energies(model, state)
    w = model.particle_inv_mass
    mass = np.divide(1.0, w, out=np.zeros_like(w), where=w > 0.0)
    return kinetic + potential - float(np.sum(mass * (state.x @ np.asarray(field))))


@pytest.mark.parametrize("integrator", ["euler", "bdf2"])
@pytest.mark.parametrize("air", [False, True])
def test_a_constant_field_on_a_pinned_rope_at_rest_gains_no_energy(integrator, air):
    """A hanging rope at rest, a constant sideways field (a Force field's push over the
    masses, ``blender.read.fields.accelerations``) switched on: it swings towards its new
    equilibrium, and its energy with the field's potential never rises above the start (the
    field does only the work its potential gives). With air (still) as well."""
    from xpbd_addon.core import Air

    model = Model(*_hanging(40), 1e-6, damping=0.1, integrator=integrator, radius=0.005)
    state = model.state()
    field = np.array([3.0, 0.0, 0.0])
    accelerations = np.tile(field, (model.particle_count, 1))
    start = _field_energy(model, state, field)
    rise = -np.inf
    for _ in range(24 * 4):
        step(model, state, DT, 20, gravity=(0.0, 0.0, -G), accelerations=accelerations,
             air=Air() if air else None)
        rise = max(rise, _field_energy(model, state, field) - start)
    assert rise <= 1e-9
    assert state.x[-1, 0] > 0.3  # it did swing out


def _hanging(points, mass=0.05):
    x = np.zeros((points, 3))
    x[:, 2] = np.linspace(0.0, -LENGTH, points)
    inv_mass = np.full(points, 1.0 / mass)
    inv_mass[0] = 0.0
    return x, [(i, i + 1) for i in range(points - 1)], inv_mass


@pytest.mark.parametrize("integrator", ["euler", "bdf2"])
@pytest.mark.parametrize("density", [1.2, 1000.0])
def test_a_released_rope_in_still_air_gains_no_energy_and_loses_more(integrator, density):
    """Drag without wind only takes energy away: a rope released from horizontal never
    rises above its start energy, and ends with less than without air."""
    from xpbd_addon.core import Air

    ends = []
    for air in (None, Air(density=density)):
        model = rope(60, horizontal=True, mass=0.05, compliance=1e-6, damping=0.0,
                     strain_limit=None, integrator=integrator)
        model = Model(model.particle_rest_x, model.edge_index, model.particle_inv_mass, 1e-6,
                      damping=0.0, integrator=integrator, radius=0.01)
        state = model.state()
        start = sum(energies(model, state))
        rise = -np.inf
        for _ in range(24 * 3):
            step(model, state, DT, 10, gravity=(0.0, 0.0, -G), air=air)
            rise = max(rise, sum(energies(model, state)) - start)
        assert rise <= 1e-9, air
        ends.append(sum(energies(model, state)))
    assert ends[1] < ends[0]
