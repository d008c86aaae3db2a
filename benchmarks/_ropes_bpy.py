"""The benchmark ropes as Blender data: one edge-only mesh or one hair ``Curves`` object.

Shared scene builder for the benchmarks (``blender_builtin.py`` and anything else that wants
the same ropes). Only ``numpy`` is needed to compute the geometry; the ``make_*`` functions
need ``bpy`` (5.0 or 5.3) and are imported lazily so this module loads anywhere.

Layout: each rope is ``length`` metres long with ``n_points`` points and hangs straight down
(-Z) from its first point at ``top_z``; the ropes' tops form a square grid in the XY plane,
``spacing`` apart, so they never touch. ``horizontal=True`` lays every rope along +X instead
(released from there it swings down in its own XZ plane), with the tops in one row along Y,
``spacing`` apart, so that no two ropes overlap while they swing.
The first point of every rope is the pinned one: weight 1 in the vertex group ``PIN_GROUP``,
every other vertex is in the group with weight 0 (so no solver has to guess what an absent
vertex means).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

PIN_GROUP = "pin"


def rope_positions(
    n_ropes: int,
    n_points: int,
    length: float = 2.0,
    spacing: float = 0.1,
    top_z: float = 2.0,
    horizontal: bool = False,
) -> np.ndarray:
    """Rest positions, shape (n_ropes, n_points, 3), float32; rope r, point 0 is the pin."""
    r = np.arange(n_ropes)
    if horizontal:
        ox = np.zeros(n_ropes)
        oy = (r - (n_ropes - 1) / 2) * spacing
    else:
        side = max(1, math.ceil(math.sqrt(n_ropes)))
        ox = (r % side - (side - 1) / 2) * spacing
        oy = (r // side - (side - 1) / 2) * spacing
    t = np.linspace(0.0, length, n_points)
    pos = np.zeros((n_ropes, n_points, 3), dtype=np.float64)
    pos[:, :, 0] = ox[:, None]
    pos[:, :, 1] = oy[:, None]
    pos[:, :, 2] = top_z
    if horizontal:
        pos[:, :, 0] += t[None, :]
    else:
        pos[:, :, 2] -= t[None, :]
    return pos.astype(np.float32)


def chain_edges(n_ropes: int, n_points: int) -> np.ndarray:
    """Edges (n_ropes * (n_points - 1), 2) int32 joining consecutive points of each rope."""
    base = (np.arange(n_ropes) * n_points)[:, None]
    i = np.arange(n_points - 1)[None, :]
    a = (base + i).ravel()
    return np.stack([a, a + 1], axis=1).astype(np.int32)


def rope_lengths(positions: np.ndarray, n_ropes: int, n_points: int) -> np.ndarray:
    """Polyline length of each rope from flat (n_ropes * n_points * 3) positions."""
    p = np.asarray(positions, dtype=np.float64).reshape(n_ropes, n_points, 3)
    return np.linalg.norm(np.diff(p, axis=1), axis=2).sum(axis=1)


def make_edge_mesh_object(name: str, n_ropes: int, n_points: int, **layout: Any) -> Any:
    """One mesh object with ``n_ropes`` disconnected edge chains and the pin vertex group."""
    import bpy

    pos = rope_positions(n_ropes, n_points, **layout)
    edges = chain_edges(n_ropes, n_points)
    nv = n_ropes * n_points
    mesh = bpy.data.meshes.new(name)
    mesh.vertices.add(nv)
    mesh.edges.add(len(edges))
    mesh.attributes["position"].data.foreach_set("vector", pos.ravel())
    mesh.edges.foreach_set("vertices", edges.ravel())
    mesh.update()
    mesh.validate()
    obj = bpy.data.objects.new(name, mesh)
    bpy.context.scene.collection.objects.link(obj)
    vg = obj.vertex_groups.new(name=PIN_GROUP)
    pinned = list(range(0, nv, n_points))
    free = [i for i in range(nv) if i % n_points]
    vg.add(pinned, 1.0, "REPLACE")
    vg.add(free, 0.0, "REPLACE")
    return obj


def make_hair_curves_object(name: str, n_ropes: int, n_points: int, **layout: Any) -> Any:
    """One hair ``Curves`` object with ``n_ropes`` poly curves; the root (point 0) is the pin."""
    import bpy

    pos = rope_positions(n_ropes, n_points, **layout)
    curves = bpy.data.hair_curves.new(name)
    curves.add_curves([n_points] * n_ropes)
    curves.attributes["position"].data.foreach_set("vector", pos.ravel())
    # Also store the pin weight as a point attribute, for node setups that want one.
    w = np.zeros(n_ropes * n_points, dtype=np.float32)
    w[::n_points] = 1.0
    attr = curves.attributes.new(PIN_GROUP, "FLOAT", "POINT")
    attr.data.foreach_set("value", w)
    obj = bpy.data.objects.new(name, curves)
    bpy.context.scene.collection.objects.link(obj)
    return obj
