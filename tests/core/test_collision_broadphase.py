"""The broad phases never miss a contact: at every substep, before the contacts are
projected, every rope-rope pair and every particle-triangle pair that is in contact (by a
brute-force search over all of them) is among the candidates.

The candidates are found from a prediction of each particle's motion and searched again
only for the particles that stray from it (``contacts.FrameContacts``), so a scene whose
ropes fall, land on a bumpy mesh and a ground, heap on each other and are whipped by a
moving pin exercises full searches, partial ones and predictions that fail.
"""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from xpbd_addon.core import Model, step
from xpbd_addon.core import contacts as contacts_module
from xpbd_addon.core.collision import Collider, Plane
from xpbd_addon.core.contacts.kernels_geometry import closest_on_segments, closest_on_triangle

R = 0.01


def bumpy_ground(cells=12, size=1.6, z=0.0):
    """An open height field of 2 cells^2 triangles over [-size/2, size/2]^2."""
    u = np.linspace(-size / 2, size / 2, cells + 1)
    x, y = np.meshgrid(u, u, indexing="ij")
    height = z + 0.05 * np.sin(4.0 * x) * np.cos(3.0 * y)
    vertices = np.stack([x, y, height], axis=-1).reshape(-1, 3)
    i, j = np.meshgrid(np.arange(cells), np.arange(cells), indexing="ij")
    a = (i * (cells + 1) + j).reshape(-1)
    b, c, d = a + cells + 1, a + cells + 2, a + 1
    return vertices, np.concatenate([np.stack([a, b, c], 1), np.stack([a, c, d], 1)])


def heap(ropes=6, points=30):
    """Ropes crossing each other at different heights, the first one pinned at one end."""
    x = []
    for k in range(ropes):
        angle = np.pi * k / ropes
        direction = np.array([np.cos(angle), np.sin(angle), 0.0])
        s = np.linspace(-0.4, 0.4, points)[:, None]
        x.append(s * direction + [0.0, 0.0, 0.15 + 0.04 * k])
    x = np.concatenate(x)
    base = np.arange(ropes)[:, None] * points
    edges = np.stack([base + np.arange(points - 1), base + np.arange(1, points)], -1)
    w = np.full(len(x), float(points))
    w[0] = 0.0
    return Model(x, edges.reshape(-1, 2), w, 1e-8, radius=R, self_collision=True,
                 self_friction=0.3, damping=0.5)


@njit(cache=False)
def _touching_pairs(x, edges, edge_chain, edge_arc, skip, contact):
    """Every segment pair (e < f) closer than ``contact``, brute force."""
    found = []
    for e in range(edges.shape[0]):
        for f in range(e + 1, edges.shape[0]):
            a0, a1, b0, b1 = edges[e, 0], edges[e, 1], edges[f, 0], edges[f, 1]
            if a0 == b0 or a0 == b1 or a1 == b0 or a1 == b1:
                continue
            if edge_chain[e] == edge_chain[f] and max(
                    edge_arc[f, 0] - edge_arc[e, 1], edge_arc[e, 0] - edge_arc[f, 1]) <= skip:
                continue
            u, t = closest_on_segments(x, a0, a1, b0, b1)
            d2 = 0.0
            for c in range(3):
                d2 += ((x[a0, c] + u * (x[a1, c] - x[a0, c]))
                       - (x[b0, c] + t * (x[b1, c] - x[b0, c]))) ** 2
            if d2 < contact * contact:
                found.append((e, f))
    return found


@njit(cache=False)
def _touching_triangles(x, free, corners, contact):
    """Every (particle, triangle) pair closer than ``contact``, brute force."""
    found = []
    for i in range(x.shape[0]):
        if not free[i]:
            continue
        for t in range(corners.shape[0]):
            c = corners[t]
            qx, qy, qz, _, _, _, _ = closest_on_triangle(x[i, 0], x[i, 1], x[i, 2], c[0], c[1],
                                                          c[2], c[3], c[4], c[5], c[6], c[7],
                                                          c[8])
            if (x[i, 0] - qx) ** 2 + (x[i, 1] - qy) ** 2 + (x[i, 2] - qz) ** 2 < contact ** 2:
                found.append((i, t))
    return found


def contacts_missed(frame, x, model):
    """Pairs in contact now that are not candidates: (rope-rope, particle-triangle) counts."""
    skip = contacts_module.SELF_SKIP * R * 2
    candidates = {tuple(p) for p in frame.pairs}
    ropes = frame.ropes
    touching = _touching_pairs(x, model.edge_index, ropes.edge_chain, ropes.edge_arc, skip, 2 * R)
    missed_pairs = sum(1 for pair in touching if pair not in candidates)
    scene = frame.colliders.scene
    free = model.particle_inv_mass > 0
    missed_triangles = 0
    for i, t in _touching_triangles(x, free, scene.corners, R):
        lists = frame.colliders.lists
        if t not in lists.candidates[lists.spans[i, 0]:lists.spans[i, 1]]:
            missed_triangles += 1
    return missed_pairs, missed_triangles, len(touching)


@pytest.mark.parametrize("carried", [False, True], ids=["fresh colliders", "kept colliders"])
def test_no_contact_is_ever_missed_by_the_broad_phases(carried):
    """With new Collider objects every frame, every frame starts with a full search; with
    the same ones, each frame goes on with the last frame's collider candidates."""
    vertices, triangles = bumpy_ground()
    kept = [Collider(vertices, triangles), Plane((0.0, 0.0, -0.1))]
    model = heap()
    state = model.state()
    pinned = np.flatnonzero(model.particle_inv_mass == 0)
    checked = {"substeps": 0, "pairs": 0, "triangles": 0, "partial": 0}
    missed = []
    original_project = contacts_module.FrameContacts.project
    original_refresh = contacts_module.FrameContacts.refresh
    original_update = contacts_module.RopeContacts._update_pairs

    def project(self, x, v, substep):
        checked["substeps"] += 1
        return original_project(self, x, v, substep)

    def refresh(self, x, v, substep):
        # the candidates right before the contacts use them (also before the pass after
        # the rope's re-solve)
        original_refresh(self, x, v, substep)
        missed.append(contacts_missed(self, x, model))
        checked["pairs"] += len(self.pairs)
        checked["triangles"] += self.colliders.lists.live

    def update(self, *args):
        done = original_update(self, *args)
        checked["partial"] += int(done)
        return done

    contacts_module.FrameContacts.project = project
    contacts_module.FrameContacts.refresh = refresh
    contacts_module.RopeContacts._update_pairs = update
    try:
        for frame in range(30):
            # whip the pinned end around from frame 15 on: predictions fail there
            angle = max(frame - 14, 0) * 0.6
            targets = state.x.copy()
            targets[pinned] = [-0.4 * np.cos(angle), -0.4 * np.sin(angle), 0.3]
            scene = kept if carried else [Collider(vertices, triangles),
                                          Plane((0.0, 0.0, -0.1))]
            step(model, state, 1 / 24, 8, pin_targets=targets, colliders=scene)
    finally:
        contacts_module.FrameContacts.project = original_project
        contacts_module.FrameContacts.refresh = original_refresh
        contacts_module.RopeContacts._update_pairs = original_update
    missed = np.array(missed)
    assert checked["substeps"] == 30 * 8
    assert missed[:, 2].sum() > 100 and checked["triangles"] > 0  # ropes touched, and landed
    assert checked["partial"] > 0  # and the partial search ran
    assert missed[:, 0].sum() == 0, f"rope-rope contacts missed: {missed[:, 0].sum()}"
    assert missed[:, 1].sum() == 0, f"particle-triangle contacts missed: {missed[:, 1].sum()}"
