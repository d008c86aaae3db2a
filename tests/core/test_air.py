"""Air drag (``step(..., air=Air(...), wind=...)``): a rope is a chain of cylinders in the air.

The steady angle of a rope hanging in a uniform horizontal wind. Per length, normal drag
0.5 rho C_n d |u_n|^2 (u_n = W cos(theta) for a rope at theta from the vertical, along the
rope's normal) and weight mu g: a straight rope is in equilibrium where the normal parts
balance, 0.5 rho C_n d W^2 cos^2(theta) = mu g sin(theta), i.e. with
K = 0.5 rho C_n d W^2 / (mu g):

    sin(theta) = (sqrt(1 + 4 K^2) - 1) / (2 K)

(the tangential parts are carried by the tension). The discrete chain obeys the same balance
particle by particle when the free end, which has half a segment of drag, has half a
particle's mass: every particle carries the same load per length, so it is straight too.
"""

import numpy as np
import pytest

from xpbd_addon.core import Air, Model, Plane, step
from xpbd_addon.core.air import drag_forces

DT = 1.0 / 24.0
RHO, C_N = 1.2, 1.2
RADIUS = 0.005


def hanging(points=10, length=1.0, mass=0.01, **options):
    """A vertical rope, top pinned, ``mass`` [kg] per point and half of it at the free end."""
    x = np.zeros((points, 3))
    x[:, 2] = np.linspace(0.0, -length, points)
    inv_mass = np.full(points, 1.0 / mass)
    inv_mass[0] = 0.0
    inv_mass[-1] = 2.0 / mass
    options.setdefault("radius", RADIUS)
    return Model(x, [(i, i + 1) for i in range(points - 1)], inv_mass, 1e-8, **options)


def free_rope(points=11, length=1.0, mass=0.01, along=(1.0, 0.0, 0.0), **options):
    """A rope without pins along ``along``, half mass at both ends (uniform per length)."""
    x = np.outer(np.linspace(0.0, length, points), along)
    inv_mass = np.full(points, 1.0 / mass)
    inv_mass[[0, -1]] = 2.0 / mass
    return Model(x, [(i, i + 1) for i in range(points - 1)], inv_mass, 1e-8, radius=RADIUS,
                 **options)


def predicted_angle(wind, mu, g=9.81):
    """theta [rad] from the vertical of a uniform rope in a uniform wind (module)."""
    k = 0.5 * RHO * C_N * 2.0 * RADIUS * wind ** 2 / (mu * g)
    return np.arcsin((np.sqrt(1.0 + 4.0 * k * k) - 1.0) / (2.0 * k))


@pytest.mark.parametrize("wind", [4.0, 11.0])
@pytest.mark.parametrize("solver", ["direct", "sweep"])
def test_a_rope_in_a_uniform_wind_hangs_at_the_angle_drag_and_weight_predict(wind, solver):
    model = hanging(damping=1.0, solver=solver)
    state = model.state()
    air = Air(RHO, C_N, 0.0)
    for _ in range(24 * 15):
        step(model, state, DT, 10, air=air, wind=(wind, 0.0, 0.0))
    span = state.x[-1] - state.x[0]
    theta = np.arctan2(span[0], -span[2])
    mu = 0.01 / (1.0 / 9)
    assert theta == pytest.approx(predicted_angle(wind, mu), rel=0.01)
    # straight, as every particle carries the same load per length
    direction = span / np.linalg.norm(span)
    assert np.abs(np.cross(state.x - state.x[0], direction)).max() < 1e-3
    assert np.abs(state.v).max() < 1e-3  # settled


def test_in_a_gale_the_rope_flutters_about_the_predicted_angle():
    """At K = 5 (25 m/s here) the straight rope is no longer a stable equilibrium: the normal
    drag depends on the segments' directions (a follower load), and the rope flutters by
    several degrees about it, with the same substeps or four times as many. Its mean angle
    is still the balance of drag and weight."""
    model = hanging(damping=1.0)
    state = model.state()
    angles = []
    for frame in range(24 * 20):
        step(model, state, DT, 10, air=Air(RHO, C_N, 0.0), wind=(25.0, 0.0, 0.0))
        if frame >= 24 * 10:
            span = state.x[-1] - state.x[0]
            angles.append(np.arctan2(span[0], -span[2]))
    assert np.mean(angles) == pytest.approx(predicted_angle(25.0, 0.09), rel=0.05)


def test_a_rope_lying_along_the_wind_feels_no_push():
    model = free_rope()
    state = model.state()
    for _ in range(24):
        step(model, state, DT, 10, gravity=(0.0, 0.0, 0.0), air=Air(RHO, C_N, 0.0),
             wind=(20.0, 0.0, 0.0))
    assert np.array_equal(state.x, model.particle_rest_x)
    # skin friction alone pulls it along, never sideways
    state = model.state()
    for _ in range(24):
        step(model, state, DT, 10, gravity=(0.0, 0.0, 0.0), air=Air(RHO, C_N, 0.01),
             wind=(20.0, 0.0, 0.0))
    assert state.x[:, 0].min() > 0.0 + 1e-4
    assert np.abs(state.x[:, 1:]).max() < 1e-12
    # across the wind it is blown away
    across = free_rope(along=(0.0, 1.0, 0.0))
    state = across.state()
    step(across, state, DT, 10, gravity=(0.0, 0.0, 0.0), air=Air(), wind=(20.0, 0.0, 0.0))
    assert state.v[:, 0].min() > 0.5


def test_a_rope_moving_through_still_air_slows_as_quadratic_drag_says():
    """A free rope moving across its length at v0 in still air: mu dv/dt = -c v^2 per
    length, c = 0.5 rho C_n d, so v(t) = v0 / (1 + c v0 t / mu)."""
    model = free_rope()
    state = model.state()
    v0 = 30.0
    state.v[:, 1] = v0
    for _ in range(24):
        step(model, state, DT, 20, gravity=(0.0, 0.0, 0.0), air=Air(RHO, C_N, 0.0))
    mu = 0.01 / 0.1
    c = 0.5 * RHO * C_N * 2.0 * RADIUS
    assert state.v[:, 1] == pytest.approx(v0 / (1.0 + c * v0 * 1.0 / mu), rel=0.01)
    assert np.abs(state.v[:, [0, 2]]).max() < 1e-9


def energy(model, state, g=9.81):
    w = model.particle_inv_mass
    mass = np.divide(1.0, w, out=np.zeros_like(w), where=w > 0.0)
    return float(0.5 * np.sum(mass[:, None] * state.v ** 2) + np.sum(mass * g * state.x[:, 2]))


@pytest.mark.parametrize("density", [1.2, 1000.0, 1e6])
def test_drag_in_still_air_never_raises_the_energy(density):
    """Released from horizontal, in air, water and something far thicker (the bound keeps
    it stable): kinetic + gravitational energy only falls."""
    x = np.zeros((30, 3))
    x[:, 0] = np.linspace(0.0, 2.0, 30)
    inv_mass = np.full(30, 20.0)
    inv_mass[0] = 0.0
    model = Model(x, [(i, i + 1) for i in range(29)], inv_mass, 0.0, radius=RADIUS,
                  strain_limit=None)
    state = model.state()
    air = Air(density, C_N, 0.01)
    last = energy(model, state)
    for _ in range(24 * 4):
        step(model, state, DT, 10, air=air)
        now = energy(model, state)
        assert now <= last + 1e-9
        last = now
    assert np.isfinite(state.x).all()


@pytest.mark.parametrize("wind", [0.0, 8.0, 30.0])
def test_the_airs_work_bounds_what_the_rope_gains(wind):
    """``State.air_work``: the drag's work m a . dx summed substep by substep. A hanging rope
    set swinging: its kinetic + gravitational energy never rises above its start plus that
    work, frame by frame, in a gusting wind across it and in still air (where the work is
    negative); a copy of the state keeps it."""
    model = hanging()
    state = model.state()
    state.v[:, 0] = np.linspace(0.0, 1.0, 10)  # swinging, so still air brakes it
    assert state.air_work is None
    start = energy(model, state)
    gusts = np.random.default_rng(4).uniform(0.5, 1.5, 48)
    for gust in gusts:
        step(model, state, DT, 10, air=Air(), wind=(0.0, wind * gust, 0.0))
        assert energy(model, state) <= start + state.air_work.sum() + 1e-9
    if wind > 0.0:
        assert state.air_work.sum() > 0.01  # [J] it blew the rope up to its angle
    else:
        assert state.air_work.sum() < 0.0
    assert np.array_equal(state.copy().air_work, state.air_work)


def test_a_strong_wind_never_blows_a_particle_faster_than_itself():
    model = free_rope(along=(0.0, 1.0, 0.0), mass=1e-5)  # a thread in a gale
    state = model.state()
    for _ in range(12):
        step(model, state, DT, 4, gravity=(0.0, 0.0, 0.0), air=Air(), wind=(30.0, 0.0, 0.0))
        assert np.abs(state.v).max() <= 30.0 + 1e-9
    assert state.v[:, 0] == pytest.approx(30.0)


def test_without_air_nothing_changes_bit_for_bit():
    model = hanging(damping=0.5)
    plain, none, thin, still = (model.state() for _ in range(4))
    for s in (plain, none, thin, still):
        s.v[:, 0] = np.linspace(0.0, 1.0, model.particle_count)
    pointlike = hanging(damping=0.5, radius=0.0)
    for _ in range(12):
        step(model, plain, DT, 8)
        step(model, none, DT, 8, air=None, wind=(5.0, 0.0, 0.0))
        step(model, thin, DT, 8, air=Air(density=0.0), wind=(5.0, 0.0, 0.0))
        step(pointlike, still, DT, 8, air=Air(), wind=(5.0, 0.0, 0.0))
    for s in (none, thin, still):
        assert np.array_equal(s.x, plain.x) and np.array_equal(s.v, plain.v)


def test_wind_with_pins_moving_and_a_ground():
    """With the drag taken at every substep, the pins still follow their straight path and
    the ground still holds."""
    model = hanging(damping=0.5)
    state = model.state()
    target = model.particle_rest_x.copy()
    for frame in range(24):
        target[0] = (0.02 * (frame + 1), 0.0, 0.0)
        step(model, state, DT, 8, air=Air(), wind=(10.0, 0.0, 0.0), pin_targets=target,
             colliders=Plane((0.0, 0.0, -0.95)))
        assert np.array_equal(state.x[0], target[0])
    assert state.x[1:, 2].min() >= -0.95 + RADIUS - 1e-6


def test_drag_forces_follow_the_formula():
    x = np.array([[0.0, 0.0, 0.0], [0.0, 0.0, -1.0]])
    force = drag_forces(x, np.zeros((2, 3)), np.tile((3.0, 0.0, 4.0), (2, 1)), [(0, 1)],
                        RADIUS, Air(RHO, C_N, 0.01))
    # each end: half the segment, normal 3 m/s, tangential 4 m/s (along +z)
    normal = 0.5 * 0.5 * RHO * C_N * 2 * RADIUS * 3.0 * 3.0
    along = 0.5 * 0.5 * RHO * np.pi * 0.01 * 2 * RADIUS * 4.0 * 4.0
    assert force[0] == pytest.approx([normal, 0.0, along])
    assert force[1] == pytest.approx([normal, 0.0, along])


@pytest.mark.parametrize("kwargs, name", [
    ({"air": (1.2, 1.2, 0.0)}, "air"),
    ({"air": Air(density=-1.0)}, "air.density"),
    ({"air": Air(normal_drag=float("nan"))}, "air.normal_drag"),
    ({"air": Air(), "wind": np.zeros((3, 3))}, "wind"),
    ({"air": Air(), "wind": (np.inf, 0.0, 0.0)}, "wind"),
])
def test_bad_air_and_wind_name_the_argument(kwargs, name):
    model = hanging()
    state = model.state()
    before = state.x.copy()
    with pytest.raises(ValueError, match=f"^{name}:"):
        step(model, state, DT, 4, **kwargs)
    assert np.array_equal(state.x, before)
