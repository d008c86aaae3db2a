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

from dataclasses import dataclass, field
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


class MeshCaches:
    """What the contacts keep for one mesh across its frames (shared by a ``Collider`` and
    its ``moved`` copies: its frames move it, the mesh stays); written only by
    ``contacts.scene``."""

    __slots__ = ("swept", "spare_tables")

    def __init__(self) -> None:
        self.swept: list = []
        """[collider, lo, hi, motion]: the triangles' boxes over the frame of the last
        collider of this mesh that asked for them, and its largest vertex motion
        (``contacts.scene.swept``; the arrays reused frame after frame)"""
        self.spare_tables: list = []
        """The contacts' per-triangle tables of this mesh moving, free for its next frame
        (``contacts.scene.MeshScene.release``)"""


@dataclass(frozen=True)
class _Topology:
    """What depends on the triangles only (shared by ``Collider.moved`` copies)."""

    triangles: np.ndarray
    """int64 (T, 3) the usable triangles, wound outward if the mesh is closed"""
    triangle_edges: np.ndarray
    """int64 (T, 3) edge id of (v0, v1), (v1, v2), (v2, v0) of each triangle"""
    edge_count: int
    vertex_count: int
    edge_vertices: np.ndarray
    """int64 (E, 2) the two vertices of each edge"""
    edge_faces: np.ndarray
    """int64 (E, 2) the triangles at each edge; the second -1 where it has not exactly two
    (an open mesh's border, a non-manifold edge)"""
    closed: bool
    problems: tuple[str, ...]
    caches: MeshCaches = field(default_factory=MeshCaches, compare=False)
    """What the contacts keep for this mesh across its frames (``Collider.mesh_caches``)"""


class ColliderCaches:
    """What the contacts derive from one collider's (read-only) arrays, kept on it so that a
    static collider passed again every frame pays for it once (``contacts.scene``, which
    alone writes them)."""

    __slots__ = ("triangle_grids", "mesh_scene")

    def __init__(self) -> None:
        self.triangle_grids: dict[float, tuple] = {}
        """{cell [m]: (colliders, ``triangle_grid``)}: the broad-phase grids of the static
        scene this collider comes first in, by cell size (ropes falling, resting or sliding
        ask for different cells, and all ropes on one static collider share its grids)"""
        self.mesh_scene: Any = None
        """The ``contacts.scene.MeshScene`` of the static colliders this one comes first
        in"""


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

    __slots__ = ("vertices", "vertices_end", "thickness", "static_friction",
                 "dynamic_friction", "_topology", "caches")

    def __init__(self, vertices: Any, triangles: Any, *, vertices_end: Any = None,
                 thickness: float = 0.0, static_friction: float = 0.5,
                 dynamic_friction: float = 0.4, _topology: _Topology | None = None) -> None:
        # (no other attributes: what is derived from the arrays lives in ``caches``)
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
        self.caches = ColliderCaches()
        """What the contacts derive from this collider (``ColliderCaches``)"""

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

    @property
    def triangle_edges(self) -> np.ndarray:
        """int64 (T, 3) the edge id of (v0, v1), (v1, v2), (v2, v0) of each triangle"""
        return self._topology.triangle_edges

    @property
    def edge_count(self) -> int:
        return self._topology.edge_count

    @property
    def edge_vertices(self) -> np.ndarray:
        """int64 (E, 2) the two vertices of each edge"""
        return self._topology.edge_vertices

    @property
    def edge_faces(self) -> np.ndarray:
        """int64 (E, 2) the triangles at each edge; the second -1 where it has not exactly
        two (an open mesh's border, a non-manifold edge)"""
        return self._topology.edge_faces

    @property
    def mesh_caches(self) -> MeshCaches:
        """What the contacts keep for this mesh across its frames: the same object for this
        collider and every ``moved`` copy of it (one mesh)."""
        return self._topology.caches

    def same_mesh(self, other: Collider) -> bool:
        """Whether ``other`` is this mesh at other positions (one is a ``moved`` copy of the
        other, or both of a third): the analysis is shared, not compared."""
        return self._topology is other._topology

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

    __slots__ = ("point", "normal", "thickness", "static_friction", "dynamic_friction")

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
    array = as_float_array(value, name, (None, 3))  # a copy
    if array.size and np.abs(array).max() > MAX_COORDINATE:
        raise ValueError(f"{name}: coordinates beyond {MAX_COORDINATE:g} m")
    # read-only: what is derived from a collider (normals, the joined soup and its grid) is
    # kept on it across frames, so it must never change (a new frame is ``moved``)
    array.flags.writeable = False
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
        pairs = np.zeros((0, 2), dtype=np.int64)
        return _Topology(empty, empty, 0, len(vertices), pairs, pairs, False, tuple(problems))
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
                     int(len(keys)), len(vertices), np.ascontiguousarray(keys, dtype=np.int64),
                     _edge_faces(edge_of, uses), closed, tuple(problems))


def _edge_faces(edge_of: np.ndarray, uses: np.ndarray) -> np.ndarray:
    """int64 (E, 2) the triangles at each edge (``edge_of`` (3 T,): the edge of each
    triangle's sides in order), the second -1 unless the edge has exactly two."""
    order = np.argsort(edge_of, kind="stable")
    first = np.searchsorted(edge_of[order], np.arange(len(uses)))
    faces = np.full((len(uses), 2), -1, dtype=np.int64)
    faces[:, 0] = order[first] // 3
    two = uses == 2
    faces[two, 1] = order[first[two] + 1] // 3
    return faces


# ------------------------------------------------------------ the step argument


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


def colliders_over(colliders: list, s0: float, s1: float) -> list:
    """The colliders moving over the fraction s0..s1 of their frame's motion (a frame run a
    substep per ``step`` call: soft pins, air), planes and still meshes as they are."""
    out = []
    for collider in colliders:
        if isinstance(collider, Collider) and collider.moving:
            a, b = collider.vertices, collider.vertices_end
            out.append(collider.moved(a + s0 * (b - a), a + s1 * (b - a)))
        else:
            out.append(collider)
    return out
