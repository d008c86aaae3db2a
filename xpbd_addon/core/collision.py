"""Colliders of the rope solver: triangle meshes (``Collider``) and infinite planes (``Plane``).

A collider describes solid matter in world space for one frame. ``step(..., colliders=...)``
takes a sequence of them and keeps every rope particle (a sphere of the model's radius r) at
least r + thickness away from it, each substep, as an XPBD inequality constraint

    C(x) = d(x) - (r + thickness) >= 0,

d the signed distance to the collider's surface (``kernels_contact`` has the projection and
the friction). Collider meshes may move and deform: ``vertices`` is where the mesh is at the
start of the frame, ``vertices_end`` at its end, and each substep sees the linear
interpolation (so a collider swung at 5 m/s does not jump through a rope).

Two kinds of mesh behave differently:

* closed (every edge shared by exactly two triangles, consistently wound; detected
  automatically): a solid. A particle found inside is pushed out to the nearest surface,
  the side decided by angle-weighted pseudo-normals (Baerentzen & Aanaes 2005), so it works
  whatever the winding; the winding is made outward from the signed volume.
* open or non-manifold (a plane made of faces, a cloth-like sheet, a broken mesh): a
  two-sided thin shell of half-width thickness; a particle stays on the side it came from.

Bad input: wrong shapes, NaN or inf, triangle indices out of range, coordinates beyond
``MAX_COORDINATE`` raise ``ValueError`` naming the argument (the Blender side catches it,
reports the object and skips it). Problems that do not stop the collider from working are
listed in ``Collider.problems`` (human-readable, for a status line): degenerate triangles
(zero area, repeated vertices) that were dropped, an open or non-manifold mesh treated as a
shell, no usable triangle at all (``Collider.usable`` is then False and the collider does
nothing).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .validation import as_float_array, as_nonnegative_float

__all__ = ["Collider", "Plane", "MAX_COORDINATE"]

MAX_COORDINATE = 1.0e7
"""Largest accepted |coordinate| of a collider vertex [m]. Beyond it squared distances lose
all precision at rope scale (and 1e30 would overflow to inf); no scene needs it."""

_DEGENERATE_AREA = 1e-14
"""Twice the triangle area [m^2] under which a triangle has no usable normal (the kernels
re-check it per substep, for meshes that collapse while they deform)."""


@dataclass(frozen=True)
class _Topology:
    """What depends on the triangles only (shared by ``Collider.moved`` copies)."""

    triangles: np.ndarray
    """int64 (T, 3) the usable triangles, wound outward if the mesh is closed"""
    triangle_edges: np.ndarray
    """int64 (T, 3) edge id of (v0, v1), (v1, v2), (v2, v0) of each triangle"""
    edge_count: int
    vertex_count: int
    closed: bool
    problems: tuple[str, ...]


class Collider:
    """A triangle mesh in world space for one frame.

    Args:
        vertices: (V, 3) [m] vertex positions at the start of the frame.
        triangles: (T, 3) int vertex indices (whole-numbered floats accepted).
        vertices_end: (V, 3) [m] positions at the end of the frame, for a moving or
            deforming collider; None (default) is a collider at rest.
        thickness: outer shell [m] (Blender's "thickness outer"): the rope keeps
            r + thickness from the surface. >= 0.
        static_friction: mu_s >= 0. A contact sticks while the tangential slip of a substep
            is below mu_s times the normal correction (the penetration resolved).
        dynamic_friction: mu_k >= 0. Sliding slip is reduced by mu_k times the normal
            correction (Coulomb friction at position level, Macklin et al. 2014 eq. 24).

    Raises ValueError naming the argument (``vertices``, ``triangles``, ``vertices_end``,
    ``thickness``, ``static_friction``, ``dynamic_friction``) for invalid input.
    """

    def __init__(self, vertices: Any, triangles: Any, *, vertices_end: Any = None,
                 thickness: float = 0.0, static_friction: float = 0.5,
                 dynamic_friction: float = 0.4, _topology: _Topology | None = None) -> None:
        self.vertices = _as_vertices(vertices, "vertices")
        """Vertex positions at the start of the frame [m], shape [vertex_count, 3]"""
        self.vertices_end = self.vertices if vertices_end is None else _as_vertices(
            vertices_end, "vertices_end")
        """Vertex positions at the end of the frame [m], shape [vertex_count, 3]"""
        if self.vertices_end.shape != self.vertices.shape:
            raise ValueError(f"vertices_end: expected shape {self.vertices.shape}, "
                             f"got {self.vertices_end.shape}")
        self.thickness = as_nonnegative_float(thickness, "thickness")
        """Outer shell [m] added to the rope radius"""
        self.static_friction = as_nonnegative_float(static_friction, "static_friction")
        """Static friction coefficient mu_s"""
        self.dynamic_friction = as_nonnegative_float(dynamic_friction, "dynamic_friction")
        """Dynamic (kinetic) friction coefficient mu_k"""
        if _topology is not None and _topology.vertex_count != len(self.vertices):
            raise ValueError(f"vertices: expected {_topology.vertex_count} vertices (the "
                             f"mesh's), got {len(self.vertices)}")
        self._topology = _topology if _topology is not None else _analyse(
            self.vertices, _as_triangles(triangles, len(self.vertices)))

    @property
    def triangles(self) -> np.ndarray:
        """The usable triangles, int64 (T, 3); degenerate ones dropped, closed meshes wound
        outward."""
        return self._topology.triangles

    @property
    def closed(self) -> bool:
        """True for a closed, consistently wound (after fixing the winding) manifold mesh: a
        solid. False: a two-sided shell."""
        return self._topology.closed

    @property
    def problems(self) -> tuple[str, ...]:
        """Human-readable notes on what was dropped or how the mesh is treated ("" free)."""
        return self._topology.problems

    @property
    def usable(self) -> bool:
        """False if no triangle is usable: the collider then does nothing."""
        return len(self._topology.triangles) > 0

    @property
    def moving(self) -> bool:
        return self.vertices_end is not self.vertices

    def moved(self, vertices: Any, vertices_end: Any = None) -> Collider:
        """The same mesh (topology and settings) at new positions: the next frame of an animated
        collider, without analysing the triangles again (that is the costly part)."""
        return Collider(vertices, None, vertices_end=vertices_end, thickness=self.thickness,
                        static_friction=self.static_friction,
                        dynamic_friction=self.dynamic_friction, _topology=self._topology)

    def __repr__(self) -> str:
        return (f"Collider({len(self.vertices)} vertices, {len(self.triangles)} triangles, "
                f"closed={self.closed}, thickness={self.thickness})")


class Plane:
    """An infinite ground: the half-space below the plane through ``point`` [m] with
    ``normal`` (any length > 0, pointing out of the ground) is solid. Static, one-sided, so
    nothing can tunnel through it. Friction as in ``Collider``; ``thickness`` [m] lifts the
    contact surface along the normal."""

    def __init__(self, point: Any = (0.0, 0.0, 0.0), normal: Any = (0.0, 0.0, 1.0), *,
                 thickness: float = 0.0, static_friction: float = 0.5,
                 dynamic_friction: float = 0.4) -> None:
        self.point = as_float_array(point, "point", (3,))
        """A point on the plane [m]"""
        if np.abs(self.point).max() > MAX_COORDINATE:
            raise ValueError(f"point: coordinates beyond {MAX_COORDINATE:g} m")
        n = as_float_array(normal, "normal", (3,))
        length = float(np.linalg.norm(n))
        if not length > 1e-12 or not np.isfinite(length):
            raise ValueError("normal: must be a non-zero vector")
        self.normal = n / length
        """Unit normal, out of the solid side"""
        self.thickness = as_nonnegative_float(thickness, "thickness")
        self.static_friction = as_nonnegative_float(static_friction, "static_friction")
        self.dynamic_friction = as_nonnegative_float(dynamic_friction, "dynamic_friction")

    def __repr__(self) -> str:
        return f"Plane(point={self.point.tolist()}, normal={self.normal.tolist()})"


def _as_vertices(value: Any, name: str) -> np.ndarray:
    array = as_float_array(value, name, (None, 3))
    if array.size and np.abs(array).max() > MAX_COORDINATE:
        raise ValueError(f"{name}: coordinates beyond {MAX_COORDINATE:g} m")
    return array


def _as_triangles(value: Any, vertex_count: int) -> np.ndarray:
    try:
        raw = np.array(value, copy=True)
    except (TypeError, ValueError) as error:
        raise ValueError(f"triangles: cannot be converted to an index array ({error})") from None
    if raw.size == 0:
        return np.zeros((0, 3), dtype=np.int64)
    if raw.ndim != 2 or raw.shape[1] != 3:
        raise ValueError(f"triangles: expected shape (T, 3), got {tuple(raw.shape)}")
    if raw.dtype.kind == "f":
        if not np.all(np.isfinite(raw)) or not np.all(raw == np.round(raw)):
            raise ValueError("triangles: indices must be whole numbers")
    elif raw.dtype.kind not in "iu":
        raise ValueError(f"triangles: indices must be integers, got dtype {raw.dtype}")
    triangles = raw.astype(np.int64)
    bad = (triangles < 0) | (triangles >= vertex_count)
    if bad.any():
        row = int(np.flatnonzero(bad.any(axis=1))[0])
        raise ValueError(f"triangles: triangle {row} = {tuple(triangles[row].tolist())} is out "
                         f"of range for {vertex_count} vertices")
    return np.ascontiguousarray(triangles)


def _analyse(vertices: np.ndarray, triangles: np.ndarray) -> _Topology:
    """Drop degenerate triangles, number the edges, decide closed or shell, fix the winding."""
    problems: list[str] = []
    a, b, c = (vertices[triangles[:, k]] for k in range(3))
    doubled_area = np.linalg.norm(np.cross(b - a, c - a), axis=1)
    repeated = ((triangles[:, 0] == triangles[:, 1]) | (triangles[:, 1] == triangles[:, 2])
                | (triangles[:, 2] == triangles[:, 0]))
    scale = np.maximum(np.abs(vertices).max(initial=1.0), 1.0)
    good = ~repeated & (doubled_area > _DEGENERATE_AREA * scale * scale)
    if not good.all():
        problems.append(f"{int((~good).sum())} degenerate triangle(s) (zero area) skipped")
    triangles = triangles[good]
    if len(triangles) == 0:
        problems.append("no usable triangles: the collider does nothing")
        empty = np.zeros((0, 3), dtype=np.int64)
        return _Topology(empty, empty, 0, len(vertices), False, tuple(problems))
    directed = np.stack([triangles, np.roll(triangles, -1, axis=1)], axis=-1).reshape(-1, 2)
    undirected = np.sort(directed, axis=1)
    keys, edge_of, uses = np.unique(undirected, axis=0, return_inverse=True, return_counts=True)
    edge_of = edge_of.reshape(-1)
    # Consistent winding: the two triangles at an edge walk it in opposite directions.
    forward = directed[:, 0] < directed[:, 1]
    forward_count = np.bincount(edge_of, weights=forward, minlength=len(keys))
    closed = bool(np.all(uses == 2) and np.all(forward_count == 1))
    if closed:
        a, b, c = (vertices[triangles[:, k]] for k in range(3))
        if np.einsum("ij,ij->i", a, np.cross(b, c)).sum() < 0.0:
            triangles = triangles[:, [0, 2, 1]]
            directed = np.stack([triangles, np.roll(triangles, -1, axis=1)], -1).reshape(-1, 2)
            _, edge_of = np.unique(np.sort(directed, axis=1), axis=0, return_inverse=True)
            edge_of = edge_of.reshape(-1)
    elif np.any(uses > 2):
        problems.append("non-manifold mesh (an edge with more than two faces): treated as a "
                        "two-sided shell")
    elif np.any(uses == 1):
        problems.append("open mesh: treated as a two-sided shell")
    else:
        problems.append("inconsistent face winding: treated as a two-sided shell")
    return _Topology(np.ascontiguousarray(triangles),
                     np.ascontiguousarray(edge_of.reshape(-1, 3).astype(np.int64)),
                     int(len(keys)), len(vertices), closed, tuple(problems))


# ------------------------------------------------------------- per-frame contact set-up

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


def as_colliders(colliders: Any) -> tuple[list[Collider], list[Plane]]:
    """Split the ``colliders`` argument of ``step`` into meshes and planes (ValueError naming
    ``colliders`` for anything else). Meshes without usable triangles are left out."""
    if colliders is None:
        return [], []
    if isinstance(colliders, (Collider, Plane)):
        colliders = (colliders,)
    try:
        items = list(colliders)
    except TypeError:
        raise ValueError("colliders: expected a sequence of Collider or Plane") from None
    meshes: list[Collider] = []
    planes: list[Plane] = []
    for index, item in enumerate(items):
        if isinstance(item, Collider):
            if item.usable:
                meshes.append(item)
        elif isinstance(item, Plane):
            planes.append(item)
        else:
            raise ValueError(f"colliders: item {index} is a {type(item).__name__}, "
                             "expected a Collider or a Plane")
    return meshes, planes


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

    def project(self, x: np.ndarray, v: np.ndarray, substep: int) -> np.ndarray:
        """Contacts at the end of ``substep`` (0-based), in place on x, v (N, 3); returns the
        (N,) uint8 flags of the particles moved (the caller clears them)."""
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
                    self.moved, touched, selective, scene.max_motion)
            if len(self.plane_rows):
                k.plane_contacts(x, v, w, radius, self.velocity_scale, self.plane_rows,
                                 self.push_max, self.moved, touched, selective)
            if len(self.pairs):
                np.bitwise_or(self.moved, touched, out=self.moved)
                touched[:] = 0
        if substep + 1 < self.substeps:
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
        return self.moved


CONTACT_PASSES = 2
"""Passes over all contacts per substep when rope-rope contacts are on."""

MIN_MARGIN = 1e-4
"""Smallest margin [m] the broad phase works with (a zero margin would redo it whenever a
contact held a particle)."""
