"""Rods (``core.rod``): a rope that keeps its modelled shape, twists and yields.

Statics against the beam, the elastica and the coil spring; the twist's wave speed; a turned
end turning the rod; energy; plasticity; a state carried in its arrays; bad input."""

import numpy as np
import pytest

from xpbd_addon.core import Model, Rod, step
from xpbd_addon.core.energy import stored_energy
from xpbd_addon.core.material import RopeMaterial, rope_parameters

DT = 1.0 / 24.0
G = 9.81


def clamped(points, free_length, bend_stiffness, density, angle, *, rod=None, damping=5.0,
            twist_stiffness=None, radius=0.0):
    """A rod clamped by its first two points (the second at the origin, tangent +x), its free
    part of ``free_length`` [m] modelled with the tangent angle ``angle(s)`` [rad] in the x-z
    plane at arc length s."""
    segment = free_length / (points - 2)
    x = np.zeros((points, 3))
    for i in range(1, points):
        mid = segment * (i - 1.5)
        turn = angle(mid) if mid > 0.0 else 0.0
        x[i] = x[i - 1] + segment * np.array([np.cos(turn), 0.0, np.sin(turn)])
    x -= x[1]
    pinned = np.zeros(points, dtype=bool)
    pinned[:2] = True
    edges = [(i, i + 1) for i in range(points - 1)]
    inv_mass, compliance, bending = rope_parameters(
        x, edges, RopeMaterial(density, None, bend_stiffness), pinned=pinned)
    if rod is None:
        rod = Rod(twist_stiffness=twist_stiffness)
    return Model(x, edges, inv_mass, compliance, bending_compliance=bending, rod=rod,
                 damping=damping, strain_limit=None, radius=radius)


def settle(model, seconds, substeps=20, gravity=(0.0, 0.0, -G)):
    state = model.state()
    for _ in range(int(round(seconds / DT))):
        step(model, state, DT, substeps, gravity=gravity)
    return state


def elastica_tip(length, bend_stiffness, weight, curvature, samples=4000):
    """Tip (x, z) [m] of a clamped planar rod of rest curvature ``curvature`` [1/m] under its
    own ``weight`` [N/m]: EI (theta' - kappa0) = -M(s), M the moment of the load beyond s,
    solved by relaxed fixed-point iteration on a fine grid."""
    s = np.linspace(0.0, length, samples)
    ds = s[1] - s[0]
    theta = curvature * s
    for _ in range(400):
        mid = 0.5 * (theta[1:] + theta[:-1])
        x = np.concatenate([[0.0], np.cumsum(np.cos(mid) * ds)])
        z = np.concatenate([[0.0], np.cumsum(np.sin(mid) * ds)])
        load_beyond = np.concatenate([np.cumsum(np.full(samples - 1, weight * ds)[::-1])[::-1],
                                      [0.0]])
        lever = np.concatenate([np.cumsum((weight * ds * 0.5 * (x[1:] + x[:-1]))[::-1])[::-1],
                                [0.0]])
        moment = lever - x * load_beyond
        slope = curvature - moment / bend_stiffness
        new = np.concatenate([[0.0], np.cumsum(0.5 * (slope[1:] + slope[:-1]) * ds)])
        if np.abs(new - theta).max() < 1e-13:
            break
        theta = 0.5 * (theta + new)
    return np.array([x[-1], z[-1]])


def test_a_weightless_quarter_circle_keeps_its_shape_exactly():
    radius = 1.0 / np.pi
    rod = clamped(21, 0.5, 0.5, 0.1, lambda s: s / radius)
    rope = Model(rod.particle_rest_x, rod.edge_index, rod.particle_inv_mass, 0.0,
                 bending_compliance=rod.particle_bend_compliance, damping=5.0)
    held = settle(rod, 2.0, gravity=(0.0, 0.0, 0.0))
    straightened = settle(rope, 2.0, gravity=(0.0, 0.0, 0.0))
    assert np.abs(held.x - rod.particle_rest_x).max() < 1e-9
    assert np.abs(straightened.x - rope.particle_rest_x).max() > 0.05  # a rope uncurls


def test_a_straight_rod_droops_as_the_cantilever_within_one_percent():
    """delta = q L^4 / (8 EI), small deflection."""
    rod = clamped(42, 0.5, 1.0, 0.1, lambda s: 0.0)
    droop = -settle(rod, 8.0).x[-1, 2]
    assert droop == pytest.approx(0.1 * G * 0.5**4 / (8 * 1.0), rel=0.01)


@pytest.mark.parametrize("points", [22, 42])
def test_a_quarter_circle_sags_as_the_elastica(points):
    """A rod modelled as a quarter circle curling up, clamped level, sags under its weight to
    the elastica's shape: the tip's displacement within 1 %."""
    length, stiffness, density = 0.5, 0.05, 0.2
    curvature = np.pi / 2 / length
    rod = clamped(points, length, stiffness, density, lambda s: curvature * s)
    state = settle(rod, 8.0)
    tip = state.x[-1, [0, 2]]
    rest = rod.particle_rest_x[-1, [0, 2]]
    expected = elastica_tip(length, stiffness, density * G, curvature)
    assert np.abs(state.v).max() < 1e-6
    assert np.linalg.norm(expected - rest) > 0.2  # a large deflection
    assert np.linalg.norm(tip - expected) < 0.01 * np.linalg.norm(expected - rest)


def _coil(turns, from_axis, stiffness, density=0.02, coil_radius=0.05, pitch=0.012,
          per_turn=24, damping=4.0):
    """A close-coiled helix of wire (EI ``stiffness`` [N m^2], ``density`` [kg/m]) clamped by
    its first two points: at the end of a straight lead from its axis (``from_axis``, as a
    phone cord hangs from its plug) or at a point of its rim. Returns (model, length of the
    helix's wire [m])."""
    angle = np.linspace(0.0, 2 * np.pi * turns, turns * per_turn + 1)
    x = np.stack([coil_radius * np.cos(angle), coil_radius * np.sin(angle),
                  -pitch * angle / (2 * np.pi)], axis=1)
    wire = np.linalg.norm(np.diff(x, axis=0), axis=1).sum()
    if from_axis:
        lead = np.zeros((4, 3))
        lead[:, 0] = np.linspace(0.0, coil_radius, 5)[:-1]
        x = np.concatenate([lead, x])
    edges = [(i, i + 1) for i in range(len(x) - 1)]
    pinned = np.zeros(len(x), dtype=bool)
    pinned[:2] = True
    inv_mass, compliance, bending = rope_parameters(
        x, edges, RopeMaterial(density, None, stiffness), pinned=pinned)
    model = Model(x, edges, inv_mass, compliance, bending_compliance=bending, rod=Rod(),
                  damping=damping, radius=0.002, strain_limit=None)
    return model, wire


@pytest.mark.parametrize("stiffness", [0.05, 0.2])
def test_a_coiled_cord_stretches_as_a_coil_spring(stiffness):
    """A close-coiled helix hanging from its axis under its own weight stretches by
    W / (2 k), the spring's stiffness k = GJ / (R^2 L) of rod theory (the wire's torsion;
    its bending and the helix angle neglected, a few percent here: measured 2.2 % less at
    both stiffnesses), and its axis stays under the plug. GJ is the default, EI / 1.3.
    Before the bending target's turn pulled on the centreline the coil tilted 19 degrees
    and rose: EI 0.2 stretched 0.3 mm against 3.9."""
    model, wire = _coil(5, True, stiffness)
    state = settle(model, 6.0)
    spring = (stiffness / 1.3) / (0.05**2 * wire)
    helix = state.x[4:]
    stretch = model.particle_rest_x[-1, 2] - helix[-1, 2]
    assert np.abs(state.v).max() < 1e-4
    assert stretch == pytest.approx(0.02 * wire * G / (2 * spring), rel=0.04)
    assert np.abs(helix[:-1, :2].mean(axis=0)).max() < 1e-3  # [m]: whole turns, no tilt


def test_where_a_coil_hung_from_its_rim_settles_does_not_depend_on_the_substeps():
    """Hung from a point of its rim, a coil swings its axis under the clamp. Where it comes
    to rest is the same at 40 and 80 substeps within 2 mm (its tip moves 4 cm; before the
    bending target's turn pulled on the centreline the two were 12 mm apart)."""
    model, _ = _coil(3, False, 0.1)
    tips = [settle(model, 12.0, substeps=substeps).x[-1] for substeps in (40, 80)]
    assert np.linalg.norm(tips[0] - model.particle_rest_x[-1]) > 0.03
    assert np.linalg.norm(tips[0] - tips[1]) < 2e-3


def _carried(layout, frames, x, moved):
    """The rod's ``frames`` at positions ``x`` carried to ``moved`` (N, 3) [m], each segment's
    normal by the least rotation of its tangent (a copy)."""
    from xpbd_addon.core.solve import kernels_rod as kernels

    carried = frames.copy()
    for k in range(len(layout.particles) - 1):
        e, f = layout.particles[k], layout.particles[k + 1]
        old, new = kernels._tangent(x, e, f), kernels._tangent(moved, e, f)
        carried.normal[e] = kernels._normal_to(
            new, kernels._transport(old, new, kernels._row(frames.normal, e)))
    return carried


@pytest.mark.parametrize("kinked", [False, True])
def test_the_pull_through_the_frames_is_the_gradient_of_the_rod_energy(kinked):
    """The accelerations the rod adds to the solve (its twist's and its bending target's
    pull through frames carried along with their segments) are -w grad (E_b + E_t), the
    frames carried to each moved position by the least rotation (central differences).
    Kinked: one point folded to 139 degrees, where its twist and rest bend fade
    (``kernels_rod.kink_fade``), so the fade's own pull is in it."""
    from xpbd_addon.core import rod as rods
    from xpbd_addon.core.solve import kernels_rod as kernels

    model, _ = _coil(1, False, 0.1, per_turn=10)
    state = model.state()
    state.v = np.random.default_rng(2).normal(0.0, 0.3, state.x.shape)
    state.v[:2] = 0.0
    step(model, state, DT, 40)  # frames, twist and bend away from the rest shape
    layout, frames, x = model.rod_layout, state.rod, state.x.copy()
    if kinked:  # fold the rod at point 8 (cos -0.75 between its segments) and twist it there
        before = kernels._unit(*(x[8] - x[7]))
        side = kernels._unit(*np.cross(before, x[9] - x[8]))
        turned = -0.75 * np.array(before) + np.sqrt(1.0 - 0.75**2) * np.cross(side, before)
        x[9:] += x[8] + np.linalg.norm(x[9] - x[8]) * turned - x[9]
        frames = _carried(layout, frames, state.x, x)
        assert np.dot(kernels._tangent(x, 7, 8), kernels._tangent(x, 8, 9)) == pytest.approx(-0.75)
        for e in range(8, len(x) - 1):
            tangent = kernels._tangent(x, e, e + 1)
            frames.normal[e] = kernels._turn(tangent, kernels._row(frames.normal, e), 0.5)
        assert 0.0 < kernels.kink_fade(-0.75) < 1.0 and kernels.kink_fade_slope(-0.75) > 0.0
    weights = np.ones(len(x))
    pull = np.zeros_like(x)
    rods.RodFrame.add_frame_pull(
        type("Frame", (), {"layout": layout, "state": frames})(), x, weights, pull)

    def energy(moved):
        return sum(rods.rod_energies(layout, _carried(layout, frames, x, moved), moved))

    gradient = np.zeros_like(x)
    for i in range(len(x)):
        for c in range(3):
            moved = x.copy()
            moved[i, c] += 1e-7
            up = energy(moved)
            moved[i, c] -= 2e-7
            gradient[i, c] = (up - energy(moved)) / 2e-7
    bend_only = np.zeros_like(x)  # what the bending rows of the solve already hold
    for k in range(1, len(x) - 1):
        a, p, b = layout.particles[k - 1:k + 2]
        t, n1, n2 = kernels._point_frame(x, frames.normal, a, p, b)
        rest = frames.bend_rest[p]
        fade = kernels.kink_fade(np.dot(kernels._tangent(x, a, p), kernels._tangent(x, p, b)))
        target = fade * (rest[0] * np.array(n1) + rest[1] * np.array(n2) + rest[2] * np.array(t))
        force = (np.array(kernels._bend_vector(x, layout.rest, k, a, p, b)) - target
                 ) / layout.bend_compliance[p]
        bend_only[b] += force / layout.rest[k]
        bend_only[a] += force / layout.rest[k - 1]
        bend_only[p] -= force / layout.rest[k] + force / layout.rest[k - 1]
    through_frames = gradient - bend_only
    assert np.abs(through_frames).max() > 0.1 * np.abs(bend_only).max()
    np.testing.assert_allclose(pull, -through_frames, atol=1e-6 * np.abs(gradient).max())


def _straight_rod(points, length, twist_stiffness, radius, density):
    x = np.zeros((points, 3))
    x[:, 0] = np.linspace(0.0, length, points)
    segment = length / (points - 1)
    inv_mass = np.full(points, 1.0 / (density * segment))
    inv_mass[0] = 0.0
    edges = [(i, i + 1) for i in range(points - 1)]
    return Model(x, edges, inv_mass, 0.0, radius=radius, bending_compliance=segment / 1.0,
                 rod=Rod(twist_stiffness=twist_stiffness))


@pytest.mark.parametrize("substeps", [10, 20])
def test_twist_travels_at_the_torsional_wave_speed(substeps):
    """Turning the pinned end by 90 degrees over 0.25 s sends a twist down a straight rod at
    c = sqrt(GJ / (rho J)), rho J = m r^2 / 2 per length: within 5 %."""
    points, length, density, radius, twist = 101, 2.0, 1.0, 0.05, 1.25e-3
    model = _straight_rod(points, length, twist, radius, density)
    state = model.state()
    step(model, state, 1e-6, 1, gravity=(0.0, 0.0, 0.0))
    rest = state.rod.normal.copy()
    angles = []
    frames = int(3.0 / DT)
    for frame in range(frames):
        turns = np.full(points, np.nan)
        turns[0] = (np.pi / 2) * (min((frame + 1) * DT / 0.25, 1.0) - min(frame * DT / 0.25,
                                                                          1.0))
        step(model, state, DT, substeps, gravity=(0.0, 0.0, 0.0), pin_turns=turns)
        now = state.rod.normal
        angles.append(np.arctan2(rest[:, 1] * now[:, 2] - rest[:, 2] * now[:, 1],
                                 (rest[:, 1:] * now[:, 1:]).sum(axis=1)))
    angles = np.array(angles)
    times = np.arange(1, frames + 1) * DT

    def arrival(segment):
        k = int(np.argmax(angles[:, segment] >= np.pi / 4))
        a0, a1 = angles[k - 1, segment], angles[k, segment]
        return times[k - 1] + (np.pi / 4 - a0) / (a1 - a0) * DT

    spacing = length / (points - 1)
    measured = 50 * spacing / (arrival(75) - arrival(25))
    assert angles[-1, 0] == pytest.approx(np.pi / 2)  # the held end turned exactly
    assert measured == pytest.approx(np.sqrt(twist / (0.5 * density * radius**2)), rel=0.05)


@pytest.mark.parametrize("twist_stiffness", [0.5, 2.0])
def test_turning_the_pinned_end_turns_a_hook_over(twist_stiffness):
    """A hook modelled curling up; its clamped end turned 180 degrees about the rod's axis
    over a second (``pin_turns``): the hook curls down. Held without a turn it stays up."""
    hook = clamped(30, 0.56, 0.5, 0.05, lambda s: min(s / 0.56, 1.0) * np.pi,
                   twist_stiffness=twist_stiffness, damping=3.0)
    tip_up = hook.particle_rest_x[-1, 2]
    assert tip_up > 0.3
    for turning in (True, False):
        state = hook.state()
        for frame in range(48):
            turns = np.zeros(len(state.x))
            turns[0] = np.pi / 24 if turning and frame < 24 else 0.0
            step(hook, state, DT, 10, gravity=(0.0, 0.0, 0.0), pin_turns=turns)
        if turning:
            assert state.x[-1, 2] == pytest.approx(-tip_up, abs=0.01)
        else:
            assert state.x[-1, 2] == pytest.approx(tip_up, abs=1e-6)


def _curl_shape(points, turn):
    angle = np.linspace(0.0, turn, points)
    return np.stack([np.sin(angle) / turn, np.linspace(0.0, 0.2, points),
                     (1.0 - np.cos(angle)) / turn], axis=1)  # a curl drawn out of its plane


def _curl(points, turn, twist_stiffness):
    x = _curl_shape(points, turn)
    edges = [(i, i + 1) for i in range(points - 1)]
    inv_mass, compliance, bending = rope_parameters(x, edges, RopeMaterial(0.1, None, 0.05))
    return Model(x, edges, inv_mass, compliance, bending_compliance=bending, radius=0.01,
                 rod=Rod(twist_stiffness=twist_stiffness))


def _energy(model, state):
    mass = 1.0 / model.particle_inv_mass
    kinetic = 0.5 * (mass[:, None] * state.v**2).sum()
    layout = model.rod_layout
    kinetic += 0.5 * (layout.inertia * state.rod.twist_rate[layout.particles]**2).sum()
    return kinetic, stored_energy(model, state.x, state.rod)


@pytest.mark.parametrize("twist_stiffness", [None, 0.05, np.inf])
@pytest.mark.parametrize("substeps", [5, 20, 80])
def test_a_released_rod_never_gains_energy(twist_stiffness, substeps):
    """A weightless curl set moving at random: kinetic + stored (stretch, bending against
    the rest shape, twist) never rises over 10 s."""
    model = _curl(24, 4.0, twist_stiffness)
    state = model.state()
    step(model, state, 1e-9, 1, gravity=(0.0, 0.0, 0.0))
    state.v = np.random.default_rng(1).normal(0.0, 0.5, state.x.shape)
    start = sum(_energy(model, state))
    for _ in range(240):
        step(model, state, DT, substeps, gravity=(0.0, 0.0, 0.0))
        assert sum(_energy(model, state)) <= start * (1.0 + 1e-9)


def test_a_rod_released_away_from_its_shape_turns_its_stored_energy_into_motion():
    """A curl of 4 rad held uncurled to 2 rad, let go: it curls up (kinetic energy peaks
    above a tenth of what the bending stored), and kinetic + stored never rises."""
    model = _curl(24, 4.0, None)
    state = model.state()
    state.x = _curl_shape(24, 2.0)
    step(model, state, 1e-9, 1, gravity=(0.0, 0.0, 0.0))
    state.v[:] = 0.0
    stored = _energy(model, state)[1]
    peak = 0.0
    for _ in range(48):
        step(model, state, DT, 20, gravity=(0.0, 0.0, 0.0))
        kinetic, now = _energy(model, state)
        peak = max(peak, kinetic)
        assert kinetic + now <= stored * (1.0 + 1e-9)
    assert stored > 0.0 and peak > 0.1 * stored


@pytest.mark.parametrize("plastic", [True, False])
def test_a_wire_bent_past_its_yield_stays_bent(plastic):
    """A straight wire clamped at one end, its tip led 20 cm sideways and held, then let go:
    with plasticity (yield at a curvature of 0.2 1/m) it stays bent (most of the way), without
    it springs back straight."""
    rod = Rod(plastic_yield=0.2, plastic_creep=20.0) if plastic else Rod()
    model = clamped(21, 0.5, 0.2, 0.1, lambda s: 0.0, rod=rod)
    inv_mass = model.particle_inv_mass.copy()
    inv_mass[-1] = 0.0
    led = model.with_changes(inv_mass=inv_mass)
    state = led.state()
    targets = state.x.copy()
    start = targets[-1].copy()
    for frame in range(48):
        targets[-1] = start + min((frame + 1) / 24, 1.0) * (np.array([0.4, 0.2, 0.0]) - start)
        step(led, state, DT, 10, gravity=(0.0, 0.0, 0.0), pin_targets=targets)
    for _ in range(72):
        step(model, state, DT, 10, gravity=(0.0, 0.0, 0.0))
    assert np.abs(state.v).max() < 0.01
    if plastic:
        assert state.x[-1, 1] > 0.15
    else:
        assert abs(state.x[-1, 1]) < 0.01


def test_a_state_carried_in_its_arrays_goes_on_the_same():
    """What a cache keeps (x, v and the rod's state, ``State.copy``) steps to the same bits
    as the state that went on: frames in any order equal playback."""
    model = _curl(24, 4.0, None)
    state = model.state()
    state.v = np.random.default_rng(3).normal(0.0, 0.3, state.x.shape)
    for _ in range(5):
        step(model, state, DT, 10)
    kept = state.copy()
    for _ in range(5):
        step(model, state, DT, 10)
        step(model, kept, DT, 10)
    assert np.array_equal(state.x, kept.x) and np.array_equal(state.v, kept.v)
    assert np.array_equal(state.rod.normal, kept.rod.normal)


def test_bad_rod_settings_are_refused():
    x = np.zeros((4, 3))
    x[:, 0] = np.arange(4) * 0.1
    edges = [(0, 1), (1, 2), (2, 3)]
    with pytest.raises(ValueError, match="rod.twist_stiffness"):
        Model(x, edges, np.ones(4), 0.0, rod=Rod(twist_stiffness=-1.0))
    with pytest.raises(ValueError, match="rod.bend_rest"):
        Model(x, edges, np.ones(4), 0.0, rod=Rod(bend_rest="curly"))
    with pytest.raises(ValueError, match="rod.roll"):
        Model(x, edges, np.ones(4), 0.0, rod=Rod(roll=[0.0, np.nan, 0.0, 0.0]))
    with pytest.raises(ValueError, match="rod"):
        Model(x, edges, np.ones(4), 0.0, rod=Rod(), solver="sweep")
    model = Model(x, edges, np.ones(4), 0.0, rod=Rod())
    state = model.state()
    with pytest.raises(ValueError, match="pin_turns"):
        step(model, state, DT, 4, pin_turns=np.zeros(3))
    assert np.array_equal(state.x, x)


def test_a_rod_torn_or_winched_goes_on():
    """A curl torn in the middle (``with_changes(removed_edges=)``) keeps its bend on both
    pieces; a curl winched in (shorter rest lengths) goes on without error or NaN. Its state
    (frames, rest shape) carries over to the new Model."""
    model = _curl(24, 4.0, None)
    state = model.state()
    for _ in range(5):
        step(model, state, DT, 10, gravity=(0.0, 0.0, 0.0))
    torn = model.with_changes(removed_edges=[11])
    for _ in range(24):
        step(torn, state, DT, 10, gravity=(0.0, 0.0, 0.0))
    def turns(x):
        d = np.diff(x, axis=0)
        d /= np.linalg.norm(d, axis=1)[:, None]
        return np.arccos(np.clip((d[1:] * d[:-1]).sum(axis=1), -1.0, 1.0))
    rest = turns(model.particle_rest_x)
    kept = np.delete(turns(state.x), [10, 11])  # the points beside the tear now are ends
    assert np.abs(kept - np.delete(rest, [10, 11])).max() < 0.1 * rest.max()
    winched = model.with_changes(rest_length=0.8 * model.edge_rest_length)
    state = model.state()
    for _ in range(24):
        step(winched, state, DT, 10)
    assert np.isfinite(state.x).all()
    lengths = np.linalg.norm(np.diff(state.x, axis=0), axis=1)
    assert lengths.sum() == pytest.approx(0.8 * model.edge_rest_length.sum(), rel=0.01)
