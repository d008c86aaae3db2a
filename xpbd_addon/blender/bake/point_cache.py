"""Bake to a point cache: an Alembic (.abc) or USD (.usd/.usdc/.usda) file per bake, played by
Blender's Mesh Sequence Cache modifier, so big bakes keep the .blend small and play without the
add-on (and in any tool that reads the file).

What is written, per rope, as one object "<rope> Cache" (world space, at the origin; the rope
object is hidden while baked, as with Bake to Bones):

- a mesh with faces: its own vertices and faces, at the simulated positions (world [m]);
- an edge mesh: its points (loose vertices, in rope order), then a tube (``skin``) around
  every chain, so the rope renders and exports as a visible mesh;
- a curve: a Curves object (Blender's hair curves type), one curve per spline through the
  simulated points, with the curve's radius (bevel depth times each point's radius [m]):
  it renders as a round strand, and the file holds the points only (Alembic curves, USD
  BasisCurves), a ninth of a tube's, so that a thousand ropes over a thousand frames write
  in seconds. Its materials are the curve's. A curve rod's twist goes along as the Curves'
  ``tilt`` (world space, ``curve_tilt.world_tilt``), which USD writes (``primvars:tilt``)
  and Alembic does not.

Every rope of a bake goes into one file: ``bake.cache_path`` of the first baked rope (default
``//xpbd_cache/<rope>.abc`` next to the .blend). The file is written by Blender's own Alembic or
USD exporter from the recorded frames: while it steps through the frames, a temporary frame
handler puts each frame's recorded positions into the cache objects (one bulk write per object
and frame, no shape keys or keyframes). Custom properties and other attributes are not
exported.
"""

from __future__ import annotations

import os
import re
from typing import Any

import numpy as np

from ...core import bone_frames
from ..read import geometry
from ..read.geometry import RopeError
from ..write import tears as tear
from . import action_compat, cache_tears, skin
from . import bones as bake_bones

EXTENSIONS = {".abc": "ALEMBIC", ".usd": "USD", ".usdc": "USD", ".usda": "USD"}
"""File name endings the cache bake writes, and their format."""


def cache_path(obj: Any) -> str:
    """Absolute path of the cache file a bake of ``obj`` writes; RopeError if it cannot be
    made (an unsaved file with a relative path, an unknown extension)."""
    import bpy

    settings = obj.xpbd.bake
    path = settings.cache_path or f"//xpbd_cache/{bpy.path.clean_name(obj.name)}.abc"
    if path.startswith("//") and not bpy.data.filepath:
        raise RopeError(f"'{obj.name}': the Cache File '{path}' (bake.cache_path) is relative "
                        "to the .blend, which is not saved: save it first or give an "
                        "absolute path")
    path = bpy.path.abspath(path)
    if os.path.splitext(path)[1].lower() not in EXTENSIONS:
        raise RopeError(f"'{obj.name}': the Cache File '{path}' (bake.cache_path) must end in "
                        f"{', '.join(EXTENSIONS)}")
    return path


def check(objects: list) -> None:
    """RopeError if ``objects`` cannot be baked to a cache (the file is the first one's):
    made before anything is simulated, so a refusal costs nothing."""
    path = cache_path(objects[0])
    usd = EXTENSIONS[os.path.splitext(path)[1].lower()] == "USD"
    for obj in objects:
        if obj.type == "MESH" and not len(obj.data.polygons):  # a tube needs chains
            bake_bones.chains(obj, geometry.build_layout(obj))
        if usd and obj.type == "CURVE":
            _check_usd_curve(obj)


def _check_usd_curve(obj: Any) -> None:
    """RopeError if the curves of ``obj``'s cache would mix cyclic and open ones, which
    Blender's USD exporter cannot write (a BasisCurves prim has one wrap: it warns "Cannot
    export mixed cyclic and non-cyclic curves" and writes no points). A tear opens a cyclic
    spline (``cache_tears.curve_pieces``), so a tearing rope with a cyclic spline among
    others would mix them too."""
    loops = [bool(s.use_cyclic_u) for s in obj.data.splines]
    tears = obj.xpbd.tear_force > 0.0 and len(loops) > 1
    if any(loops) and (not all(loops) or tears):
        why = ("cyclic and open splines" if not all(loops)
               else "cyclic splines that a tear (Tear Force) opens among the others")
        raise RopeError(f"'{obj.name}': a USD cache cannot hold {why} in one curve (USD "
                        "curves are all cyclic or all open): bake it to Alembic (.abc), or "
                        "make its splines all cyclic or all open")


def abc_name(name: str) -> str:
    """A name as Blender's Alembic exporter writes it (spaces, dots and colons become _)."""
    return re.sub(r"[ .:]", "_", name)


ANIMATED_KEY = "xpbd_cache_export"
"""Custom property keyed on a Curves cache object's data during the export only, so that the
exporters see it as animated (removed again; custom properties are not exported)."""


class _Cache:
    """One rope's cache object and its recorded points."""

    def __init__(self, record: Any) -> None:
        obj, rope = record.obj, record.rope
        self.record = record
        self.name = f"{obj.name} Cache"
        self.count = len(record.world[0])
        """Rope points [count]"""
        self.curves = obj.type == "CURVE"
        """A curve rope: cached as curves (a Curves object), not as a mesh"""
        self.chains: list[np.ndarray] | None = None
        """Chains of an edge-mesh rope, around which a tube is made; None: its faces, or
        curves"""
        if obj.type == "MESH" and not len(obj.data.polygons):
            self.chains = bake_bones.chains(obj, rope.layout)
        self.object: Any = None
        self.tear_frames: np.ndarray | None = record.tear_frames
        """The frame each segment tore at (``tear.NEVER`` if not), or None: no tear"""
        self.shown: bytes | None = None
        """The torn segments of the cache object's current data (``cut_after`` as bytes)"""
        self.order: np.ndarray | None = None
        """Rope point ids in the order of the curves' points (a torn cyclic spline opens
        at its tear); None: rope order"""

    def make_object(self, positions: np.ndarray, frame: int) -> None:
        """The cache object, its mesh or curves at ``positions`` [V, 3] [m] (world), torn as
        at ``frame`` (its first recorded frame)."""
        import bpy

        obj = self.record.obj
        self.object = bpy.data.objects.new(self.name, self._data(self._cut(frame)))
        self.set_positions(positions, 0)
        collection = obj.users_collection[0] if obj.users_collection else None
        if collection is None:
            context: Any = bpy.context
            collection = context.scene.collection
        collection.objects.link(self.object)

    def _cut(self, frame: int) -> np.ndarray:
        """Per rope point: whether its link to the next point is torn at ``frame``."""
        torn = (np.zeros(len(self.record.rope.layout.edges), dtype=bool)
                if self.tear_frames is None else self.tear_frames <= frame)
        return cache_tears.cut_after(self.record.rope.layout.edges, torn, self.count)

    def _data(self, cut: np.ndarray) -> Any:
        """New mesh or curves data of the rope torn where ``cut`` says (points at rest)."""
        import bpy

        obj = self.record.obj
        self.shown = cut.tobytes()
        data: Any
        if self.curves:
            splines = [(start, n) for start, n, _b in self.record.rope.layout.splines]
            loops = np.zeros(len(obj.data.splines), dtype=bool)
            obj.data.splines.foreach_get("use_cyclic_u", loops)
            order, sizes, cyclic = cache_tears.curve_pieces(splines, loops, cut)
            self.order = None if np.array_equal(order, np.arange(self.count)) else order
            data = bpy.data.hair_curves.new(self.name)
            data.add_curves(sizes)
            radius = (data.attributes.get("radius")
                      or data.attributes.new("radius", "FLOAT", "POINT"))
            radii = skin.tube_radius(obj) * tear.modelled_radii(obj.data,
                                                                 self.record.rope.layout)
            radius.data.foreach_set("value", radii[order].astype(np.float32))
            if any(cyclic):
                data.attributes.new("cyclic", "BOOLEAN", "CURVE").data.foreach_set(
                    "value", np.array(cyclic, dtype=bool))
            if self.record.tilt:  # a rod's twist (USD writes it as primvars:tilt)
                data.attributes.get("tilt") or data.attributes.new("tilt", "FLOAT", "POINT")
            for material in obj.data.materials:
                data.materials.append(material)
        elif self.chains is None:
            data = obj.data.copy()  # the simulation refuses meshes with shape keys
            data.name = self.name
            skin.strip_internal(data)
        else:
            quads, ring_point = skin.tube_faces(self.chains)
            kept = cache_tears.tube_faces_kept(self.chains, cut, skin.TUBE_SIDES)
            rest = np.zeros((self.count + len(ring_point), 3), dtype=np.float32)
            data = skin.mesh_from_arrays(self.name, rest, quads[kept] + self.count)
        return data

    def tear(self, frame: int) -> None:
        """Give the cache object the topology of ``frame`` if its tears differ from the
        current data's (new data under the same name: the exporters' object path)."""
        if self.tear_frames is None or self.chains is None and not self.curves:
            return  # no tear, or a mesh with faces (keeps them: docs/bake.md)
        cut = self._cut(frame)
        if cut.tobytes() == self.shown:
            return
        import bpy

        old = self.object.data
        data = self._data(cut)
        # what makes the exporters see the data as animated (``write_all``) goes along
        if old.animation_data is not None and old.animation_data.action is not None:
            anim = data.animation_data_create()
            anim.action = old.animation_data.action
            slot = getattr(old.animation_data, "action_slot", None)
            if slot is not None:
                anim.action_slot = slot
        if ANIMATED_KEY in old:
            data[ANIMATED_KEY] = old[ANIMATED_KEY]
        self.object.data = data
        (bpy.data.hair_curves if self.curves else bpy.data.meshes).remove(old)
        data.name = self.name

    def set_positions(self, positions: np.ndarray, k: int) -> None:
        """The cache object's points (rope order, then tube rings) at ``positions`` [m], and
        a curve rod's tilt [rad] of the ``k``-th recorded frame."""
        data = self.object.data
        if self.order is not None:
            positions = positions[self.order]
        data.attributes["position"].data.foreach_set("vector", positions.ravel())
        if self.curves and self.record.tilt:
            tilt = np.asarray(self.record.tilt[k], dtype=np.float32)
            data.attributes["tilt"].data.foreach_set(
                "value", tilt if self.order is None else tilt[self.order])
        if self.curves:
            data.update_tag()
        else:
            data.update()


class _Batch:
    """The caches of one frame range: their points and tube rings made together, per frame
    (all frames' rings at once would take 9x the points' memory), in a few numpy calls
    whatever the number of ropes."""

    def __init__(self, caches: list[_Cache]) -> None:
        self.caches = caches
        self.first, self.last = caches[0].record.first, caches[0].record.last
        self.starts = np.cumsum([0] + [c.count for c in caches])
        ids, before, after, radius, chains, self.ring_starts = [], [], [], [], [], [0]
        for cache, start in zip(caches, self.starts, strict=False):
            if cache.chains is None:
                self.ring_starts.append(self.ring_starts[-1])
                continue
            b, a = skin.neighbours(cache.chains)
            ids.append(np.concatenate(cache.chains) + start)
            before.append(b + start)
            after.append(a + start)
            radius.append(np.full(len(b), skin.tube_radius(cache.record.obj)))
            chains += [chain + start for chain in cache.chains]
            self.ring_starts.append(self.ring_starts[-1] + len(b) * skin.TUBE_SIDES)
        self.tube = bool(ids)
        if self.tube:
            self.ids, self.before, self.after = (np.concatenate(v) for v in (ids, before,
                                                                            after))
            self.radius = np.concatenate(radius).astype(np.float32)
            # Ring frames carried over time as bones are (no flips where a rope swings): the
            # only use of every frame at once, so the points of all frames are held only here.
            points = np.stack([self.points(k) for k in range(self.last - self.first + 1)])
            tangent = bone_frames.unit(points[:, self.after] - points[:, self.before])
            first_x = skin.point_frames(points[0], chains)[:, :, 0]  # all chains at once
            self.x_axis = bone_frames.transport_axes(first_x, tangent).astype(np.float32)

    def points(self, k: int) -> np.ndarray:
        """Every cache's rope points [m], world, float32 [N, 3] on the ``k``-th recorded
        frame."""
        return np.concatenate([c.record.world[k] for c in self.caches]).astype(np.float32)

    def positions(self, k: int) -> list[np.ndarray]:
        """Every cache's vertex positions [m], world, float32 [V, 3] on the ``k``-th recorded
        frame: its points, then its tube's rings."""
        points = self.points(k)
        rings = np.empty((0, 3), dtype=np.float32)
        if self.tube:
            tangent = bone_frames.unit(points[self.after] - points[self.before])
            rings = skin.tube_vertices(points[self.ids], self.x_axis[k],
                                       np.cross(self.x_axis[k], tangent), self.radius)
        out = []
        for i, cache in enumerate(self.caches):
            own = points[self.starts[i]:self.starts[i + 1]]
            if cache.chains is not None:
                own = np.concatenate([own, rings[self.ring_starts[i]:self.ring_starts[i + 1]]])
            out.append(own)
        return out

    def show(self, frame: int) -> None:
        """Put the recorded positions of ``frame`` (held outside the range) into the meshes
        and curves."""
        k = min(max(frame, self.first), self.last) - self.first
        for cache, positions in zip(self.caches, self.positions(k), strict=True):
            cache.tear(self.first + k)
            cache.set_positions(positions, k)


def write_all(records: list, scene: Any) -> str:
    """Write the cache file of ``records`` and set up the cache objects; returns its path."""
    import bpy

    path = cache_path(records[0].obj)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    caches = [_Cache(record) for record in records]
    ranges: dict[tuple[int, int], list[_Cache]] = {}
    for cache in caches:
        ranges.setdefault((cache.record.first, cache.record.last), []).append(cache)
    batches = [_Batch(group) for group in ranges.values()]
    for batch in batches:
        for cache, positions in zip(batch.caches, batch.positions(0), strict=True):
            cache.make_object(positions, batch.first)
            # Recorded at once: a failure from here on is undone by Free Bake (bake.write).
            cache.record.obj.xpbd.bake.kind = "CACHE"
            cache.record.obj.xpbd.bake.skin = cache.object

    failed: list[BaseException] = []

    def show(scene_: Any, *_args: Any) -> None:
        # Blender prints and swallows a handler's exception: keep it to raise after the export.
        try:
            for batch in batches:
                batch.show(int(scene_.frame_current))
        except Exception as exc:  # noqa: BLE001
            failed.append(exc)

    view_layer: Any = bpy.context.view_layer
    active = view_layer.objects.active
    selected = [o for o in view_layer.objects if o.select_get()]
    for o in selected:
        o.select_set(False)
    for cache in caches:
        cache.object.select_set(True)
    first = min(r.first for r in records)
    last = max(r.last for r in records)
    fmt = EXTENSIONS[os.path.splitext(path)[1].lower()]
    # The exporters write a mesh once unless it looks animated: a keyed Mesh property does
    # (removed again below); the handler above supplies the positions.
    keyed = []
    for cache in caches:
        data = cache.object.data
        factory = action_compat.new_action(data, "XPBD cache export")
        if cache.curves:  # Curves have no keyable property in every version: a custom one
            data[ANIMATED_KEY] = 0.0
            channel, value = f'["{ANIMATED_KEY}"]', 0.0
        else:
            channel, value = "remesh_voxel_size", data.remesh_voxel_size
        action_compat.write_keys(factory.new(channel), np.array([first, last]),
                                 np.full(2, value))
        keyed.append(factory.action)
    bpy.app.handlers.frame_change_pre.append(show)
    try:
        if fmt == "ALEMBIC":
            bpy.ops.wm.alembic_export(
                filepath=path, start=first, end=last, selected=True, uvs=False,
                normals=False, face_sets=False, export_custom_properties=False,
                evaluation_mode="RENDER", as_background_job=False)
        else:
            bpy.ops.wm.usd_export(
                filepath=path, selected_objects_only=True, export_animation=True,
                export_uvmaps=False, export_normals=False, export_materials=False,
                export_custom_properties=False, evaluation_mode="RENDER")
    finally:
        bpy.app.handlers.frame_change_pre.remove(show)
        for cache, action in zip(caches, keyed, strict=True):
            action_compat.remove_action(cache.object.data, action)
            if ANIMATED_KEY in cache.object.data:
                del cache.object.data[ANIMATED_KEY]
        for cache in caches:
            cache.object.select_set(False)
        for o in selected:
            o.select_set(True)
        view_layer.objects.active = active
    if failed:
        raise RopeError(f"writing the cache file failed: {failed[0]}") from failed[0]
    before = set(bpy.data.cache_files)
    bpy.ops.cachefile.open(filepath=path)
    cache_file = next(iter(set(bpy.data.cache_files) - before))
    for batch in batches:
        batch.show(batch.first)
    for cache in caches:
        modifier: Any = cache.object.modifiers.new("XPBD Cache", "MESH_SEQUENCE_CACHE")
        modifier.cache_file = cache_file
        modifier.object_path = _object_path(fmt, cache.object)
        obj = cache.record.obj
        settings = obj.xpbd.bake
        settings.cache_file = cache_file
        settings.hid_viewport, settings.hid_render = obj.hide_viewport, obj.hide_render
        obj.hide_viewport = True
        obj.hide_render = True
    # The file's object paths are known once a modifier has read it: every cache object must
    # have found its own (the names above are the exporters' rules, checked here).
    view_layer.update()
    paths = {p.path for p in cache_file.object_paths}
    for cache in caches:
        modifier = cache.object.modifiers["XPBD Cache"]
        ascii_path = _object_path(fmt, cache.object, ascii_only=True)
        if modifier.object_path not in paths and ascii_path in paths:
            modifier.object_path = ascii_path  # a USD exporter without Unicode names
    missing = [c.object.name for c in caches
               if c.object.modifiers["XPBD Cache"].object_path not in paths]
    if missing:
        raise RopeError(f"the cache file has no object for {', '.join(missing)} "
                        f"(it holds {', '.join(sorted(paths)) or 'nothing'})")
    return path


def _usd_name(name: str, ascii_only: bool = False) -> str:
    """A name as Blender's USD exporter writes a prim: characters that are not letters,
    digits or _ become _ (where it does not allow Unicode, as in 4.2: every byte of their
    UTF-8 that is not ASCII letter, digit or _), a leading digit gets a _ before it."""
    if ascii_only:
        out = "".join(chr(b) if chr(b).isascii() and (chr(b).isalnum() or chr(b) == "_")
                      else "_" for b in name.encode("utf-8"))
    else:
        out = re.sub(r"[^\w]", "_", name)
    return "_" + out if out[:1].isdigit() else out


def _object_path(fmt: str, obj: Any, ascii_only: bool = False) -> str:
    """Where the exporter put ``obj``'s mesh in the file."""
    if fmt == "ALEMBIC":
        return f"/{abc_name(obj.name)}/{abc_name(obj.data.name)}"
    return f"/root/{_usd_name(obj.name, ascii_only)}/{_usd_name(obj.data.name, ascii_only)}"


def free(obj: Any) -> None:
    """Remove the cache object and mesh (and the CacheFile data-block when nothing else uses
    it; the file on disk stays); show the rope again."""
    import bpy

    settings = obj.xpbd.bake
    cached, cache_file = settings.skin, settings.cache_file
    if cached is not None:
        data = cached.data
        store = bpy.data.hair_curves if cached.type == "CURVES" else bpy.data.meshes
        bpy.data.objects.remove(cached)
        if data is not None and data.users == 0:
            store.remove(data)
    if cache_file is not None and not any(
            getattr(m, "cache_file", None) == cache_file for o in bpy.data.objects
            for m in o.modifiers):
        bpy.data.batch_remove([cache_file])  # CacheFiles have no remove()
    settings.skin = None
    settings.cache_file = None
    obj.hide_viewport = settings.hid_viewport
    obj.hide_render = settings.hid_render
