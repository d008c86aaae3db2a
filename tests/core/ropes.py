"""Small builders of test scenes for the core (plain numpy, no Blender)."""

from __future__ import annotations

import numpy as np

from xpbd_addon.core import Model


def hanging_chain(count: int, segment: float, compliance: float, *, damping: float = 0.0,
                  mass: float = 1.0) -> Model:
    """A vertical chain of ``count`` particles ``segment`` [m] apart, the top one pinned."""
    positions = np.zeros((count, 3))
    positions[:, 2] = -segment * np.arange(count)
    inv_mass = np.full(count, 1.0 / mass)
    inv_mass[0] = 0.0
    edges = [(i, i + 1) for i in range(count - 1)]
    return Model(positions, edges, inv_mass, compliance, damping=damping)


def many_ropes(ropes: int, points: int, *, length: float = 2.0, compliance: float = 0.0,
               seed: int | None = None, **model_options) -> Model:
    """``ropes`` horizontal ropes of ``points`` particles, first point of each pinned.

    With ``seed`` the ropes get random lengths (2 .. points particles), shuffled particle ids
    and edges listed in random order and orientation, so the chain finder has work to do.
    """
    rng = np.random.default_rng(seed)
    positions, edges, inv_mass = [], [], []
    base = 0
    for r in range(ropes):
        n = points if seed is None else int(rng.integers(2, points + 1))
        p = np.zeros((n, 3))
        p[:, 0] = np.linspace(0.0, length, n)
        p[:, 1] = 0.05 * r
        positions.append(p)
        edges.extend((base + i, base + i + 1) for i in range(n - 1))
        w = np.ones(n)
        w[0] = 0.0
        inv_mass.append(w)
        base += n
    x = np.concatenate(positions)
    e = np.array(edges, dtype=np.int64)
    w = np.concatenate(inv_mass)
    if seed is not None:
        perm = rng.permutation(len(x))  # new id of old particle i is perm[i]
        x_new = np.empty_like(x)
        x_new[perm] = x
        w_new = np.empty_like(w)
        w_new[perm] = w
        e = perm[e]
        e = e[rng.permutation(len(e))]
        flip = rng.random(len(e)) < 0.5
        e[flip] = e[flip][:, ::-1]
        x, w = x_new, w_new
    return Model(x, e, w, compliance, **model_options)


def crossed_ropes() -> Model:
    """Seven ropes of 30 points, radius 5 mm: four side by side along x, 1.1 cm apart, and
    three along y 1.5 cm above them, all falling on a ground plane; they land on each other
    and lie there (with a pair of segments per few particles: the margins are kept)."""
    ropes = []
    t = np.linspace(-0.15, 0.15, 30)
    for index in range(4):
        ropes.append(np.stack([t, np.full(30, 0.011 * (index - 1.5)), np.full(30, 0.0)], -1))
    for index in range(3):
        ropes.append(np.stack([np.full(30, 0.08 * (index - 1)), t, np.full(30, 0.015)], -1))
    x = np.concatenate(ropes)
    edges = [(30 * r + i, 30 * r + i + 1) for r in range(len(ropes)) for i in range(29)]
    return Model(x, np.array(edges), np.full(len(x), 100.0), 1e-7, radius=0.005,
                 self_collision=True, self_friction=0.3, damping=0.2)
