"""The contacts of one frame: collider soup, broad-phase bookkeeping, the substep projection.

``solver`` creates a ``FrameContacts`` for each frame with colliders or self-collision and
calls ``project`` at the end of every substep; the maths is in ``kernels_contact`` (narrow
phase and projection) and ``kernels_broadphase`` (candidates). Nothing here outlives the
frame: contacts keep no state, so the particle state x, v is all a cache or bake needs.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .collision import Collider, Plane

MAX_BOX_CELLS = 512
"""A particle or segment box covering more grid cells than this (a very fast particle) is
tested against everything by brute force instead of being listed in each cell."""

SELF_SKIP = 1.5
"""Segments of one rope closer than SELF_SKIP (r_a + r_b) along it never collide: a straight
rope would touch itself there, and only a kink sharper than a rope can bend brings them
together (the pairs i, i + 2 of a rope sampled every 2 r, which at rest cost as much as all
real contacts)."""

SELF_MARGIN = 0.5
"""Margin of rope-rope contacts, as a fraction of the radius: how far a particle may stray
from its predicted path before the rope-rope broad phase is redone."""


def segment_topology(chains: list[np.ndarray], chain_edges: list[np.ndarray],
                     edge_count: int, rest_length: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per edge: the chain (rope) it belongs to, or -1, and the rest arc length [m] of its two
    ends along that chain (low, high), so that self-collision can skip the pairs that are
    neighbours along a rope."""
    edge_chain = np.full(edge_count, -1, dtype=np.int64)
    edge_arc = np.zeros((edge_count, 2))
    for index, ids in enumerate(chain_edges):
        if len(ids) == 0:
            continue
        arc = np.concatenate([[0.0], np.cumsum(rest_length[ids])])
        edge_chain[ids] = index
        edge_arc[ids, 0] = arc[:-1]
        edge_arc[ids, 1] = arc[1:]
    return edge_chain, edge_arc


def _normals(collider: Collider, vertices: np.ndarray,
             kernels: Any) -> tuple[np.ndarray, np.ndarray]:
    vertex_normal = np.zeros_like(vertices)
    edge_normal = np.zeros((collider._topology.edge_count, 3))
    kernels.mesh_normals(vertices, collider.triangles, collider._topology.triangle_edges,
                         vertex_normal, edge_normal)
    return vertex_normal, edge_normal


def _cached_normals(collider: Collider, end: bool, kernels: Any):
    """Pseudo-normals at the start (or end) of the frame, kept on the collider: a static
    collider passed again every frame pays for them once."""
    key = "_normals_end" if end else "_normals_start"
    cached = collider.__dict__.get(key)
    if cached is None:
        cached = _normals(collider, collider.vertices_end if end else collider.vertices, kernels)
        setattr(collider, key, cached)
    return cached


class MeshScene:
    """All triangle colliders of one frame joined into one soup, with their broad phase."""

    def __init__(self, meshes: list[Collider], kernels: Any) -> None:
        vertex_offset = np.cumsum([0] + [len(m.vertices) for m in meshes])
        edge_offset = np.cumsum([0] + [m._topology.edge_count for m in meshes])
        self.vertices = np.concatenate([m.vertices for m in meshes])
        self.vertices_end = np.concatenate([m.vertices_end for m in meshes])
        self.triangles = np.concatenate(
            [m.triangles + o for m, o in zip(meshes, vertex_offset, strict=False)])
        self.triangle_edges = np.concatenate(
            [m._topology.triangle_edges + o for m, o in zip(meshes, edge_offset, strict=False)])
        self.triangle_collider = np.concatenate(
            [np.full(len(m.triangles), i, dtype=np.int64) for i, m in enumerate(meshes)])
        start = [_cached_normals(m, False, kernels) for m in meshes]
        end = [_cached_normals(m, True, kernels) if m.moving else s
               for m, s in zip(meshes, start, strict=True)]
        self.vertex_normal = np.concatenate([s[0] for s in start])
        self.edge_normal = np.concatenate([s[1] for s in start])
        self.vertex_normal_end = np.concatenate([e[0] for e in end])
        self.edge_normal_end = np.concatenate([e[1] for e in end])
        self.params = np.array([[m.thickness, m.static_friction, m.dynamic_friction,
                                 1.0 if m.closed else 0.0] for m in meshes])
        self.offsets = np.zeros(1, dtype=np.int64)
        self.candidates = np.zeros(0, dtype=np.int64)
        self.distance = np.zeros(0)
        self.moving = any(m.moving for m in meshes)
        count = len(self.triangles)
        self.corners_start = self.vertices[self.triangles].reshape(count, 9)
        self.corners_end = self.vertices_end[self.triangles].reshape(count, 9)
        self.corners = self.corners_end.copy() if self.moving else self.corners_start
        """Triangle corners at the end of the current substep [m], (T, 9)"""
        extent = np.ptp(self.corners_start.reshape(count, 3, 3), axis=1).max(axis=1)
        self.triangle_size = float(np.median(extent)) if count else 0.0
        """Typical triangle extent [m], the smallest sensible grid cell"""
        motion = self.vertices_end - self.vertices
        self.frame_motion = motion[self.triangles].mean(axis=1)
        self.triangle_motion = self.frame_motion
        """Displacement of each triangle's centroid over one substep [m], (T, 3)"""
        self.max_motion = 0.0
        """Largest of those [m]"""

    def at(self, fraction: float, substeps: int) -> None:
        """Move the soup to ``fraction`` of the frame (the end of a substep)."""
        if self.moving:
            np.subtract(self.corners_end, self.corners_start, out=self.corners)
            self.corners *= fraction
            self.corners += self.corners_start
        if self.triangle_motion is self.frame_motion:
            self.triangle_motion = self.frame_motion / substeps
            self.max_motion = float(np.sqrt(np.einsum(
                "ij,ij->i", self.triangle_motion, self.triangle_motion).max(initial=0.0)))

    def find_candidates(self, x: np.ndarray, x_end: np.ndarray, reach: np.ndarray,
                        kernels: Any) -> None:
        active = reach > 0.0
        if active.any():
            # cells no smaller than a triangle: each then sits in a few cells only
            extent = (np.abs(x_end - x).max(axis=1) + 2.0 * reach)[active]
            cell = max(float(np.median(extent)), self.triangle_size, 1e-4)
        else:
            cell = 1.0
        self.offsets, self.candidates = kernels.collider_candidates(
            x, x_end, reach, self.vertices, self.vertices_end, self.triangles,
            self.params[self.triangle_collider, 0], cell, float(MAX_BOX_CELLS))
        self.distance = np.empty(len(self.candidates))


def plane_table(planes: list[Plane]) -> np.ndarray:
    """(P, 9) rows point, normal, thickness, mu_s, mu_k for ``kernels_contact.plane_contacts``."""
    return np.array([[*p.point, *p.normal, p.thickness, p.static_friction, p.dynamic_friction]
                     for p in planes]).reshape(-1, 9)


class FrameContacts:
    """The contacts of one frame: broad phase from the state at its start, then ``project``
    at the end of every substep.

    Collider candidates are found along each particle's predicted path (the chord of its
    free flight x0 + v0 t + g t^2 / 2 over the rest of the frame) plus a margin, so a falling
    rope needs no bigger search than a resting one; rope-rope candidates within the motion
    relative to what all particles share plus a margin. A rope pushed by a collider, caught
    on something or whipped leaves its path: ``project`` checks after every substep and
    redoes a broad phase from the current state when some particle strayed farther than the
    margin from its chord (colliders: ``Model.contact_margin``), or from the shared motion by
    more than its allowance (rope-rope: ``SELF_MARGIN`` r plus its relative motion). The
    candidates thus always hold every contact that can happen, and the search is redone
    only where the prediction failed."""

    def __init__(self, model: Any, x: np.ndarray, v: np.ndarray, pin_end: np.ndarray,
                 dt: float, substeps: int, gravity: np.ndarray, meshes: list[Collider],
                 planes: list[Plane], velocity_scale: float, kernels: Any,
                 broad: Any) -> None:
        self.model, self.kernels, self.broad = model, kernels, broad
        self.dt, self.substeps, self.gravity = dt, substeps, gravity
        self.velocity_scale = velocity_scale
        self.h = dt / substeps
        self.push_max = model.contact_push_speed * self.h
        self.free = model.particle_inv_mass > 0.0
        self.pin_velocity = (pin_end - x) / dt
        self.moved = np.zeros(model.particle_count, dtype=np.uint8)
        self.no_extra = np.zeros(model.particle_count)
        self.touched = np.zeros(model.particle_count, dtype=np.uint8)
        self.scene = MeshScene(meshes, kernels) if meshes else None
        self.plane_rows = plane_table(planes)
        self.pairs = np.zeros((0, 2), dtype=np.int64)
        radius = model.particle_radius
        self.self_collision = bool(model.self_collision and model.edge_count
                                   and radius.max() > 0.0)
        if self.self_collision:
            cache = model.__dict__.get("_segment_topology")
            if cache is None:
                d = model.decomposition
                cache = segment_topology(d.chains, d.chain_edges, model.edge_count,
                                         model.edge_rest_length)
                model._segment_topology = cache
            self.edge_chain, self.edge_arc = cache
            self.self_slack = np.maximum(SELF_MARGIN * radius, MIN_MARGIN)
            self.deviation = np.empty_like(x)
        self.collider_margin = max(model.contact_margin, MIN_MARGIN)
        self.refreshes = 0
        """How often a broad phase was redone within the frame (diagnostics)"""
        if self.scene is not None:
            self._find_triangles(x, v, 0.0)
        if self.self_collision:
            self._find_pairs(x, v, 0.0)

    def _find_triangles(self, x: np.ndarray, v: np.ndarray, elapsed: float) -> None:
        """Collider candidates from the state x, v at ``elapsed`` [s] into the frame."""
        model = self.model
        remaining = self.dt - elapsed
        g = self.gravity
        x_end = x + v * remaining + 0.5 * g * remaining * remaining
        bulge = 0.125 * float(np.linalg.norm(g)) * remaining * remaining  # parabola vs chord
        reach = np.where(self.free, model.particle_radius + self.collider_margin + bulge, 0.0)
        assert self.scene is not None
        self.scene.find_candidates(x, x_end, reach, self.broad)
        self.triangle_chord = (x.copy(), x_end)

    def _find_pairs(self, x: np.ndarray, v: np.ndarray, elapsed: float) -> None:
        """Rope-rope candidates from the state x, v at ``elapsed`` [s] into the frame, for
        the horizon ``kernels_broadphase.segment_reach`` picks."""
        model = self.model
        reach, allowance, cell, horizon = self.broad.segment_reach(
            x, v, model.particle_inv_mass, self.pin_velocity, model.particle_radius,
            self.self_slack, self.gravity, self.dt - elapsed, self.h, model.edge_index)
        self.pair_until = elapsed + horizon
        self.pairs = self.broad.segment_candidates(
            x, reach, model.edge_index, self.edge_chain, self.edge_arc,
            SELF_SKIP * model.particle_radius, cell, float(MAX_BOX_CELLS))
        self.pair_start = (x.copy(), allowance)

    def project(self, x: np.ndarray, v: np.ndarray, substep: int,
                refresh: bool = True) -> np.ndarray:
        """Contacts at the end of ``substep`` (0-based), in place on x, v (N, 3); returns the
        (N,) uint8 flags of the particles moved (the caller clears them). With ``refresh``
        the broad-phase check (``refresh``) follows; the solver calls it itself when the
        rope is solved again after the contacts (``project_again``)."""
        model, k = self.model, self.kernels
        w, radius = model.particle_inv_mass, model.particle_radius
        scene = self.scene
        s1 = (substep + 1) / self.substeps
        if scene is not None:
            scene.at(s1, self.substeps)
        # Gauss-Seidel over the kinds of contact. Rope-rope contacts push particles into the
        # colliders and the colliders push them back (a heap on the ground), so with them
        # a second pass follows, the colliders in it only for what the ropes moved again.
        touched = self.touched
        passes = CONTACT_PASSES if len(self.pairs) else 1
        for index in range(passes):
            selective = index > 0
            if len(self.pairs):
                k.segment_contacts(x, v, w, radius, self.velocity_scale, model.edge_index,
                                   self.pairs, self.push_max, model.self_friction, touched)
            if scene is not None and len(scene.candidates):
                k.collider_contacts(
                    x, v, w, radius, self.velocity_scale, 1.0 / self.substeps,
                    scene.corners, scene.vertices, scene.vertices_end,
                    scene.triangle_motion, scene.triangles, scene.triangle_edges,
                    scene.triangle_collider, scene.vertex_normal, scene.vertex_normal_end,
                    scene.edge_normal, scene.edge_normal_end, s1, scene.params,
                    scene.offsets, scene.candidates, self.push_max, scene.distance,
                    self.moved, touched, selective, scene.max_motion, self.no_extra)
            if len(self.plane_rows):
                k.plane_contacts(x, v, w, radius, self.velocity_scale, self.plane_rows,
                                 self.push_max, self.moved, touched, selective, self.no_extra)
            if len(self.pairs):
                np.bitwise_or(self.moved, touched, out=self.moved)
                touched[:] = 0
        if refresh:
            self.refresh(x, v, substep)
        return self.moved

    def project_again(self, x: np.ndarray, v: np.ndarray, substep: int,
                      extra: np.ndarray) -> np.ndarray:
        """All contacts once more after the rope's re-solve (``kernels_resolve``), one
        pass, without friction: what the rope's constraints undid of the friction stays
        undone. ``extra`` (N,) [m], how far the re-solve moved each particle, counts as
        approach for the colliders (undone in full, with velocity, not at the gentle
        push-out speed). Returns the moved flags, as ``project``."""
        model, k = self.model, self.kernels
        w, radius = model.particle_inv_mass, model.particle_radius
        scene = self.scene
        s1 = (substep + 1) / self.substeps
        if len(self.pairs):
            k.segment_contacts(x, v, w, radius, self.velocity_scale, model.edge_index,
                               self.pairs, self.push_max, 0.0, self.moved)
        if scene is not None and len(scene.candidates):
            params = self.__dict__.get("_frictionless")
            if params is None:
                params = scene.params.copy()
                params[:, 1:3] = 0.0
                self._frictionless = params
            k.collider_contacts(
                x, v, w, radius, self.velocity_scale, 1.0 / self.substeps,
                scene.corners, scene.vertices, scene.vertices_end,
                scene.triangle_motion, scene.triangles, scene.triangle_edges,
                scene.triangle_collider, scene.vertex_normal, scene.vertex_normal_end,
                scene.edge_normal, scene.edge_normal_end, s1, params,
                scene.offsets, scene.candidates, self.push_max, scene.distance,
                self.moved, self.moved, False, scene.max_motion, extra)
        if len(self.plane_rows):
            rows = self.__dict__.get("_frictionless_planes")
            if rows is None:
                rows = self.plane_rows.copy()
                rows[:, 7:9] = 0.0
                self._frictionless_planes = rows
            k.plane_contacts(x, v, w, radius, self.velocity_scale, rows, self.push_max,
                             self.moved, self.moved, False, extra)
        return self.moved

    def refresh(self, x: np.ndarray, v: np.ndarray, substep: int, last: bool = False) -> None:
        """The broad-phase check after the contacts of ``substep``: redo a broad phase where
        a particle left its predicted path (see the class). The frame's last substep needs
        none (the next frame starts afresh) unless contacts are still to come in it
        (``last``: before the second pass)."""
        w = self.model.particle_inv_mass
        scene = self.scene
        s1 = (substep + 1) / self.substeps
        if last or substep + 1 < self.substeps:
            now = self.dt * s1
            if scene is not None:
                x0, x_end = self.triangle_chord
                if self.broad.left_chord(x, x0, x_end, w, self.collider_margin):
                    self.refreshes += 1
                    self._find_triangles(x, v, now)
            if self.self_collision:
                x0, allowance = self.pair_start
                if now >= self.pair_until - 1e-12 * self.dt or self.broad.left_shared_motion(
                        x, x0, allowance, self.deviation):
                    self.refreshes += 1
                    self._find_pairs(x, v, now)


CONTACT_PASSES = 2
"""Passes over all contacts per substep when rope-rope contacts are on."""

MIN_MARGIN = 1e-4
"""Smallest margin [m] the broad phase works with (a zero margin would redo it whenever a
contact held a particle)."""
