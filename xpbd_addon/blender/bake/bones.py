"""Bake to Bones: bone chains that follow the ropes, in a rig of their own or in the
character's armature, and a mesh of the rope skinned to them.

The result is what game engines import: glTF/FBX export it as a skinned, animated mesh.

- Chains: every spline of a curve with two or more points; for a mesh, every run of vertices
  joined by edges (i, i+1) (how Add Rope, Convert to Mesh and the rope builders number them;
  other topologies are refused with a message).
- Bones: one per joint, a joint every ``segments`` segments along a chain plus its last
  point, named ``<rope>.<chain>.<joint>`` (``rope.0.000``, unique per rope object). A bone's
  head sits on its joint and it points at the next joint (the last one continues the last
  segment). Each chain is a parented chain (not connected): its first bone's parent is
  ``bake.bone_parent`` in ``bake.bone_armature`` (or none in a rig of its own), every other
  bone's parent is the bone before it. Every bone is keyed with location and rotation
  (quaternion) relative to its parent on every frame, so each joint is where the simulation
  put it (no error builds up along the chain: locations are keyed too) and no bone needs
  scale.
- Rolls: the rest frames are carried along each chain by the smallest rotation from one
  bone's direction to the next (starting from the parent bone's frame), and over time from
  one frame to the next, so bones neither twist along a chain nor flip where a rope swings
  past its rest direction (``core.bone_frames``). A rod's bones instead take the rod's
  material frame at their head (X along its normal): they carry its modelled roll and its
  twist.
- Into a character's armature (``bake.bone_armature``): the rope's bones are added to it, the
  keys go into the Action it plays (a new one if it has none), so an exporter writes one
  skeleton and one clip; the chain's rest hangs from the parent bone's rest as it hung from
  the posed bone on the first baked frame, and the root's keys are relative to the parent
  bone, so the rope follows the hand when the character's animation is changed afterwards.
- Skin: a mesh copy of the rope as it renders at the first baked frame (a curve's bevel
  included), or a tube (``skin``) where the rope has no faces (an edge mesh, a curve without
  bevel), parented to the armature with an Armature modifier. Each vertex follows the rope
  point it belongs to (a tube's rings) or the nearest one, blended linearly between the two
  joint bones around that point.
- The rope object is hidden while baked (its visibility is recorded and restored by Free
  Bake).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...core import bone_frames as bf
from ..read import geometry
from ..read.geometry import RopeError
from . import action_compat, skin

MIN_BONE_LENGTH = 1e-4
"""Shortest bone [m]: Blender deletes zero-length bones when leaving Edit Mode."""

NEAREST_CHUNK = 4_000_000
"""Vertex x point distances computed at once when skinning (memory bound, 32 MB)."""

PREFIX_LENGTH = 48
"""Characters of the rope's name used in its bone names (Blender allows 63 per name)."""

BONE_TILT = 0.01
"""[rad] Every bone's rest and pose frame is turned this far about its own X axis from the
joint-to-joint direction (0.57 degrees: its tail 0.25 mm off the next joint on a 2.5 cm
bone). Blender's FBX importer connects a child bone whose head lies on its parent's Y axis
(to 1e-6 of the coordinates) to the parent's tail and then drops the child's keyed location:
the rope's stretch, 3.9 mm at the end of a 48-bone rope. Tilted, no child head
lies on that axis for a rope within 100 m of its armature's origin; the joints are where
they were, since heads are keyed, not derived from the tilt."""


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


def bone_prefix(obj: Any) -> str:
    """The first part of the names of ``obj``'s bones (its name, shortened)."""
    return obj.name[:PREFIX_LENGTH]


def check(obj: Any) -> None:
    """RopeError (naming the object and setting) if ``obj`` cannot be baked to bones."""
    chains(obj, geometry.build_layout(obj))
    settings = obj.xpbd.bake
    arm, parent = settings.bone_armature, settings.bone_parent
    if arm is None:
        if parent:
            raise RopeError(f"'{obj.name}': Parent Bone '{parent}' needs an Armature "
                            "(bake.bone_armature) to be in")
        return
    if arm.type != "ARMATURE":
        raise RopeError(f"'{obj.name}': bake.bone_armature '{arm.name}' is not an armature")
    if parent and parent not in arm.data.bones:
        raise RopeError(f"'{obj.name}': armature '{arm.name}' has no bone '{parent}' "
                        "(bake.bone_parent)")
    if arm.mode != "OBJECT":
        raise RopeError(f"'{obj.name}': armature '{arm.name}' is in {arm.mode.title()} "
                        "Mode: leave it first")
    if not arm.visible_get() or arm.hide_select:
        raise RopeError(f"'{obj.name}': armature '{arm.name}' is hidden or unselectable; "
                        "bones are added in its Edit Mode, which needs it visible")
    prefix = bone_prefix(obj) + "."
    taken = [b.name for b in arm.data.bones if b.name.startswith(prefix)]
    if taken:
        raise RopeError(f"'{obj.name}': armature '{arm.name}' already has bones named "
                        f"'{taken[0]}'; rename the rope or remove them")


def record_targets(record: Any, depsgraph: Any) -> None:
    """Keep this frame's world matrix of the target armature and its parent bone's pose
    (armature space) in ``record`` (bakes into a character's armature only)."""
    settings = record.obj.xpbd.bake
    arm = settings.bone_armature
    if arm is None:
        return
    evaluated = arm.evaluated_get(depsgraph)
    record.rig_world.append(np.array(evaluated.matrix_world, dtype=np.float64))
    if settings.bone_parent:
        pose = evaluated.pose.bones[settings.bone_parent].matrix
        record.parent_pose.append(np.array(pose, dtype=np.float64))


def _joints(chain: np.ndarray, segments: int) -> np.ndarray:
    idx = np.arange(0, len(chain), segments)
    if idx[-1] != len(chain) - 1:
        idx = np.append(idx, len(chain) - 1)
    return idx


def _nearest(points: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    """Index into ``candidates`` [P, 3] of the nearest one to each of ``points`` [V, 3]."""
    out = np.empty(len(points), dtype=np.int64)
    step = max(1, NEAREST_CHUNK // max(len(candidates), 1))
    for i in range(0, len(points), step):
        d = points[i:i + step, None, :] - candidates[None, :, :]
        out[i:i + step] = np.argmin(np.einsum("vpk,vpk->vp", d, d), axis=1)
    return out


class _Plan:
    """The bones of one recorded object: names, parents, rest and posed matrices, weights."""

    def __init__(self, record: Any, segments: int) -> None:
        obj, rope = record.obj, record.rope
        settings = obj.xpbd.bake
        self.record = record
        self.prefix = bone_prefix(obj)
        self.armature = settings.bone_armature
        """The character's armature object, or None: a rig of its own"""
        self.parent = settings.bone_parent if self.armature is not None else ""
        self.chains = chains(obj, rope.layout)
        heads, froms, tos, starts, weights = [], [], [], [], []
        self.names: list[str] = []
        base = 0
        for c, chain in enumerate(self.chains):
            j = _joints(chain, segments)
            a = np.append(j[:-1], j[-2])  # bone i points from a[i] to b[i] along the chain
            b = np.append(j[1:], j[-1])
            heads.append(chain[j])
            froms.append(chain[a])
            tos.append(chain[b])
            starts.append(base)
            self.names += [f"{self.prefix}.{c}.{i:03d}" for i in range(len(j))]
            # Skin weights of every point of the chain: between the joints around it.
            k = np.arange(len(chain))
            seg = np.minimum(k // segments, len(j) - 2)
            lo, hi = j[seg], j[seg + 1]
            weights.append((chain, base + seg, base + seg + 1, (k - lo) / (hi - lo)))
            base += len(j)
        self.starts = np.array(starts)
        """Index of every chain's first bone"""
        self.weights = [np.concatenate(w) for w in zip(*weights, strict=True)]
        """Per chain point: particle id, lower bone, upper bone, weight of the upper bone"""
        world = np.stack(record.world)  # [F, N, 3]
        head_ids, from_ids, to_ids = (np.concatenate(v) for v in (heads, froms, tos))
        self.world_first = world[0]
        p = world[:, head_ids]
        d = bf.unit(world[:, to_ids] - world[:, from_ids])
        count = len(world)
        self.rig_world = (np.stack(record.rig_world) if self.armature is not None
                          else np.broadcast_to(np.eye(4), (count, 4, 4)))
        """World matrix of the armature object on every frame, [F, 4, 4]"""
        self.parent_pose = (bf.orthonormal(np.stack(record.parent_pose)) if self.parent
                            else None)
        """Pose of the parent bone (armature space, scale dropped) [F, 4, 4], or None"""
        # Frames in world space: chains start from their parent bone's frame.
        if self.parent_pose is not None:
            root = (self.rig_world[0] @ self.parent_pose[0])[:3, :3]
            root = root / np.linalg.norm(root, axis=0, keepdims=True)
        else:
            root = np.eye(3)
        self.roots = np.repeat(root[None], len(starts), 0)
        """The frame each chain's first bone is turned from [C, 3, 3]"""
        self.p, self.d = p, d
        """Joint positions [m] and unit bone directions, world, [F, B, 3]"""
        self.normals = (np.stack(record.normals)[:, head_ids] if record.normals else None)
        """A rod's material normal at every bone's head, world, [F, B, 3], or None (a plain
        rope): a rod's bones take their roll from it"""
        scale = float(np.linalg.norm(self.rig_world[0][:3, 0]))
        length = np.linalg.norm(world[0, to_ids] - world[0, from_ids], axis=1) / scale
        self.length = np.maximum(length, MIN_BONE_LENGTH)
        """Rest bone lengths [m] (armature space), shape [B]"""
        self.rest_offset = np.eye(4)
        """Armature space at the first frame -> rest: the parent bone's rest @ inv(its first
        pose) (a chain hangs from the parent's rest as from the posed parent)"""
        if self.parent_pose is not None:
            parent_rest = np.array(self.armature.data.bones[self.parent].matrix_local)
            self.rest_offset = bf.orthonormal(parent_rest) @ bf.rigid_inverse(
                self.parent_pose[0])
        self.posed = np.empty(0)
        """Target bone matrices, armature space, [F, B, 4, 4] (set by ``_orient``)"""
        self.rest = np.empty(0)
        """Rest bone matrices, armature space, [B, 4, 4] (set by ``_orient``)"""

    def orient(self, rotation: np.ndarray) -> None:
        """Set the posed and rest matrices from the bones' world frames [F, B, 3, 3] (tilted
        by ``BONE_TILT`` about their X axes)."""
        c, s = np.cos(BONE_TILT), np.sin(BONE_TILT)
        tilt = np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])
        self.posed = bf.compose(rotation @ tilt, self.p)
        if self.armature is not None:
            # Armature space (the object's scale dropped: bones carry no scale).
            to_arm = np.linalg.inv(self.rig_world)[:, None]
            self.posed = bf.orthonormal(to_arm @ self.posed)
        self.rest = self.rest_offset[None] @ self.posed[0]


def _orient(plans: list[_Plan]) -> None:
    """The world frames of every plan's bones on every frame, for all plans of one frame
    count at once (the chains of all ropes advance together: a few numpy calls per chain
    link and per frame, however many ropes), then ``_Plan.orient``."""
    by_count: dict[int, list[_Plan]] = {}
    for plan in plans:
        by_count.setdefault(len(plan.d), []).append(plan)
    for group in by_count.values():
        sizes = np.cumsum([0] + [plan.d.shape[1] for plan in group])
        d = np.concatenate([plan.d for plan in group], axis=1)
        starts = np.concatenate([plan.starts + size for plan, size in
                                 zip(group, sizes, strict=False)])
        roots = np.concatenate([plan.roots for plan in group])
        first = bf.chain_rest_frames(d[0], starts, roots)
        rotation = bf.transport(first, d)
        for plan, a, b in zip(group, sizes[:-1], sizes[1:], strict=True):
            # A rod's bones roll with its material frame (X along its normal), so its twist
            # and its modelled roll are baked; a rope has none and its bones are transported.
            plan.orient(rotation[:, a:b] if plan.normals is None
                        else bf.frames_from_axes(plan.normals, plan.d))


def write_all(records: list, segments: int, scene: Any) -> None:
    """Bake to Bones for every recorded object: skins first (one frame change for all, at
    the first frame, before any bone exists), then the bones of every armature in one Edit
    Mode session (each mode switch costs a view-layer update that grows with the scene), then
    the keys."""
    import bpy

    plans = [_Plan(record, segments) for record in records]
    _orient(plans)
    for plan in plans:
        plan.record.obj.xpbd.bake.kind = "BONES"
    meshes: dict[str, tuple[Any, np.ndarray | None]] = {}
    tube_frames = _tube_frames(plans)
    for first in sorted({r.first for r in records}):
        scene.frame_set(first)  # the objects are still left alone by the handler (BAKING)
        depsgraph = bpy.context.evaluated_depsgraph_get()
        for plan, frames in zip(plans, tube_frames, strict=True):
            if plan.record.first == first:
                meshes[plan.record.obj.name] = _skin_mesh(plan, depsgraph, frames)
    rigs: list[Any] = []
    for plan in plans:
        obj = plan.record.obj
        settings = obj.xpbd.bake
        if plan.armature is None:
            rig: Any = bpy.data.objects.new(f"{obj.name} Rig",
                                            bpy.data.armatures.new(f"{obj.name} Rig"))
            collection = obj.users_collection[0] if obj.users_collection else scene.collection
            collection.objects.link(rig)
            settings.rig_owned = True
        else:
            rig = plan.armature
            settings.rig_owned = False
        settings.rig = rig
        settings.bone_prefix = plan.prefix
        rigs.append(rig)
    with edit_mode(list(dict.fromkeys(rigs))):
        for plan, rig in zip(plans, rigs, strict=True):
            _add_bones(plan, rig.data.edit_bones)
    for plan, rig in zip(plans, rigs, strict=True):
        _key(plan, rig)
        _skin(plan, rig, *meshes[plan.record.obj.name])


class edit_mode:  # noqa: N801 - a context manager used like a function
    """Edit Mode on ``armatures`` (all at once), then Object Mode, the selection and the
    active object as they were."""

    def __init__(self, armatures: list) -> None:
        self.armatures = armatures

    def __enter__(self) -> None:
        import bpy

        context: Any = bpy.context
        self.view_layer: Any = context.view_layer
        self.active = self.view_layer.objects.active
        self.selected = [o for o in self.view_layer.objects if o.select_get()]
        for o in self.selected:
            o.select_set(False)
        for arm in self.armatures:
            arm.select_set(True)
        self.view_layer.objects.active = self.armatures[0]
        bpy.ops.object.mode_set(mode="EDIT")  # every selected armature at once

    def __exit__(self, *exc: object) -> None:
        import bpy

        bpy.ops.object.mode_set(mode="OBJECT")
        for arm in self.armatures:
            arm.select_set(False)
        for o in self.selected:
            o.select_set(True)
        self.view_layer.objects.active = self.active


def _add_bones(plan: _Plan, edit: Any) -> None:
    """The plan's bones in Edit Mode: rest matrices (head, direction, roll), lengths,
    parents. Bones have no bulk constructor; this is setup, not per frame."""
    from mathutils import Matrix

    parent = edit[plan.parent] if plan.parent else None
    starts = set(plan.starts.tolist())
    previous = None
    for i, name in enumerate(plan.names):
        bone = edit.new(name)
        bone.head = (0.0, 0.0, 0.0)
        bone.tail = (0.0, float(plan.length[i]), 0.0)
        bone.matrix = Matrix(plan.rest[i].tolist())  # keeps the length, sets head and roll
        bone.parent = parent if i in starts else previous
        bone.use_connect = False
        previous = bone


def _key(plan: _Plan, rig: Any) -> None:
    """Key every bone's location and rotation (relative to its parent) on every frame."""
    obj, armature = plan.record.obj, rig.data
    bones = armature.bones
    rest = np.array([np.array(bones[name].matrix_local) for name in plan.names])
    # Blender's own (float32) rest matrices, so the keys reproduce the joints with them.
    parent_rest = np.empty_like(rest)
    parent_pose = np.empty_like(plan.posed)
    parent_rest[1:], parent_pose[:, 1:] = rest[:-1], plan.posed[:, :-1]
    for s in plan.starts:
        if plan.parent_pose is not None:
            parent_rest[s] = bf.orthonormal(np.array(bones[plan.parent].matrix_local))
            parent_pose[:, s] = plan.parent_pose
        else:
            parent_rest[s] = np.eye(4)
            parent_pose[:, s] = np.eye(4)
    basis = bf.local_pose(bf.orthonormal(rest), plan.posed, parent_rest, parent_pose)
    loc = basis[..., :3, 3]
    quat = bf.to_quaternions(basis[..., :3, :3])
    settings = obj.xpbd.bake
    if settings.rig_owned:
        factory, created = action_compat.new_action(rig, f"{obj.name} XPBD Bake"), True
    else:
        factory, created = action_compat.ensure_action(rig, f"{rig.name} Action")
    settings.action = factory.action
    settings.action_owned = created
    frames = plan.record.frames()
    for i, name in enumerate(plan.names):
        pose_bone = rig.pose.bones[name]
        pose_bone.rotation_mode = "QUATERNION"
        for c in range(3):
            fcurve = factory.new(f'pose.bones["{name}"].location', c)
            action_compat.write_keys(fcurve, frames, loc[:, i, c])
        for c in range(4):
            fcurve = factory.new(f'pose.bones["{name}"].rotation_quaternion', c)
            action_compat.write_keys(fcurve, frames, quat[:, i, c])


def _tube_frames(plans: list[_Plan]) -> list[np.ndarray]:
    """Every plan's chain point frames at its first frame [P, 3, 3], all ropes in one call."""
    sizes = np.cumsum([0] + [len(plan.world_first) for plan in plans])
    chains = [c + size for plan, size in zip(plans, sizes, strict=False) for c in plan.chains]
    frames = skin.point_frames(np.concatenate([plan.world_first for plan in plans]), chains)
    counts = np.cumsum([0] + [sum(len(c) for c in plan.chains) for plan in plans])
    return [frames[a:b] for a, b in zip(counts[:-1], counts[1:], strict=True)]


def _skin_mesh(plan: _Plan, depsgraph: Any, frames: np.ndarray) -> tuple[Any, np.ndarray | None]:
    """The skin's mesh in the armature's rest space, and the rope point of every vertex
    (a tube's rings, whose point ``frames`` are given) or None (nearest point)."""
    obj = plan.record.obj
    mesh = skin.render_mesh(obj, depsgraph)
    points = None
    if mesh is None:
        mesh, points = skin.tube_mesh(f"{obj.name} Skin", plan.world_first, plan.chains,
                                      skin.tube_radius(obj), frames)
    mesh.transform(plan.rest_offset @ np.linalg.inv(plan.rig_world[0]))
    return mesh, points


def _skin(plan: _Plan, rig: Any, mesh: Any, points: np.ndarray | None) -> None:
    """Parent ``mesh`` to ``rig`` as a skinned object; hide the rope."""
    import bpy

    obj = plan.record.obj
    skinned = bpy.data.objects.new(f"{obj.name} Skin", mesh)
    context: Any = bpy.context
    collection = obj.users_collection[0] if obj.users_collection else context.scene.collection
    collection.objects.link(skinned)
    settings = obj.xpbd.bake
    settings.skin = skinned
    skinned.parent = rig
    modifier: Any = skinned.modifiers.new("XPBD Rig", "ARMATURE")
    modifier.object = rig
    point_ids, lower, upper, frac = plan.weights
    count = len(mesh.vertices)
    if points is None:
        co = np.empty(3 * count, dtype=np.float32)
        mesh.attributes["position"].data.foreach_get("vector", co)
        rest_points = (plan.rest_offset @ np.linalg.inv(plan.rig_world[0]) @ np.c_[
            plan.world_first[point_ids], np.ones(len(point_ids))].T).T[:, :3]
        nearest = _nearest(co.reshape(-1, 3).astype(np.float64), rest_points)
    else:
        where = np.full(int(point_ids.max()) + 1, -1)
        where[point_ids] = np.arange(len(point_ids))
        nearest = where[points]
    bone = np.concatenate([lower[nearest], upper[nearest]])
    weight = np.concatenate([1.0 - frac[nearest], frac[nearest]])
    vertex = np.concatenate([np.arange(count), np.arange(count)])
    keep = weight > 1e-6
    bone, weight, vertex = bone[keep], weight[keep], vertex[keep]
    groups = [skinned.vertex_groups.new(name=name) for name in plan.names]
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
    """Remove what a bones bake added: the skin, and the rig with its Action (a rig of its
    own), or the rope's bones and their F-Curves (in a character's armature; its Action only
    if the bake created it and nothing else is left in it); show the rope again."""
    import bpy

    settings = obj.xpbd.bake
    rig, skinned = settings.rig, settings.skin
    action = settings.action
    if skinned is not None:
        mesh = skinned.data
        bpy.data.objects.remove(skinned)
        if mesh is not None and mesh.users == 0:
            bpy.data.meshes.remove(mesh)
    if rig is not None and settings.rig_owned:
        action_compat.remove_action(rig, action)
        armature = rig.data
        bpy.data.objects.remove(rig)
        if armature is not None and armature.users == 0:
            bpy.data.armatures.remove(armature)
    elif rig is not None:
        prefix = bpy.utils.escape_identifier(settings.bone_prefix + ".")
        action_compat.remove_fcurves(action, f'pose.bones["{prefix}')
        if settings.action_owned and action_compat.fcurve_count(action) == 0:
            action_compat.remove_action(rig, action)
        names = [b.name for b in rig.data.bones if b.name.startswith(settings.bone_prefix + ".")]
        if names:
            with edit_mode([rig]):
                edit = rig.data.edit_bones
                for name in names:
                    edit.remove(edit[name])
    elif action is not None and action.users == 0:
        bpy.data.actions.remove(action)
    settings.rig = None
    settings.skin = None
    obj.hide_viewport = settings.hid_viewport
    obj.hide_render = settings.hid_render
