"""Render geometry of a baked rope: the rope as it renders (a curve's bevel, a mesh's faces),
or a tube around its points where it has no faces (an edge mesh, a curve without bevel), so a
rope exports as a visible, valid mesh. Used by Bake to Bones (the skin) and the cache bake.

A tube has ``TUBE_SIDES`` vertices in a ring around every point of a chain, the rings turned
along the chain by the smallest rotation from one point's tangent to the next (no twist),
quads between neighbouring rings, open ends.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...core import bone_frames

TUBE_SIDES = 8
"""Vertices per ring of a tube [count]."""

MIN_TUBE_RADIUS = 0.002
"""Tube radius [m] when the rope's radius (and a curve's bevel) is 0: thin but visible."""


def tube_radius(obj: Any) -> float:
    """Radius [m] of the tube around ``obj``'s points: a curve's bevel depth, else the rope's
    radius (``xpbd.radius``), at least ``MIN_TUBE_RADIUS``."""
    radius = float(obj.xpbd.radius)
    if obj.type == "CURVE" and obj.data.bevel_depth > 0.0:
        radius = float(obj.data.bevel_depth)
    return max(radius, MIN_TUBE_RADIUS)


def neighbours(chains: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Point ids before and after every chain point (the chains concatenated; a chain's end
    is its own neighbour), for central differences."""
    before, after = [], []
    for chain in chains:
        before.append(np.concatenate([chain[:1], chain[:-1]]))
        after.append(np.concatenate([chain[1:], chain[-1:]]))
    return np.concatenate(before), np.concatenate(after)


def tangents(positions: np.ndarray, chains: list[np.ndarray]) -> np.ndarray:
    """Unit tangents [..., P, 3] of the chain points (the chains concatenated) of
    ``positions`` [..., N, 3]: central differences inside a chain, one-sided at its ends."""
    before, after = neighbours(chains)
    return bone_frames.unit(positions[..., after, :] - positions[..., before, :])


def point_frames(positions: np.ndarray, chains: list[np.ndarray]) -> np.ndarray:
    """Frames [P, 3, 3] (Y along the tangent) of the chain points (the chains concatenated)
    of ``positions`` [N, 3], turned along each chain without twist."""
    tangent = tangents(positions, chains)
    starts = np.cumsum([0] + [len(c) for c in chains[:-1]])
    y = np.zeros((len(starts), 3))
    y[:, 1] = 1.0
    root = bone_frames.min_rotation(y, tangent[starts])
    return bone_frames.chain_rest_frames(tangent, starts, root)


def tube_vertices(positions: np.ndarray, x_axis: np.ndarray, z_axis: np.ndarray,
                  radius: float | np.ndarray) -> np.ndarray:
    """Ring vertices [..., P * TUBE_SIDES, 3] (float32) around the points ``positions``
    [..., P, 3]: each ring in the plane of the point's ``x_axis`` and ``z_axis``
    [..., P, 3], ``radius`` [m] (one, or one per point [P]) from its point."""
    angle = np.linspace(0.0, 2.0 * np.pi, TUBE_SIDES, endpoint=False)
    cos = np.cos(angle).astype(np.float32)[:, None]
    sin = np.sin(angle).astype(np.float32)[:, None]
    r = np.asarray(radius, dtype=np.float32)
    r = r[:, None, None] if r.ndim else r
    p = positions.astype(np.float32)[..., :, None, :]
    rings = p + r * (cos * x_axis.astype(np.float32)[..., :, None, :]
                     + sin * z_axis.astype(np.float32)[..., :, None, :])
    return rings.reshape(rings.shape[:-3] + (-1, 3))


def tube_faces(chains: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Quads of the tubes of ``chains`` (ring vertices numbered as ``tube_vertices`` with
    ids = the concatenated chains): (vertex indices [Q, 4], point id of every ring vertex)."""
    quads, ring_point = [], []
    base = 0
    s = np.arange(TUBE_SIDES)
    for chain in chains:
        k = np.arange(len(chain) - 1)[:, None]
        a = base + k * TUBE_SIDES + s[None, :]
        b = base + k * TUBE_SIDES + (s[None, :] + 1) % TUBE_SIDES
        quads.append(np.stack([a, b, b + TUBE_SIDES, a + TUBE_SIDES], axis=-1).reshape(-1, 4))
        ring_point.append(np.repeat(chain, TUBE_SIDES))
        base += len(chain) * TUBE_SIDES
    return np.concatenate(quads), np.concatenate(ring_point)


def mesh_from_arrays(name: str, vertices: np.ndarray, quads: np.ndarray) -> Any:
    """A new mesh of ``vertices`` [V, 3] [m] and ``quads`` [Q, 4], built in bulk."""
    import bpy

    mesh: Any = bpy.data.meshes.new(name)
    mesh.vertices.add(len(vertices))
    mesh.vertices.foreach_set("co", np.ascontiguousarray(vertices, dtype=np.float32).ravel())
    mesh.loops.add(4 * len(quads))
    mesh.loops.foreach_set("vertex_index", np.ascontiguousarray(quads, np.int32).ravel())
    mesh.polygons.add(len(quads))
    mesh.polygons.foreach_set("loop_start", np.arange(0, 4 * len(quads), 4, dtype=np.int32))
    mesh.polygons.foreach_set("loop_total", np.full(len(quads), 4, dtype=np.int32))
    mesh.update(calc_edges=True)
    mesh.validate(clean_customdata=False)
    return mesh


def tube_mesh(name: str, positions: np.ndarray, chains: list[np.ndarray], radius: float,
              frames: np.ndarray | None = None) -> tuple[Any, np.ndarray]:
    """A tube mesh around the chains of ``positions`` [N, 3] [m] (their ``point_frames``
    [P, 3, 3] if known): (mesh, point id of every vertex)."""
    ids = np.concatenate(chains)
    if frames is None:
        frames = point_frames(positions, chains)
    quads, ring_point = tube_faces(chains)
    rings = tube_vertices(positions[ids], frames[:, :, 0], frames[:, :, 2], radius)
    return mesh_from_arrays(name, rings, quads), ring_point


def render_mesh(obj: Any, depsgraph: Any) -> Any | None:
    """The rope as it renders at the depsgraph's frame, as a mesh in world space, without the
    add-on's internal data; None if it has no faces (then a tube stands in)."""
    import bpy

    evaluated = obj.evaluated_get(depsgraph)
    mesh: Any = bpy.data.meshes.new_from_object(evaluated, preserve_all_data_layers=False,
                                                depsgraph=depsgraph)
    if not len(mesh.polygons):
        bpy.data.meshes.remove(mesh)
        return None
    mesh.name = f"{obj.name} Skin"
    mesh.transform(evaluated.matrix_world)
    strip_internal(mesh)
    return mesh


def strip_internal(mesh: Any) -> None:
    """Remove the rope's stored rest shape from a copy of it (wherever it is kept,
    ``rest.holder``): it means nothing there."""
    from ..read import rest

    rest.clear_data(mesh)
