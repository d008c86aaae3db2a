"""Bake to Bones: an armature whose bone chains follow the ropes, and a rope mesh skinned to it.

The result is what game engines import: glTF/FBX export it as a skinned, animated mesh.

- Chains: every spline of a curve with two or more points; for a mesh, every run of vertices
  joined by edges (i, i+1) (how Add Rope, Convert to Mesh and the rope builders number them;
  other topologies are refused with a message).
- Bones: one per joint, a joint every ``segments`` segments along a chain plus its last
  point. A bone's head sits on its joint and it points at the next joint (the last one
  continues the last segment). Bones have no parent: each is keyed with location and
  rotation (quaternion) on every frame, so every joint is exactly where the simulation put
  it, with no error accumulated along a parented chain (a parented chain would need bone
  scale to follow the stretch, which exporters and engines handle badly).
  Rotations are transported frame to frame (the smallest rotation from one frame's direction
  to the next), so bones do not flip where a rope turns past its rest direction.
- Skin: a mesh copy of the rope as it renders at the first baked frame (a curve's bevel
  included), in world space, parented to the armature with an Armature modifier. Each
  vertex follows the rope point nearest to it at that frame, blended linearly between the
  two joint bones around that point (with one bone per segment a vertex on a point follows
  its bone rigidly).
- The armature object stays at the world origin; the rope object is hidden while baked
  (its visibility is recorded and restored by Free Bake).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import action_compat, geometry
from .geometry import RopeError

MIN_BONE_LENGTH = 1e-4
"""Shortest bone [m]: Blender deletes zero-length bones when leaving Edit Mode."""

NEAREST_CHUNK = 4_000_000
"""Vertex x point distances computed at once when skinning (memory bound, 32 MB)."""


def chains(obj: Any, layout: geometry.Layout) -> list[np.ndarray]:
    """Particle indices of every chain, in order along it; RopeError if there is none."""
    if layout.kind == "CURVE":
        out = [np.arange(start, start + n) for start, n, _bezier in layout.splines if n >= 2]
    else:
        e = np.sort(layout.edges, axis=1)
        if not np.all(e[:, 1] == e[:, 0] + 1):
            raise RopeError(f"Bake to Bones needs the vertices of '{obj.name}' numbered along "
                            "each rope (every edge joins vertex i to i+1): convert it to a "
                            "curve and back, or bake keyframes")
        joined = np.zeros(max(layout.particle_count - 1, 0), dtype=bool)
        joined[e[:, 0]] = True
        pieces = np.split(np.arange(layout.particle_count), np.flatnonzero(~joined) + 1)
        out = [p for p in pieces if len(p) >= 2]
    if not out:
        raise RopeError(f"'{obj.name}' has no chain of two or more points to put bones on")
    return out


def check(obj: Any) -> None:
    """RopeError if ``obj`` cannot be baked to bones."""
    chains(obj, geometry.build_layout(obj))


def _joints(chain: np.ndarray, segments: int) -> np.ndarray:
    idx = np.arange(0, len(chain), segments)
    if idx[-1] != len(chain) - 1:
        idx = np.append(idx, len(chain) - 1)
    return idx


def _qmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton product of quaternions (w, x, y, z), shape [..., 4]."""
    aw, ax, ay, az = np.moveaxis(a, -1, 0)
    bw, bx, by, bz = np.moveaxis(b, -1, 0)
    return np.stack([aw * bw - ax * bx - ay * by - az * bz,
                     aw * bx + ax * bw + ay * bz - az * by,
                     aw * by - ax * bz + ay * bw + az * bx,
                     aw * bz + ax * by - ay * bx + az * bw], axis=-1)


def _min_rotation(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Smallest rotation taking unit vectors ``u`` to ``v`` (shape [B, 3]) as quaternions."""
    q = np.concatenate([1.0 + np.sum(u * v, axis=1, keepdims=True), np.cross(u, v)], axis=1)
    opposite = q[:, 0] < 1e-9
    if np.any(opposite):  # a half turn about any axis perpendicular to u
        axis = np.cross(u[opposite], [1.0, 0.0, 0.0])
        weak = np.linalg.norm(axis, axis=1) < 1e-6
        axis[weak] = np.cross(u[opposite][weak], [0.0, 0.0, 1.0])
        q[opposite] = np.concatenate([np.zeros((len(axis), 1)), axis], axis=1)
    return q / np.linalg.norm(q, axis=1, keepdims=True)


def _unit(d: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(d, axis=-1, keepdims=True)
    fallback = np.zeros_like(d)
    fallback[..., 2] = 1.0
    return np.where(n > 1e-12, d / np.maximum(n, 1e-300), fallback)


def _nearest(points: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    """Index into ``candidates`` [P, 3] of the nearest one to each of ``points`` [V, 3]."""
    out = np.empty(len(points), dtype=np.int64)
    step = max(1, NEAREST_CHUNK // max(len(candidates), 1))
    for i in range(0, len(points), step):
        d = points[i:i + step, None, :] - candidates[None, :, :]
        out[i:i + step] = np.argmin(np.einsum("vpk,vpk->vp", d, d), axis=1)
    return out


class _Plan:
    """The bones of one recorded object: joints, directions, names, skin weights."""

    def __init__(self, record: Any, segments: int) -> None:
        obj, rope = record.obj, record.rope
        self.record = record
        heads, froms, tos = [], [], []
        self.names: list[str] = []
        weights = []
        base = 0
        for c, chain in enumerate(chains(obj, rope.layout)):
            j = _joints(chain, segments)
            a = np.append(j[:-1], j[-2])  # bone i points from a[i] to b[i] along the chain
            b = np.append(j[1:], j[-1])
            heads.append(chain[j])
            froms.append(chain[a])
            tos.append(chain[b])
            self.names += [f"rope{c}.{i:03d}" for i in range(len(j))]
            # Skin weights of every point of the chain: between the joints around it.
            k = np.arange(len(chain))
            seg = np.minimum(k // segments, len(j) - 2)
            lo, hi = j[seg], j[seg + 1]
            weights.append((chain, base + seg, base + seg + 1, (k - lo) / (hi - lo)))
            base += len(j)
        self.weights = [np.concatenate(w) for w in zip(*weights, strict=True)]
        """Per chain point: particle id, lower bone, upper bone, weight of the upper bone"""
        world = np.stack(record.world)  # [F, N, 3]
        head_ids, from_ids, to_ids = (np.concatenate(v) for v in (heads, froms, tos))
        self.world_first = world[0]
        self.p = world[:, head_ids]
        """Joint (bone head) positions [m], world, shape [F, B, 3]"""
        self.d = _unit(world[:, to_ids] - world[:, from_ids])
        """Bone directions, unit, shape [F, B, 3]"""
        self.length = np.maximum(np.linalg.norm(world[0, to_ids] - world[0, from_ids], axis=1),
                                 MIN_BONE_LENGTH)
        """Rest bone lengths [m], shape [B]"""


def write_all(records: list, segments: int, scene: Any) -> None:
    """Bake to Bones for every recorded object: skins first (one frame change for all, at
    the first frame, before any armature exists), then all armatures in one Edit Mode
    session (each mode switch costs a view-layer update that grows with the scene), then
    the keys."""
    import bpy

    plans = [_Plan(record, segments) for record in records]
    for plan in plans:
        plan.record.obj.xpbd.bake.kind = "BONES"
    meshes = {}
    for first in sorted({r.first for r in records}):
        scene.frame_set(first)  # the objects are still left alone by the handler (BAKING)
        depsgraph = bpy.context.evaluated_depsgraph_get()
        for record in records:
            if record.first == first:
                meshes[record.obj.name] = _skin_mesh(record.obj, depsgraph)
    view_layer: Any = bpy.context.view_layer
    active = view_layer.objects.active
    selected = [o for o in view_layer.objects if o.select_get()]
    rigs: list[Any] = []
    for plan in plans:
        obj = plan.record.obj
        rig: Any = bpy.data.objects.new(f"{obj.name} Rig",
                                        bpy.data.armatures.new(f"{obj.name} Rig"))
        collection = obj.users_collection[0] if obj.users_collection else scene.collection
        collection.objects.link(rig)
        obj.xpbd.bake.rig = rig
        rigs.append(rig)
    for o in selected:
        o.select_set(False)
    for rig in rigs:
        rig.select_set(True)
    view_layer.objects.active = rigs[0]
    bpy.ops.object.mode_set(mode="EDIT")  # every selected armature at once
    try:
        for plan, rig in zip(plans, rigs, strict=True):
            edit = rig.data.edit_bones
            for name in plan.names:  # bones have no bulk constructor; setup, not per frame
                edit.new(name)
            tail = plan.p[0] + plan.d[0] * plan.length[:, None]
            edit.foreach_set("head", plan.p[0].astype(np.float32).ravel())
            edit.foreach_set("tail", tail.astype(np.float32).ravel())
    finally:
        bpy.ops.object.mode_set(mode="OBJECT")
        for rig in rigs:
            rig.select_set(False)
        for o in selected:
            o.select_set(True)
        view_layer.objects.active = active
    for plan, rig in zip(plans, rigs, strict=True):
        _key(plan, rig)
        _skin(plan, rig, meshes[plan.record.obj.name])


def _key(plan: _Plan, rig: Any) -> None:
    """Key every bone's location and rotation on every recorded frame."""
    obj, armature = plan.record.obj, rig.data
    position = {bone.name: i for i, bone in enumerate(armature.bones)}
    perm = np.array([position[name] for name in plan.names])
    flat = np.empty(16 * len(position), dtype=np.float32)
    armature.bones.foreach_get("matrix_local", flat)
    # foreach_get gives Blender's column-major 4x4 matrices: transpose to row-major.
    matrices = flat.reshape(-1, 4, 4).transpose(0, 2, 1)[perm].astype(np.float64)
    rot, head_rest = matrices[:, :3, :3], matrices[:, :3, 3]
    # Pose of a bone without parent: head = R_rest loc + h_rest, its Y axis = R_rest q(y).
    loc = np.einsum("bij,fbi->fbj", rot, plan.p - head_rest[None])
    direction = _unit(np.einsum("bij,fbi->fbj", rot, plan.d))
    quat = np.empty(direction.shape[:2] + (4,))
    y = np.zeros_like(direction[0])
    y[:, 1] = 1.0
    quat[0] = _min_rotation(y, direction[0])
    for f in range(1, len(quat)):
        q = _qmul(_min_rotation(direction[f - 1], direction[f]), quat[f - 1])
        quat[f] = q / np.linalg.norm(q, axis=1, keepdims=True)
    factory = action_compat.new_action(rig, f"{obj.name} XPBD Bake")
    obj.xpbd.bake.action = factory.action
    frames = plan.record.frames()
    for i, name in enumerate(plan.names):
        for c in range(3):
            fcurve = factory.new(f'pose.bones["{name}"].location', c)
            action_compat.write_keys(fcurve, frames, loc[:, i, c])
        for c in range(4):
            fcurve = factory.new(f'pose.bones["{name}"].rotation_quaternion', c)
            action_compat.write_keys(fcurve, frames, quat[:, i, c])


def _skin_mesh(obj: Any, depsgraph: Any) -> Any:
    """The rope as it renders at the depsgraph's frame, as a mesh in world space."""
    import bpy

    evaluated = obj.evaluated_get(depsgraph)
    mesh: Any = bpy.data.meshes.new_from_object(evaluated, preserve_all_data_layers=False,
                                           depsgraph=depsgraph)
    mesh.name = f"{obj.name} Skin"
    mesh.transform(evaluated.matrix_world)
    if "xpbd_rest" in mesh.attributes:  # the rope's stored rest shape means nothing here
        mesh.attributes.remove(mesh.attributes["xpbd_rest"])
    if "xpbd_rest_signature" in mesh:
        del mesh["xpbd_rest_signature"]
    return mesh


def _skin(plan: _Plan, rig: Any, mesh: Any) -> None:
    """Parent ``mesh`` to ``rig`` as a skinned object; hide the rope."""
    import bpy

    obj = plan.record.obj
    skin = bpy.data.objects.new(f"{obj.name} Skin", mesh)
    rig.users_collection[0].objects.link(skin)
    settings = obj.xpbd.bake
    settings.skin = skin
    skin.parent = rig
    modifier: Any = skin.modifiers.new("XPBD Rig", "ARMATURE")
    modifier.object = rig
    point_ids, lower, upper, frac = plan.weights
    count = len(mesh.vertices)
    co = np.empty(3 * count, dtype=np.float32)
    mesh.attributes["position"].data.foreach_get("vector", co)
    nearest = _nearest(co.reshape(-1, 3).astype(np.float64), plan.world_first[point_ids])
    bone = np.concatenate([lower[nearest], upper[nearest]])
    weight = np.concatenate([1.0 - frac[nearest], frac[nearest]])
    vertex = np.concatenate([np.arange(count), np.arange(count)])
    keep = weight > 1e-6
    bone, weight, vertex = bone[keep], weight[keep], vertex[keep]
    groups = [skin.vertex_groups.new(name=name) for name in plan.names]
    # vertex_groups have no bulk setter: one add() per (bone, weight) pair of values.
    code = bone * 1_000_003 + np.round(weight * 1e6).astype(np.int64)
    order = np.argsort(code, kind="stable")
    starts = np.flatnonzero(np.diff(code[order], prepend=-1))
    for s, e in zip(starts, np.append(starts[1:], len(order)), strict=True):
        ids = order[s:e]
        groups[int(bone[ids[0]])].add(vertex[ids].tolist(), float(weight[ids[0]]), "REPLACE")
    settings.hid_viewport, settings.hid_render = obj.hide_viewport, obj.hide_render
    obj.hide_viewport = True
    obj.hide_render = True


def free(obj: Any) -> None:
    """Remove the armature, its action and the skin of a bones bake; show the rope again."""
    import bpy

    settings = obj.xpbd.bake
    rig, skin = settings.rig, settings.skin
    action = settings.action
    if skin is not None:
        mesh = skin.data
        bpy.data.objects.remove(skin)
        if mesh is not None and mesh.users == 0:
            bpy.data.meshes.remove(mesh)
    if rig is not None:
        action_compat.remove_action(rig, action)
        armature = rig.data
        bpy.data.objects.remove(rig)
        if armature is not None and armature.users == 0:
            bpy.data.armatures.remove(armature)
    elif action is not None and action.users == 0:
        bpy.data.actions.remove(action)
    settings.rig = None
    settings.skin = None
    obj.hide_viewport = settings.hid_viewport
    obj.hide_render = settings.hid_render
