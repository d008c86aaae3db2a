"""Rods at few substeps and in kinks: the pulls through the frames (``kernels_rod_pull``) are
explicit, so ``rod.least_substeps`` takes the substeps their stiffness needs, and they fade
where a point kinks past 120 degrees (``kernels_rod.kink_fade``), where the frames that
define them are undefined."""

import numpy as np
import pytest

from benchmarks.bench_rod_energy import energy, hung_curl
from xpbd_addon.core import step
from xpbd_addon.core.energy import stored_energy
from xpbd_addon.core.rod import TWISTING_SUBSTEP, fresh_state, least_substeps, rod_energies
from xpbd_addon.core.solve import kernels_rod_pull

from .test_rod import _curl

DT = 1.0 / 24.0
G = 9.81


def _hung_curl(points, turn, bend_stiffness, density):
    """A curl drawn out of its plane, hung by its first point, without twist dynamics (only
    the bending target's pull acts through the frames)."""
    return hung_curl(points, turn, bend_stiffness, density, np.inf)


def _total_energy(model, state):
    """Kinetic + gravitational + stored [J] (no twist dynamics: no twist rate)."""
    free = model.particle_inv_mass > 0.0
    mass = np.zeros(len(state.x))
    mass[free] = 1.0 / model.particle_inv_mass[free]
    return (0.5 * (mass[:, None] * state.v**2).sum() + G * (mass * state.x[:, 2]).sum()
            + stored_energy(model, state.x, state.rod))


@pytest.mark.parametrize("points, turn, bend_stiffness, density", [
    (24, 5.0, 3.96, 0.15),  # at 3 substeps it had gained 239 times its energy in 3 s
    (55, 7.72, 1.48, 0.2),  # 10 times at 3 and 4 substeps
])
def test_a_stiff_tight_curl_released_at_three_substeps_keeps_its_energy(
        points, turn, bend_stiffness, density):
    """Stiff curls let go under gravity at 3 substeps a frame: the energy never rises by
    more than 1 % of the rope's weight times its length in 3 s. The pull of their bending
    targets turning with the frames is stiff (omega^2 ~ |b|^2 w / (4 alpha l^2)), and
    ``least_substeps`` takes the substeps it needs (8 and 15 here)."""
    model = _hung_curl(points, turn, bend_stiffness, density)
    assert least_substeps(model.rod_layout, model.particle_rest_x, model.particle_inv_mass,
                          DT) > 3
    state = model.state()
    step(model, state, 1e-9, 1)
    start = _total_energy(model, state)
    free = model.particle_inv_mass > 0.0
    weight = G * (1.0 / model.particle_inv_mass[free]).sum()
    length = np.linalg.norm(np.diff(model.particle_rest_x, axis=0), axis=1).sum()
    for _ in range(72):
        step(model, state, DT, 3)
        assert _total_energy(model, state) <= start + 0.01 * weight * length


def test_an_everyday_curl_takes_the_substeps_it_is_given():
    """A soft curl (EI 0.05 N m^2, 24 points, 4 rad) whose twist is held needs no more than
    one substep a frame for its pulls: the bound costs nothing where the pull is soft. With
    its twist moving, its substeps are at most ``TWISTING_SUBSTEP`` (10 a frame at 24 fps)."""
    held = _curl(24, 4.0, np.inf)
    assert least_substeps(held.rod_layout, held.particle_rest_x, held.particle_inv_mass,
                          DT) == 1
    twisting = _curl(24, 4.0, None)
    assert least_substeps(twisting.rod_layout, twisting.particle_rest_x,
                          twisting.particle_inv_mass, DT) == round(DT / TWISTING_SUBSTEP)


def test_a_soft_twisting_rod_whipped_at_three_substeps_keeps_its_energy():
    """A soft curl with its twist moving (30 points, 6 rad, EI 0.14 N m^2), every point set
    moving at random (1.5 m/s), stepped at 3 substeps a frame for 3 s: whipped into a sharp
    kink within a substep it had gained 1.8 times its energy (the bounds taken at the frame's
    start cannot see the kink coming); its substeps are now at most 1/240 s, and the energy
    (the twist's kinetic and stored included) never rises by over 1 % of the start's."""
    model = hung_curl(30, 6.0, 0.14, 0.2, None)
    state = model.state()
    state.v = np.random.default_rng(1).normal(0.0, 1.5, state.x.shape)
    state.v[0] = 0.0
    free = model.particle_inv_mass > 0.0
    mass = np.zeros(len(state.x))
    mass[free] = 1.0 / model.particle_inv_mass[free]
    step(model, state, 1e-9, 1)  # the rod's frames
    start = energy(model, state, mass)
    for _ in range(72):
        step(model, state, DT, 3)
        assert energy(model, state, mass) <= start + 0.01 * abs(start)


def _folded(model, degrees):
    """The rest shape of ``model`` folded at point 5 by ``degrees`` between its segments,
    and its frames carried there."""
    rest = model.particle_rest_x
    x = rest.copy()
    tangent = (x[5] - x[4]) / np.linalg.norm(x[5] - x[4])
    side = np.cross(tangent, x[6] - x[5])
    side /= np.linalg.norm(side)
    turned = (np.cos(np.radians(degrees)) * tangent
              + np.sin(np.radians(degrees)) * np.cross(side, tangent))
    x[6:] += x[5] + np.linalg.norm(x[6] - x[5]) * turned - x[6]
    return x, fresh_state(model.rod_layout, rest, x)


def test_a_rod_folded_back_on_itself_pulls_finitely_and_its_energy_is_continuous():
    """A curl folded at one point towards 180 degrees: the pull through its frames stays
    bounded and its energy continuous. Before the fade the twist's pull was 4.6e3 m/s^2 at
    179.9 degrees, 1.3e8 at 179.999 and 5e16 at 180, and the twist energy jumped from
    0.00014 J to 1.6 J."""
    model = _curl(12, 3.0, None)
    layout = model.rod_layout
    pulls, energies = [], []
    for degrees in (170.0, 179.0, 179.9, 179.999, 180.0):
        x, frames = _folded(model, degrees)
        pull = np.zeros_like(x)
        kernels_rod_pull.add_frame_accelerations(
            x, layout.particles, layout.starts, layout.rest, frames.normal, frames.bend_rest,
            frames.twist_rest, layout.bend_compliance, layout.twist_k,
            model.particle_inv_mass, pull)
        assert np.isfinite(pull).all()
        pulls.append(np.abs(pull).max())
        energies.append(sum(rod_energies(layout, frames, x)))
    assert max(pulls) < 2.0 * pulls[0]
    assert np.abs(np.diff(energies[1:])).max() < 0.01 * energies[0]


def test_the_substep_bound_fades_the_twist_as_the_kernels_do():
    """``rod.kink_fade`` (numpy, for ``least_substeps``) is ``kernels_rod.kink_fade`` at
    every cosine, 1 down to cos -1/2 and 0 at a fold."""
    from xpbd_addon.core import rod
    from xpbd_addon.core.solve import kernels_rod

    cosines = np.linspace(-1.0, 1.0, 401)
    np.testing.assert_allclose(rod.kink_fade(cosines),
                               [kernels_rod.kink_fade(c) for c in cosines], rtol=0, atol=1e-15)
    assert rod.kink_fade(np.array([-0.5, -1.0])).tolist() == [1.0, 0.0]


def test_a_twist_stiffness_beyond_any_materials_twists_as_rigid_and_stays_finite():
    """GJ of 1e25 N m^2 or Blender's float maximum (what a script's inf becomes, found by
    the extreme values of the fuzz sessions): the twist solve overflowed into NaN (at 1e25
    in this scene; in Blender the panel said the rope blew up and asked for more substeps).
    Beyond ``MAX_TWIST_STIFFNESS`` the twist is rigid: such a rod moves exactly as at 1e12,
    and nearly as at 1e8 (its twist is rigid by then)."""
    from xpbd_addon.core import Model, Rod
    from xpbd_addon.core.rod import MAX_TWIST_STIFFNESS

    n = 12
    x = np.zeros((n, 3))
    x[:, 0], x[:, 2] = np.linspace(0.0, 1.0, n), 0.1 * np.sin(np.linspace(0.0, 3.0, n))
    edges = np.stack([np.arange(n - 1), np.arange(1, n)], axis=1)
    inv_mass = np.full(n, 20.0)
    inv_mass[0] = 0.0

    def played(twist_stiffness):
        model = Model(x, edges, inv_mass, 1e-7, bending_compliance=1e-2,
                      rod=Rod(twist_stiffness=twist_stiffness, bend_rest="modelled"))
        state = model.state()
        for _ in range(24):
            step(model, state, DT, 10)
        return state.x

    rigid = played(MAX_TWIST_STIFFNESS)
    assert np.isfinite(rigid).all()
    for beyond in (1e25, 1e28, 3.4028234663852886e38):
        assert np.array_equal(played(beyond), rigid), beyond
    assert np.abs(played(1e8) - rigid).max() < 1e-6
