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


def write(record: Any, segments: int, scene: Any) -> None:
    """Create the armature, its keys and the skinned mesh for one recorded object."""
    import bpy

    obj, rope = record.obj, record.rope
    chain_list = chains(obj, rope.layout)
    world = np.stack(record.world)  # [F, N, 3]
    heads, froms, tos, names = [], [], [], []
    weights_of: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
    base = 0
    for c, chain in enumerate(chain_list):
        j = _joints(chain, segments)
        a = np.append(j[:-1], j[-2])  # direction of bone i: from a[i] to b[i] along the chain
        b = np.append(j[1:], j[-1])
        heads.append(chain[j])
        froms.append(chain[a])
        tos.append(chain[b])
        names += [f"rope{c}.{i:03d}" for i in range(len(j))]
        # Skin weights of every point of the chain: between the joints around it.
        k = np.arange(len(chain))
        seg = np.minimum(k // segments, len(j) - 2)
        lo, hi = j[seg], j[seg + 1]
        frac = (k - lo) / (hi - lo)
        weights_of.append((chain, base + seg, base + seg + 1, frac))
        base += len(j)
    head_ids, from_ids, to_ids = (np.concatenate(v) for v in (heads, froms, tos))
    p = world[:, head_ids]  # [F, B, 3]
    d = _unit(world[:, to_ids] - world[:, from_ids])
    rest_len = np.linalg.norm(world[0, to_ids] - world[0, from_ids], axis=1)

    # Armature with one bone per joint at the first frame's state.
    armature = bpy.data.armatures.new(f"{obj.name} Rig")
    rig = bpy.data.objects.new(f"{obj.name} Rig", armature)
    collection = obj.users_collection[0] if obj.users_collection else scene.collection
    collection.objects.link(rig)
    view_layer = bpy.context.view_layer
    active = view_layer.objects.active
    view_layer.objects.active = rig
    bpy.ops.object.mode_set(mode="EDIT")
    try:
        edit = armature.edit_bones
        for name in names:  # bones have no bulk constructor; setup only, not per frame
            edit.new(name)
        tail = p[0] + d[0] * np.maximum(rest_len, MIN_BONE_LENGTH)[:, None]
        edit.foreach_set("head", p[0].astype(np.float32).ravel())
        edit.foreach_set("tail", tail.astype(np.float32).ravel())
    finally:
        bpy.ops.object.mode_set(mode="OBJECT")
        view_layer.objects.active = active
    order = [bone.name for bone in armature.bones]
    position = {name: i for i, name in enumerate(order)}
    perm = np.array([position[name] for name in names])
    flat = np.empty(16 * len(order), dtype=np.float32)
    armature.bones.foreach_get("matrix_local", flat)
    # foreach_get gives Blender's column-major 4x4 matrices: transpose to row-major.
    matrices = flat.reshape(-1, 4, 4).transpose(0, 2, 1)[perm].astype(np.float64)
    rot, head_rest = matrices[:, :3, :3], matrices[:, :3, 3]

    # Pose (bones without parent): head = R_rest loc + h_rest, Y axis = R_rest q(y).
    loc = np.einsum("bij,fbi->fbj", rot, p - head_rest[None])
    direction = _unit(np.einsum("bij,fbi->fbj", rot, d))
    quat = np.empty(direction.shape[:2] + (4,))
    y = np.zeros_like(direction[0])
    y[:, 1] = 1.0
    quat[0] = _min_rotation(y, direction[0])
    for f in range(1, len(quat)):
        q = _qmul(_min_rotation(direction[f - 1], direction[f]), quat[f - 1])
        quat[f] = q / np.linalg.norm(q, axis=1, keepdims=True)

    factory = action_compat.new_action(rig, f"{obj.name} XPBD Bake")
    frames = record.frames()
    for i, name in enumerate(names):
        for c in range(3):
            fcurve = factory.new(f'pose.bones["{name}"].location', c)
            action_compat.write_keys(fcurve, frames, loc[:, i, c])
        for c in range(4):
            fcurve = factory.new(f'pose.bones["{name}"].rotation_quaternion', c)
            action_compat.write_keys(fcurve, frames, quat[:, i, c])

    skin = _skin(obj, rig, names, weights_of, world[0], record.first, scene)
    settings = obj.xpbd.bake
    settings.action = factory.action
    settings.rig = rig
    settings.skin = skin
    settings.hid_viewport, settings.hid_render = obj.hide_viewport, obj.hide_render
    obj.hide_viewport = True
    obj.hide_render = True


def _skin(obj: Any, rig: Any, names: list[str], weights_of: list, rest_world: np.ndarray,
          first: int, scene: Any) -> Any:
    """The rope as a mesh at frame ``first``, in world space, skinned to ``rig``."""
    import bpy

    scene.frame_set(first)  # the object is still left alone by the handler (BAKING)
    depsgraph = bpy.context.evaluated_depsgraph_get()
    evaluated = obj.evaluated_get(depsgraph)
    mesh = bpy.data.meshes.new_from_object(evaluated, preserve_all_data_layers=False,
                                           depsgraph=depsgraph)
    mesh.name = f"{obj.name} Skin"
    mesh.transform(evaluated.matrix_world)
    if "xpbd_rest" in mesh.attributes:  # the rope's stored rest shape means nothing here
        mesh.attributes.remove(mesh.attributes["xpbd_rest"])
    for prop in ("xpbd_rest_signature",):
        if prop in mesh:
            del mesh[prop]
    skin = bpy.data.objects.new(f"{obj.name} Skin", mesh)
    (rig.users_collection[0]).objects.link(skin)
    skin.parent = rig
    modifier = skin.modifiers.new("XPBD Rig", "ARMATURE")
    modifier.object = rig

    point_ids = np.concatenate([w[0] for w in weights_of])
    lower = np.concatenate([w[1] for w in weights_of])
    upper = np.concatenate([w[2] for w in weights_of])
    frac = np.concatenate([w[3] for w in weights_of])
    count = len(mesh.vertices)
    co = np.empty(3 * count, dtype=np.float32)
    mesh.attributes["position"].data.foreach_get("vector", co)
    nearest = _nearest(co.reshape(-1, 3).astype(np.float64), rest_world[point_ids])
    bone = np.concatenate([lower[nearest], upper[nearest]])
    weight = np.concatenate([1.0 - frac[nearest], frac[nearest]])
    vertex = np.concatenate([np.arange(count), np.arange(count)])
    keep = weight > 1e-6
    bone, weight, vertex = bone[keep], weight[keep], vertex[keep]
    groups = [skin.vertex_groups.new(name=name) for name in names]
    # vertex_groups have no bulk setter: one add() per (bone, weight) pair of values.
    code = bone * 1_000_003 + np.round(weight * 1e6).astype(np.int64)
    order = np.argsort(code, kind="stable")
    starts = np.flatnonzero(np.diff(code[order], prepend=-1))
    for s, e in zip(starts, np.append(starts[1:], len(order)), strict=True):
        ids = order[s:e]
        groups[int(bone[ids[0]])].add(vertex[ids].tolist(), float(weight[ids[0]]), "REPLACE")
    return skin


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
