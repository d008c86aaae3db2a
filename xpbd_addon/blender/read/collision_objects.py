"""Colliders from the scene: objects with Blender's Collision physics, and the ground plane.

A collider is any visible mesh object (other than the rope) with a Collision modifier enabled
for the evaluation mode (Properties > Physics > Collision), as for Blender's Cloth. Each frame
its evaluated mesh (modifiers, armature, shape keys: a deforming character works) is read in
world space in bulk (``attributes['position']`` and ``loop_triangles`` with foreach_get) and
handed to the core as a ``core.collision.Collider``. Its settings map to the core's as:

- ``collision.thickness_outer`` [m] -> ``thickness`` (the rope keeps radius + thickness away);
- ``collision.cloth_friction`` (Blender's 0-80 "Friction" of Softbody & Cloth) -> Coulomb
  coefficient mu = cloth_friction / 100 for both static and dynamic friction, the scaling
  Blender's own cloth collision response uses (``pdef_cfrict * 0.01``), so the default 5 is
  a slippery 0.05;
- ``collision.damping`` has no counterpart: contacts are XPBD position constraints, fully
  inelastic (no bounce), which is Blender's damping 1.

A moving collider is passed with its positions at the start and the end of the frame (the
previous frame's snapshot and this one), which the core interpolates per substep, so a collider
swept through the rope pushes it instead of jumping over it. ``Snapshot`` holds one frame's
colliders; the mesh analysis (closedness, winding) is done once and reused while the
triangles stay the same (``Collider.moved``).
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...core.collision import Collider, Plane
from . import pins, tessellation

FRICTION_SCALE = 0.01
"""Blender's cloth collision: Coulomb coefficient = cloth_friction * 0.01."""


@dataclass
class MeshEntry:
    """One collider object at one frame."""

    triangles: np.ndarray
    """Vertex indices of the evaluated mesh's loop triangles, as read, int32 [T, 3]"""
    collider: Collider
    """The collider at rest at this frame's positions (world space)"""
    settings: tuple[float, float]
    """(thickness [m], mu) it was made with"""


@dataclass
class Snapshot:
    """The colliders of one frame, world space."""

    meshes: dict[str, MeshEntry] = field(default_factory=dict)
    """By object name"""
    planes: tuple[Plane, ...] = ()
    problems: tuple[str, ...] = ()
    """Human-readable notes: colliders skipped or treated specially"""


EMPTY = Snapshot()


def is_collider(obj: Any, render: bool) -> bool:
    """Whether ``obj`` is a mesh with Collision physics shown in this mode."""
    settings = obj.collision
    if obj.type != "MESH" or settings is None or not settings.use:
        return False
    for modifier in obj.original.modifiers:
        if modifier.type == "COLLISION":
            return bool(modifier.show_render if render else modifier.show_viewport)
    return False


def _read_mesh(obj: Any) -> tuple[np.ndarray, np.ndarray]:
    """World vertex positions [m] float64 [V, 3] and loop triangles int32 [T, 3] of an
    evaluated mesh object."""
    mesh = obj.data
    count = len(mesh.vertices)
    local = np.empty(3 * count, dtype=np.float32)
    mesh.attributes["position"].data.foreach_get("vector", local)
    triangles = _triangles(obj.original.session_uid, mesh, local)
    world = np.array(obj.matrix_world, dtype=np.float64)
    return pins.transform(world, local.reshape(-1, 3)), triangles


@dataclass(frozen=True)
class _Tessellation:
    """The loop triangles of a collider's mesh as last read, and what they were made from."""

    positions: np.ndarray
    """float32 (3 V,) the object-space vertex positions"""
    corners: np.ndarray
    """int32 (L,) each face corner's vertex (the ``.corner_vert`` attribute)"""
    triangle_faces: np.ndarray
    """int32 (T,) each triangle's face (``loop_triangle_polygons``: the face sizes)"""
    triangles: np.ndarray
    """int32 (T, 3) the triangles' vertices"""


_TESSELLATIONS: dict[int, _Tessellation] = {}
"""The last read loop triangles of each collider, by its original object's session_uid."""


def _triangles(uid: int, mesh: Any, local: np.ndarray) -> np.ndarray:
    """The loop triangles int32 (T, 3) of an evaluated ``mesh`` whose object-space positions
    are ``local``. Blender's tessellation is a function of the faces and the positions (a
    quad's diagonal flips when it folds), so when both equal the last read's, so do the
    triangles, and reading them again through RNA (about 140 ns a triangle: 23 ms for
    159,000) is skipped: a collider at rest, or moved only by its object's transform, is
    read at the cost of its positions. A deforming mesh of triangles and quads has them
    made from its corners and positions as Blender makes them
    (``tessellation.quad_triangles``), read only where that is not certain."""
    count = len(mesh.loop_triangles)
    attribute = mesh.attributes.get(".corner_vert")
    faces_of = getattr(mesh, "loop_triangle_polygons", None)
    if attribute is None or faces_of is None or attribute.domain != "CORNER":
        return _read_triangles(mesh, count)
    corners = np.empty(len(mesh.loops), dtype=np.int32)
    attribute.data.foreach_get("value", corners)
    triangle_faces = np.empty(count, dtype=np.int32)
    faces_of.foreach_get("value", triangle_faces)
    kept = _TESSELLATIONS.get(uid)
    if (kept is not None and np.array_equal(kept.positions, local)
            and np.array_equal(kept.corners, corners)
            and np.array_equal(kept.triangle_faces, triangle_faces)):
        return kept.triangles
    triangles = _made_triangles(mesh, local, corners, triangle_faces)
    if triangles is None:
        triangles = _read_triangles(mesh, count)
    _TESSELLATIONS[uid] = _Tessellation(local.copy(), corners, triangle_faces, triangles)
    return triangles


ASKED_QUADS = 256
"""Most quads whose cut is asked of Blender one by one (``_made_triangles``); more, and all
the triangles are read at once."""


def _made_triangles(mesh: Any, local: np.ndarray, corners: np.ndarray,
                    triangle_faces: np.ndarray) -> np.ndarray | None:
    """A deforming mesh of triangles and quads: its loop triangles made as Blender makes
    them (``tessellation``), the few quads whose cut is not certain asked of Blender; None
    (read them all) for a face of more corners or many such quads."""
    made = tessellation.quad_triangles(local, corners, triangle_faces)
    if made is None or len(made[1]) > ASKED_QUADS:
        return None
    triangles, unsure = made
    loop_triangles = mesh.loop_triangles
    for row in unsure.tolist():
        triangles[row] = loop_triangles[row].vertices
        triangles[row + 1] = loop_triangles[row + 1].vertices
    return triangles


def _read_triangles(mesh: Any, count: int) -> np.ndarray:
    """``mesh.loop_triangles``' vertices, int32 (count, 3)."""
    triangles = np.empty(3 * count, dtype=np.int32)
    mesh.loop_triangles.foreach_get("vertices", triangles)
    return triangles.reshape(-1, 3)


@dataclass(frozen=True)
class MeshRead:
    """One collider object's evaluated mesh as read at this frame."""

    name: str
    """The original object's name"""
    vertices: np.ndarray
    """(V, 3) [m] world positions, float64"""
    triangles: np.ndarray
    """int32 (T, 3) loop triangles"""
    settings: tuple[float, float]
    """(thickness [m], mu)"""


@dataclass
class _Shared:
    """What the ropes of one handler call share (``shared_reads``)."""

    reads: dict[bool, tuple[MeshRead, ...]] = field(default_factory=dict)
    """The scene's colliders read, by render mode"""
    colliders: dict[int, Collider] = field(default_factory=dict)
    """The core Collider made for a read (by ``id`` of the MeshRead, which ``reads``
    keeps alive): every rope gets the same object, so they share its broad-phase grids"""


_SHARED: list[_Shared] = []
"""A stack of what is shared within ``shared_reads``."""


@contextmanager
def shared_reads() -> Iterator[None]:
    """Within it the scene's colliders are found and read once (per render mode), for every
    rope, and each becomes one core Collider for all of them: the frame handler brings all
    ropes to one frame of one evaluated scene. Without it, 100 rope objects each looked at
    every object of the scene and read every collider mesh again (quadratic in the objects:
    12 ms a frame for 100 ropes), and each made its own Collider with its own broad-phase
    grid (1.8 ms to build for 10k triangles). Nests (the handler's replay of frames runs
    the handler again)."""
    _SHARED.append(_Shared())
    try:
        yield
    finally:
        _SHARED.pop()


def scene_meshes(depsgraph: Any) -> tuple[MeshRead, ...]:
    """Every collider of the evaluated scene with its mesh read (``is_collider``), empty
    meshes left out; read once within ``shared_reads``."""
    render = depsgraph.mode == "RENDER"
    shared = _SHARED[-1].reads if _SHARED else None
    if shared is not None and render in shared:
        return shared[render]
    found = []
    seen: set[int] = set()
    for obj in depsgraph.objects:
        if not is_collider(obj, render):
            continue
        seen.add(obj.original.session_uid)
        vertices, triangles = _read_mesh(obj)
        if len(triangles) == 0:
            continue
        params = (float(obj.collision.thickness_outer),
                  float(obj.collision.cloth_friction) * FRICTION_SCALE)
        found.append(MeshRead(obj.original.name, vertices, triangles, params))
    reads = tuple(found)
    if shared is not None:
        shared[render] = reads
        for uid in [u for u in _TESSELLATIONS if u not in seen]:
            del _TESSELLATIONS[uid]  # no longer a collider here
    return reads


def forget() -> None:
    """Drop the kept tessellations (a new file: the colliders are other objects)."""
    _TESSELLATIONS.clear()


def read(depsgraph: Any, settings: Any, exclude: str | Collection[str],
         previous: Snapshot | None) -> Snapshot:
    """This frame's colliders for the rope object named ``exclude`` (or the rope objects
    simulated together, a collection of names: ``group``) with ``settings``
    (``Object.xpbd``: use_collision, use_ground, ground_height, ground_friction).
    ``previous``: the last frame's snapshot, whose mesh analysis is reused when a collider's
    triangles and settings did not change. A collider the core refuses (NaN, huge) is skipped
    and named in ``problems``."""
    planes: tuple[Plane, ...] = ()
    if settings.use_ground:
        mu = float(settings.ground_friction)
        planes = (Plane((0.0, 0.0, float(settings.ground_height)), (0.0, 0.0, 1.0),
                        static_friction=mu, dynamic_friction=mu),)
    if not settings.use_collision:
        return Snapshot({}, planes, ())
    excluded = {exclude} if isinstance(exclude, str) else set(exclude)
    meshes: dict[str, MeshEntry] = {}
    problems: list[str] = []
    made = _SHARED[-1].colliders if _SHARED else {}
    for found in scene_meshes(depsgraph):
        name, vertices, triangles, params = (found.name, found.vertices, found.triangles,
                                             found.settings)
        if name in excluded:
            continue
        old = previous.meshes.get(name) if previous is not None else None
        try:
            if id(found) in made:
                # another rope made it this frame (equal to what this one would make)
                collider = made[id(found)]
            elif (old is not None and old.settings == params
                    and old.collider.vertices.shape == vertices.shape
                    and np.array_equal(old.triangles, triangles)):
                # Same mesh: keep the analysis, and for a collider at rest the very same
                # object (the core keeps its normals on it).
                same = np.array_equal(old.collider.vertices, vertices)
                collider = old.collider if same else old.collider.moved(vertices)
            else:
                collider = Collider(vertices, triangles, thickness=params[0],
                                    static_friction=params[1], dynamic_friction=params[1])
        except ValueError as exc:
            problems.append(f"'{name}' skipped: {exc}")
            continue
        if _SHARED:
            made[id(found)] = collider
        problems.extend(f"'{name}': {note}" for note in collider.problems)
        meshes[name] = MeshEntry(triangles, collider, params)
    return Snapshot(meshes, planes, tuple(problems))


def _same_mesh(old: Collider, new: Collider) -> bool:
    """Whether ``new`` is ``old``'s mesh (``Collider.moved`` keeps the analysis); compared by
    value when they were made apart (a rope that stepped alone, then with the others:
    ``shared_reads``)."""
    if old.same_mesh(new):
        return True
    return (old.closed == new.closed and np.array_equal(old.triangles, new.triangles)
            and old.thickness == new.thickness
            and old.static_friction == new.static_friction
            and old.dynamic_friction == new.dynamic_friction)


def for_step(start: Snapshot | None, end: Snapshot, s0: float = 0.0,
             s1: float = 1.0) -> list[Any]:
    """The ``colliders`` argument of ``core.step`` for a frame from ``start`` to ``end``
    (snapshots at the frame's start and end), or for the part ``s0``..``s1`` of that motion
    (interpolated frames while rendering). A collider new at ``end``, or whose mesh changed,
    is taken at rest at its end position."""
    colliders: list[Any] = list(end.planes)
    for name, entry in end.meshes.items():
        old = start.meshes.get(name) if start is not None else None
        b = entry.collider.vertices
        if old is None or not _same_mesh(old.collider, entry.collider):
            colliders.append(entry.collider)
            continue
        a = old.collider.vertices
        if a is b or (not old.collider.same_mesh(entry.collider)
                      and np.array_equal(a, b)):  # did not move
            colliders.append(entry.collider)
        elif s0 == 0.0 and s1 == 1.0:
            colliders.append(entry.collider.moved(a, b))
        else:
            colliders.append(entry.collider.moved(a + s0 * (b - a), a + s1 * (b - a)))
    return colliders
