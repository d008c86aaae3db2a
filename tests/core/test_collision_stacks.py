"""Ropes lying on ropes come to rest: a pile of cables on the floor stops moving, and sleeps.

Contacts that share a particle (a rope lying across another touches it with both segments
round one point, and presses it into the ground) are solved one after the other and leave
each other a few micrometres of overlap at the end of a substep. That residue is undone
with velocity (``kernels_collider.push_out``); pushed out without it, a resting rope kept a
velocity of about -g h, sank and was pushed back every substep, and a pile of crossed ropes
crept by 0.1-0.8 mm a frame for as long as it was played, never still enough to sleep.
What is pushed out beyond the residue still gives no velocity: a rope placed inside another
leaves it gently. And a rope lying across others stays where it lies: the rope pairs are
not solved in one fixed order, which made it crawl along itself towards its last point.
"""

from __future__ import annotations

import numpy as np
import pytest

from xpbd_addon.core import Model, step
from xpbd_addon.core import contacts as contacts_module
from xpbd_addon.core.collision import Plane

R = 0.005
DT = 1.0 / 24.0
G = 9.81


def crossed_pile(count, *, across=None, points=40, length=1.0, self_friction=0.2,
                 sleep_speed=1e-3, lift=0.0):
    """``count`` ropes along x lying on the ground 10 cm apart and ``across`` (default
    ``count``) along y across them (on top, ``lift`` [m] above them), 10 g a point."""
    s = np.linspace(-length / 2, length / 2, points)

    def offsets(n):
        return (np.arange(n) - (n - 1) / 2) * 0.1

    ropes = [np.stack([s, np.full(points, y), np.full(points, R + 1e-4)], -1)
             for y in offsets(count)]
    ropes += [np.stack([np.full(points, x), s, np.full(points, 3 * R + 1e-4 + lift)], -1)
              for x in offsets(count if across is None else across)]
    x = np.concatenate(ropes)
    base = np.arange(len(ropes))[:, None] * points
    edges = np.stack([base + np.arange(points - 1), base + np.arange(1, points)], -1)
    return Model(x, edges.reshape(-1, 2), np.full(len(x), 100.0), 1e-7, radius=R,
                 self_collision=True, self_friction=self_friction, damping=0.2,
                 sleep_speed=sleep_speed)


def settle(model, frames, substeps):
    """Play ``frames`` on the ground; the largest move of any particle [m] in each frame and
    the kinetic energy [J] after each."""
    state = model.state()
    ground = [Plane((0.0, 0.0, 0.0))]
    moves, energies = [], []
    mass = 1.0 / model.particle_inv_mass
    for _ in range(frames):
        before = state.x.copy()
        step(model, state, DT, substeps, colliders=ground)
        moves.append(float(np.linalg.norm(state.x - before, axis=1).max()))
        energies.append(float(0.5 * (mass * (state.v ** 2).sum(axis=1)).sum()))
        assert np.isfinite(state.x).all()
    return state, np.array(moves), np.array(energies)


@pytest.mark.parametrize("substeps", [5, 20])
def test_a_pile_of_crossed_ropes_on_the_floor_stops_moving(substeps):
    # sleeping off: nothing may hide a rope that still moves
    model = crossed_pile(4, sleep_speed=0.0)
    state, moves, energies = settle(model, 144, substeps)
    last_second = moves[-24:]
    assert last_second.max() < 2e-5  # 20 um a frame (it crept by 100-800 um)
    # no energy from the contacts: what is left is far below one substep of gravity's speed
    # per point, and it does not grow
    mass = 1.0 / model.particle_inv_mass
    assert energies[-24:].max() < 0.5 * mass.sum() * (0.1 * G * DT / substeps) ** 2
    assert energies[-24:].max() <= 10 * energies[-48:-24].max() + 1e-12
    # the upper ropes lie on the lower ones, the lower ones on the ground
    z = state.x[:, 2]
    assert z.min() > R - 1e-4
    assert z[len(z) // 2:].max() < 3 * R + 1e-3


def test_a_rope_lying_across_two_others_comes_to_rest_and_they_sleep():
    model = crossed_pile(2, across=1)
    state = model.state()
    ground = [Plane((0.0, 0.0, 0.0))]
    original = contacts_module.FrameContacts.__init__
    frames = []

    def spy(self, *args, **kwargs):
        original(self, *args, **kwargs)
        frames.append(self)

    contacts_module.FrameContacts.__init__ = spy
    try:
        for _ in range(96):
            step(model, state, DT, 20, colliders=ground)
    finally:
        contacts_module.FrameContacts.__init__ = original
    assert frames[-1].sleeping == 3  # all three (they stayed awake, 19 mm/s on top)
    top = state.x[2 * 40:]
    assert top[:, 2].max() > 2.5 * R  # lying on them


@pytest.mark.parametrize("reversed_order", [False, True])
def test_a_rope_lying_across_others_does_not_crawl_along_itself(reversed_order):
    """A short rope of fine segments (2.4 mm, under the radius) lies across ten ropes 2 cm
    apart on the floor. Solved in one fixed order, the rope pairs dragged it towards its
    last point at 0.5 mm/s for as long as it played (sleeping off; 1.4 mm from the 2nd to
    the 5th second); with each substep's two passes sweeping in opposite directions,
    0.02-0.04 mm/s (0.1 mm). Its points numbered the other way round give the mirror
    image."""
    points = 100
    s = np.linspace(-0.5, 0.5, points)
    ropes = [np.stack([s, np.full(points, y), np.full(points, R + 1e-4)], -1)
             for y in (np.arange(10) - 4.5) * 0.02]
    across = np.linspace(-0.12, 0.12, points)[::-1 if reversed_order else 1]
    ropes.append(np.stack([np.zeros(points), across, np.full(points, 3 * R + 1e-4)], -1))
    x = np.concatenate(ropes)
    base = np.arange(len(ropes))[:, None] * points
    edges = np.stack([base + np.arange(points - 1), base + np.arange(1, points)], -1)
    model = Model(x, edges.reshape(-1, 2), np.full(len(x), 100.0), 1e-7, radius=R,
                  self_collision=True, self_friction=0.2, damping=0.2, sleep_speed=0.0)
    state = model.state()
    top = slice(10 * points, None)
    along = []
    for _ in range(120):
        step(model, state, DT, 20, colliders=[Plane((0.0, 0.0, 0.0))])
        along.append(float(state.x[top, 1].mean()))
    assert abs(along[-1] - along[47]) < 3e-4  # [m] over the last 3 s
    assert state.x[top, 2].max() > 2.5 * R  # lying on them


def test_a_rope_placed_inside_another_leaves_it_gently():
    """Beyond the residue, push-out gives no velocity: a rope started 4 mm deep in another
    (of a 10 mm contact) is out after a few substeps and does not fly off."""
    model = crossed_pile(1, self_friction=0.0, sleep_speed=0.0, lift=-0.004)
    state = model.state()
    top = slice(model.particle_count // 2, None)
    peak = 0.0
    for _ in range(12):
        step(model, state, DT, 20, colliders=[Plane((0.0, 0.0, 0.0))])
        peak = max(peak, float(np.abs(state.v[top, 2]).max()))
    # at most the push speed's worth (1 m/s for 4 substeps would be 8 mm up) and no bounce:
    # where it crosses the other, it rests on it, not above it
    assert peak < 0.25
    crossing = state.x[top][np.abs(state.x[top, 1]) < 0.02]
    assert crossing[:, 2].max() < 3 * R + 5e-4
    assert crossing[:, 2].min() > 2.5 * R
