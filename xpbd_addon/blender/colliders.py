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

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..core.collision import Collider, Plane
from . import pins

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
    triangles = np.empty(3 * len(mesh.loop_triangles), dtype=np.int32)
    mesh.loop_triangles.foreach_get("vertices", triangles)
    world = np.array(obj.matrix_world, dtype=np.float64)
    return pins.transform(world, local.reshape(-1, 3)), triangles.reshape(-1, 3)


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
    render = depsgraph.mode == "RENDER"
    meshes: dict[str, MeshEntry] = {}
    problems: list[str] = []
    for obj in depsgraph.objects:
        name = obj.original.name
        if name in excluded or not is_collider(obj, render):
            continue
        vertices, triangles = _read_mesh(obj)
        if len(triangles) == 0:
            continue
        params = (float(obj.collision.thickness_outer),
                  float(obj.collision.cloth_friction) * FRICTION_SCALE)
        old = previous.meshes.get(name) if previous is not None else None
        try:
            if (old is not None and old.settings == params
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
        problems.extend(f"'{name}': {note}" for note in collider.problems)
        meshes[name] = MeshEntry(triangles, collider, params)
    return Snapshot(meshes, planes, tuple(problems))


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
        if old is None or old.collider.triangles is not entry.collider.triangles:
            colliders.append(entry.collider)
            continue
        a = old.collider.vertices
        if a is b:  # did not move
            colliders.append(entry.collider)
        elif s0 == 0.0 and s1 == 1.0:
            colliders.append(entry.collider.moved(a, b))
        else:
            colliders.append(entry.collider.moved(a + s0 * (b - a), a + s1 * (b - a)))
    return colliders
