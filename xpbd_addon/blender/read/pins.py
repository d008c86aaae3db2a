"""Pinned particles and their evaluated world-space targets (a pinned particle
follows its object, parent, hooks, armature and shape keys each frame).

Which particles are pinned is decided when a simulation is built:
- mesh: vertices with weight > 0 in the vertex group ``pin_group``, and loose vertices (no
  edge) which would otherwise fall on their own;
- curve: each spline's first / last point (``pin_first`` / ``pin_last``) and every point that a
  Hook modifier with a target moves (a hook means "this point is held").

Where they are is read every frame in ``frame_change_post``, from the evaluated depsgraph:
- mesh: the evaluated mesh (Armature weights, hooks, shape keys, any deform modifier) when
  the object has modifiers or shape keys and the evaluated vertex count matches; otherwise the
  rest shape. Then the evaluated object matrix (animation, parents, bone parents).
- curve: Blender does not expose deformed control points of legacy curves to Python, so the
  Hook modifiers are evaluated here: H = object^-1 * target (* bone) * hook.matrix_inverse,
  p' = p + strength * (H p - p), in modifier order. Hook falloff is not applied (the full
  strength moves every assigned point); other curve modifiers do not move pins.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from mathutils import Matrix

from .geometry import Layout, RopeError


@dataclass
class CurveHook:
    """One Hook modifier of a curve and the particles it moves."""

    name: str
    """Modifier name (looked up each frame, so a removed modifier just stops acting)"""
    particles: np.ndarray
    """Particle indices moved by the hook, int64"""


def mesh_group_weights(obj: Any, group_name: str) -> np.ndarray:
    """Weights [0..1] of every vertex in the vertex group, shape [N]; RopeError if missing.

    Vertex groups have no bulk accessor in the Python API, so this loops over the vertices;
    it runs once when a simulation is built, never per frame.
    """
    group = obj.vertex_groups.get(group_name)
    if group is None:
        raise RopeError(f"Pin group '{group_name}' does not exist on '{obj.name}'")
    index = group.index
    weights = np.zeros(len(obj.data.vertices))
    for vertex in obj.data.vertices:
        for element in vertex.groups:
            if element.group == index:
                weights[vertex.index] = element.weight
    return weights


def _hook_index_map(layout: Layout) -> np.ndarray:
    """Particle of each hook vertex index: poly/NURBS points count once, Bezier points three
    times (handle_left, co, handle_right), splines in order."""
    blocks = []
    for start, n, bezier in layout.splines:
        ids = np.arange(start, start + n, dtype=np.int64)
        blocks.append(np.repeat(ids, 3) if bezier else ids)
    return np.concatenate(blocks) if blocks else np.zeros(0, dtype=np.int64)


def curve_hooks(obj: Any, layout: Layout) -> list[CurveHook]:
    """The Hook modifiers of a curve object that have a target, with their particles."""
    index_map = _hook_index_map(layout)
    hooks = []
    for modifier in obj.modifiers:
        if modifier.type != "HOOK" or modifier.object is None:
            continue
        indices = np.array(list(modifier.vertex_indices), dtype=np.int64)
        indices = indices[(indices >= 0) & (indices < len(index_map))]
        if len(indices):
            hooks.append(CurveHook(modifier.name, np.unique(index_map[indices])))
    return hooks


def pin_mask(obj: Any, layout: Layout, settings: Any, hooks: list[CurveHook],
             pin_map: np.ndarray | None = None) -> np.ndarray:
    """Boolean mask of the pinned particles, shape [N]; with a Pin Map's weights ``pin_map``
    (N,), its points of weight 1 too (read/maps.py)."""
    pinned = np.zeros(layout.particle_count, dtype=bool)
    if pin_map is not None:
        pinned |= pin_map >= 1.0
    if layout.kind == "MESH":
        if settings.pin_group:
            pinned |= mesh_group_weights(obj, settings.pin_group) > 0.0
        # Loose vertices have no constraint to hang from: hold them (like lone curve points)
        # instead of letting them fall forever.
        degree = np.bincount(layout.edges.ravel(), minlength=layout.particle_count)
        pinned |= degree == 0
        return pinned
    for start, n, _bezier in layout.splines:
        if n < 2:
            pinned[start:start + n] = True  # a lone point has no constraint to hang from
            continue
        if settings.pin_first:
            pinned[start] = True
        if settings.pin_last:
            pinned[start + n - 1] = True
    for hook in hooks:
        pinned[hook.particles] = True
    return pinned


def affine_inverse(matrix: np.ndarray) -> np.ndarray:
    """Inverse of a 4x4 object matrix. mathutils (C, a few us) rather than numpy.linalg,
    whose LAPACK call cost ~2 ms inside Blender here (thread pool start-up)."""
    return np.array(Matrix(matrix.tolist()).inverted(), dtype=np.float64)


def _matrix(m: Any) -> np.ndarray:
    return np.array(m, dtype=np.float64)


FEW_POINTS = 8
"""``transform`` takes up to this many points one by one in Python floats."""


def transform(matrix: np.ndarray, points: np.ndarray) -> np.ndarray:
    """``matrix`` (4x4 affine) applied to ``points`` [N, 3], float64, shape [N, 3].

    One output column at a time with 1-D multiply-adds: ``points @ R.T`` goes through BLAS,
    whose threads made it cost ~0.5-1 ms per call at 10k points inside Blender here, and
    (N, 1) * (3,) broadcasting is slow for an inner size of 3; this is ~0.1 ms.
    """
    p = np.asarray(points, dtype=np.float64)
    if len(p) <= FEW_POINTS:
        # the pins of a rope, every frame: plain floats, the same operations in the same
        # order (the same bits), without a dozen numpy calls of ~1 us each
        rows = matrix.tolist()
        return np.array([[x * r[0] + y * r[1] + z * r[2] + r[3] for r in rows[:3]]
                         for x, y, z in p.tolist()], dtype=np.float64).reshape(-1, 3)
    out = np.empty((len(p), 3))
    x, y, z = p[:, 0], p[:, 1], p[:, 2]
    for i in range(3):
        row = matrix[i]
        column = out[:, i]
        np.multiply(x, row[0], out=column)
        column += y * row[1]
        column += z * row[2]
        column += row[3]
    return out


def _has_deform(obj: Any) -> bool:
    data = obj.data
    return bool(len(obj.modifiers)) or getattr(data, "shape_keys", None) is not None


def mesh_targets(obj: Any, depsgraph: Any, rest_local: np.ndarray,
                 pinned_ids: np.ndarray) -> np.ndarray:
    """World positions [m] of the pinned vertices at the evaluated frame, shape [P, 3]."""
    evaluated = obj.evaluated_get(depsgraph)
    world = _matrix(evaluated.matrix_world)
    local = rest_local[pinned_ids].astype(np.float64)
    if _has_deform(obj) and len(pinned_ids):
        mesh = evaluated.data
        if len(mesh.vertices) == len(rest_local):
            buf = np.empty(3 * len(rest_local), dtype=np.float32)
            mesh.attributes["position"].data.foreach_get("vector", buf)
            local = buf.reshape(-1, 3)[pinned_ids].astype(np.float64)
    return transform(world, local)


def curve_targets(obj: Any, depsgraph: Any, rest_local: np.ndarray, pinned_ids: np.ndarray,
                  hooks: list[CurveHook], render: bool) -> np.ndarray:
    """World positions [m] of the pinned curve points at the evaluated frame, shape [P, 3]."""
    evaluated = obj.evaluated_get(depsgraph)
    world = _matrix(evaluated.matrix_world)
    if not hooks:
        return transform(world, rest_local[pinned_ids, 0:3].astype(np.float64))
    local = rest_local[:, 0:3].astype(np.float64)
    if hooks:
        world_inverse = affine_inverse(world)
        for hook in hooks:
            modifier = obj.modifiers.get(hook.name)
            if modifier is None or modifier.type != "HOOK" or modifier.object is None:
                continue
            if not (modifier.show_render if render else modifier.show_viewport):
                continue
            target = modifier.object.evaluated_get(depsgraph)
            target_world = _matrix(target.matrix_world)
            bone = modifier.subtarget
            if bone and target.type == "ARMATURE" and target.pose is not None:
                pose_bone = target.pose.bones.get(bone)
                if pose_bone is not None:
                    target_world = target_world @ _matrix(pose_bone.matrix)
            hook_matrix = world_inverse @ target_world @ _matrix(modifier.matrix_inverse)
            p = local[hook.particles]
            local[hook.particles] = p + modifier.strength * (transform(hook_matrix, p) - p)
    return transform(world, local[pinned_ids])
