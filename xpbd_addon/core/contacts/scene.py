"""The colliders of a frame as the contacts see them: all triangle colliders joined into one
soup (``MeshScene``, kept across frames while they do not move, with its broad-phase grid)
and the plane table. ``colliders.ColliderContacts`` uses them each frame.
"""

from __future__ import annotations

import math

import numpy as np

from ..collision import Collider, Plane
from .constants import KEPT_GRIDS, MARK_LIMIT, MAX_BOX_CELLS
from .kernels_broadphase import append_lists, collider_candidates, triangle_grid
from .kernels_contact import face_normals, mesh_normals
from .kernels_geometry import triangle_summaries


def _normals(collider: Collider, vertices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    vertex_normal = np.zeros_like(vertices)
    edge_normal = np.zeros((collider._topology.edge_count, 3))
    mesh_normals(vertices, collider.triangles, collider._topology.triangle_edges,
                 vertex_normal, edge_normal)
    return vertex_normal, edge_normal


def _cached_normals(collider: Collider, end: bool) -> tuple[np.ndarray, np.ndarray]:
    """Pseudo-normals at the start (or end) of the frame, kept on the collider: a static
    collider passed again every frame pays for them once. A moving one starts each frame
    where the last ended: its start normals are the last frame's end normals, kept on the
    mesh's topology (which ``Collider.moved`` shares) with the positions they were made
    for, and taken when the positions are equal (12 ms at 159,000 triangles)."""
    derived = collider._derived
    cached = derived.normals_end if end else derived.normals_start
    if cached is None:
        vertices = collider.vertices_end if end else collider.vertices
        kept = collider._topology.normals
        if kept and np.array_equal(kept[0], vertices):
            cached = kept[1]
        else:
            cached = _normals(collider, vertices)
            kept[:] = [vertices, cached]
        if end:
            derived.normals_end = cached
        else:
            derived.normals_start = cached
    return cached


class MeshScene:
    """All triangle colliders of one frame joined into one soup, with their broad phase."""

    def __init__(self, meshes: list[Collider]) -> None:
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
        start = [_cached_normals(m, False) for m in meshes]
        end = [_cached_normals(m, True) if m.moving else s
               for m, s in zip(meshes, start, strict=True)]
        self.vertex_normal = np.concatenate([s[0] for s in start])
        self.edge_normal = np.concatenate([s[1] for s in start])
        self.vertex_normal_end = np.concatenate([e[0] for e in end])
        self.edge_normal_end = np.concatenate([e[1] for e in end])
        self.params = np.array([[m.thickness, m.static_friction, m.dynamic_friction,
                                 1.0 if m.closed else 0.0] for m in meshes])
        self.moving = any(m.moving for m in meshes)
        self.meshes = meshes
        self.grid: tuple | None = None
        """(key, ``triangle_grid``) of the last broad phase"""
        count = len(self.triangles)
        self.corners_start = self.vertices[self.triangles].reshape(count, 9)
        self.corners_end = self.vertices_end[self.triangles].reshape(count, 9)
        self.corners = self.corners_end.copy() if self.moving else self.corners_start
        """Triangle corners at the end of the current substep [m], (T, 9)"""
        self.face_normal = np.empty((count, 3))
        """Their unit normals (zero where collapsed), (T, 3)"""
        face_normals(self.corners, self.face_normal)
        extent = np.empty(count)
        self.frame_motion = np.empty((count, 3))
        self.triangle_moves = np.empty(count, dtype=np.uint8)
        """(T,) 1 where a triangle moves within the frame (ropes near it do not sleep)"""
        triangle_summaries(self.vertices, self.vertices_end, self.triangles, extent,
                           self.frame_motion, self.triangle_moves)
        self.triangle_size = float(np.median(extent)) if count else 0.0
        """Typical triangle extent [m], the smallest sensible grid cell"""
        motion = self.vertices_end - self.vertices
        self.triangle_motion = self.frame_motion
        """Displacement of each triangle's centroid over one substep [m], (T, 3)"""
        self.vertex_motion = float(np.sqrt(np.einsum("ij,ij->i", motion, motion).max(
            initial=0.0)))
        """Largest displacement of a collider vertex over the frame [m]"""
        self.max_motion = 0.0
        """Largest displacement of a collider point over one substep [m] (0: static)"""
        self.marker = np.full(len(self.triangles), -1, dtype=np.int64)
        self.mark = 0
        """``collider_candidates``' seen-marks (entries below ``mark``), kept between calls"""

    def at(self, fraction: float, substeps: int) -> None:
        """Move the soup to ``fraction`` of the frame (the end of a substep)."""
        if self.moving:
            np.subtract(self.corners_end, self.corners_start, out=self.corners)
            self.corners *= fraction
            self.corners += self.corners_start
            face_normals(self.corners, self.face_normal)
        if self.triangle_motion is self.frame_motion:
            self.triangle_motion = self.frame_motion / substeps
            # vertices, not centroids: a triangle spinning about its centre moves too
            self.max_motion = self.vertex_motion / substeps

    def find_candidates(self, x: np.ndarray, x_end: np.ndarray, reach: np.ndarray,
                        lists: CandidateLists,
                        only: np.ndarray | None = None) -> None:
        """Candidate triangles into ``lists``, of every particle, or only of the particles
        ``only`` (sorted ids; the others keep theirs), along the chords x -> x_end grown by
        ``reach`` [m]. The new lists of ``only`` are appended (their old ones are left unused
        until the next search for all): a refresh for a few particles costs what they
        cost."""
        if only is not None and self.grid is not None:
            cell = self.grid[0][0]
        else:
            active = reach > 0.0
            if active.any():
                # cells no smaller than a triangle: each then sits in a few cells only
                extent = (np.abs(x_end - x).max(axis=1) + 2.0 * reach)[active]
                cell = max(float(np.median(extent)), self.triangle_size, 1e-4)
            else:
                cell = 1.0
        # a power of two, so that the grid of the triangles is reused by the refreshes of the
        # frame, and by later frames while the colliders do not move
        cell = 2.0 ** math.ceil(math.log2(cell))
        grid = self._grid(cell)
        particles = np.arange(len(x)) if only is None else only
        if self.mark + len(particles) >= MARK_LIMIT:
            self.marker[:] = -1
            self.mark = 0
        offsets, candidates = collider_candidates(
            particles, x, x_end, reach, self.vertices, self.triangles, *grid, cell,
            float(MAX_BOX_CELLS), self.marker, self.mark)
        self.mark += len(particles)
        if only is None:
            lists.spans = np.stack([offsets[:-1], offsets[1:]], axis=1)
            lists.candidates = candidates
            lists.used = lists.live = len(candidates)
        else:
            lists.candidates, lists.used, change = append_lists(
                only, offsets, candidates, lists.spans, lists.candidates, lists.used)
            lists.live += change
        if len(lists.distance) < len(lists.candidates):
            lists.distance = np.empty(max(len(lists.candidates), 2 * len(lists.distance)))

    def _grid(self, cell: float) -> tuple:
        """``kernels_broadphase.triangle_grid`` for this cell size, built once per frame, or
        kept on the first collider across frames while no collider moves (the last
        ``KEPT_GRIDS`` cell sizes asked for: several ropes on one collider ask for
        different cells, and rebuilding a 10k-triangle grid costs 1.8 ms)."""
        key = (cell, tuple(self.meshes))
        if self.grid is not None and self.grid[0] == key:
            return self.grid[1]
        kept = self.meshes[0]._derived.triangle_grids
        if not self.moving:
            cached = kept.get(cell)
            if cached is not None and len(cached[0]) == len(self.meshes) and all(
                    a is b for a, b in zip(cached[0], self.meshes, strict=True)):
                self.grid = (key, cached[1])
                return cached[1]
        grid = triangle_grid(self.vertices, self.vertices_end, self.triangles,
                                     self.params[self.triangle_collider, 0], cell,
                                     float(MAX_BOX_CELLS))
        self.grid = (key, grid)
        if not self.moving:
            kept.pop(cell, None)
            kept[cell] = (tuple(self.meshes), grid)
            while len(kept) > KEPT_GRIDS:
                del kept[next(iter(kept))]
        return grid


class CandidateLists:
    """The collider candidates of a model's particles (``MeshScene.find_candidates``)."""

    def __init__(self, count: int) -> None:
        self.spans = np.zeros((count, 2), dtype=np.int64)
        """Particle i's candidate triangles are candidates[spans[i, 0]:spans[i, 1]], (N, 2)"""
        self.candidates = np.zeros(0, dtype=np.int64)
        """The lists' entries: the first ``used`` are written, the rest is room to append"""
        self.used = 0
        self.live = 0
        """How many entries of ``candidates`` the spans point to (the rest: replaced lists)"""
        self.distance = np.zeros(0)
        """Scratch of the narrow phase, one entry per candidate"""


def mesh_scene(meshes: list[Collider]) -> MeshScene:
    """The ``MeshScene`` of these colliders, kept on the first one while none of them moves:
    a static scene passed again every frame (the same Collider objects) pays for joining the
    soup, its normals and its grid once (4.7 ms per frame for 10k triangles otherwise)."""
    static = not any(m.moving for m in meshes)
    if static:
        cached = meshes[0]._derived.mesh_scene
        if cached is not None and len(cached.meshes) == len(meshes) and all(
                a is b for a, b in zip(cached.meshes, meshes, strict=True)):
            cached.triangle_motion = cached.frame_motion  # ``at`` divides it by the substeps
            return cached
    scene = MeshScene(meshes)
    if static:
        meshes[0]._derived.mesh_scene = scene
    return scene


def plane_table(planes: list[Plane]) -> np.ndarray:
    """(P, 9) rows point, normal, thickness, mu_s, mu_k for ``kernels_contact.plane_contacts``."""
    return np.array([[*p.point, *p.normal, p.thickness, p.static_friction, p.dynamic_friction]
                     for p in planes]).reshape(-1, 9)
