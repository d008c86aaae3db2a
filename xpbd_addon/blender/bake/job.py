"""Bake: the simulation of a frame range turned into native Blender animation that
plays with the add-on disabled, any frame alone.

A ``BakeJob`` simulates every frame of its objects' ranges with the live simulation's own
frame engine (``engine.Run``: the same reset, pin targets, colliders and step as playback, so
a baked frame equals the played frame), records the positions, and only when every frame is
done writes the animation. Cancelling half way therefore writes nothing: the objects are as
they were before the bake.

What a bake writes (``write``), per object:

- curve, "keyframes" (``curve_format`` KEYFRAMES, the default): one F-Curve per
  coordinate of every free control point (``splines[s].points[j].co`` /
  ``bezier_points[j].co``), LINEAR keys on every frame of the range. Bezier handles follow
  their point with the rest offsets (keyed too), exactly as in live playback; keyed rather
  than auto handles, so what plays is what playback showed, whatever Blender does with auto
  handles of animated points (handle types are left as modelled). Pinned points
  are not keyed: they keep their rest values and move with the object, its parent and its
  hooks, as live.
- curve with ``curve_format`` SHAPE_KEYS, and mesh: shape keys, one per frame
  ("xpbd <frame>", object space [m], relative to a "Basis" that is the rest shape), each
  keyed 0 -> 1 -> 0 around its frame, LINEAR. Everything stays inside the .blend (no cache
  file to ship to a farm) and the modifier stack (armature, hooks on pins) still applies
  after the keys, as live.
- "bones": see ``bake_bones``: bone chains along each rope (in a rig of its own or in a
  character's armature), a skinned copy of the rope (a tube for faceless ropes), bones keyed;
  the rope object itself is hidden.
- "cache": see ``bake_cache``: an Alembic or USD file per bake and an object per rope that
  plays it through a Mesh Sequence Cache modifier; the rope object itself is hidden.

Ropes of several objects that collide with each other (``group``) are baked together: baking
one adds the others (``with_partners``), and they are stepped as one ``engine.Run`` as in
playback; they need the same bake range.

Every bake is recorded on ``obj.xpbd.bake`` (what was made, and the visibility it changed), so
``free`` removes exactly that, puts the rest shape back and hands the object to the live
simulation again. While ``baked`` is set, the frame handler leaves the object alone.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import numpy as np

from ..frame import sim
from ..read import pins, rest
from ..read.geometry import RopeError
from ..write import curve_tilt, rope_data
from . import action_compat
from . import keys as bake_keys
from . import loop as bake_loop
from .recording import Recording

if TYPE_CHECKING:
    from ..frame import engine

BAKING: set[int] = set()
"""session_uid of the objects a running bake drives; the frame handler skips them."""



def bake_range(obj: Any, scene: Any) -> tuple[int, int]:
    """First and last baked frame [frame]: the scene's range unless the object's bake
    settings say otherwise."""
    settings = obj.xpbd.bake
    if settings.use_scene_range:
        return int(scene.frame_start), int(scene.frame_end)
    return int(settings.frame_start), int(settings.frame_end)


def check_bakeable(obj: Any, scene: Any, target: str) -> None:
    """RopeError (worded for the user) if ``obj`` cannot be baked to ``target``
    ('KEYS', 'BONES' or 'CACHE'); nothing is changed."""
    name = obj.name
    if obj.type not in ("MESH", "CURVE") or not obj.xpbd.enabled:
        raise RopeError(f"'{name}' is not simulated: enable XPBD Rope in its Physics tab "
                        "first")
    if obj.xpbd.bake.baked:
        raise RopeError(f"'{name}' is baked already: Free Bake first")
    if obj.mode == "EDIT":
        raise RopeError(f"'{name}' is in Edit Mode: leave it first")
    first, last = bake_range(obj, scene)
    if last <= first:
        raise RopeError(f"'{name}': the bake range {first}..{last} is empty: the end frame "
                        "must come after the start frame")
    settings = obj.xpbd.bake
    if settings.loop and settings.loop_frames >= last - first:
        raise RopeError(f"'{name}': a loop bake fades {settings.loop_frames} frames, more than "
                        f"the bake range {first}..{last} allows (at most {last - first - 1}): "
                        "use fewer Loop Frames or a longer range")
    if target == "KEYS" and obj.type == "CURVE":
        anim = obj.data.animation_data
        if anim is not None and anim.action is not None:
            raise RopeError(f"Curve '{obj.data.name}' already has animation (action "
                            f"'{anim.action.name}'); baking keyframes would replace it. "
                            "Unlink that action first, or Bake to Bones")
        if obj.data.shape_keys is not None:
            raise RopeError(f"Curve '{obj.data.name}' has shape keys, which would hide the "
                            "baked keyframes")
        kinds = {spline.type == "BEZIER" for spline in obj.data.splines}
        if obj.xpbd.bake.curve_format == "SHAPE_KEYS" and len(kinds) > 1:
            raise RopeError(f"Curve '{obj.data.name}' mixes Bezier and poly/NURBS splines: "
                            "bake it to Point Keyframes, or split it")
    if target == "KEYS" and obj.type == "MESH":
        anim = obj.data.animation_data
        if anim is not None and anim.action is not None:
            raise RopeError(f"Mesh '{obj.data.name}' already has animation (action "
                            f"'{anim.action.name}'), which the baked shape keys would hide. "
                            "Unlink that action first, or Bake to Bones")
    if target == "KEYS" and obj.type == "MESH" and obj.data.users > 1:
        raise RopeError(f"Mesh '{obj.data.name}' is shared by {obj.data.users} users: the "
                        "shape keys would change all of them. Make it single user first")


class BakeJob:
    """Simulate the frame range of ``objects`` frame by frame (``advance``), then ``write``
    the animation or ``cancel``. Raises RopeError from the constructor if any object cannot
    be baked, before anything is changed."""

    def __init__(self, context: Any, objects: list, target: str = "KEYS",
                 bone_segments: int = 1) -> None:
        self.scene = context.scene
        self.target = target
        self.bone_segments = max(1, int(bone_segments))
        self.frame_original = int(self.scene.frame_current)
        self.records: list[Recording] = []
        if not objects:
            raise RopeError("No simulated object to bake")
        # Ropes that collide with each other are simulated together, so they are baked
        # together: baking one bakes the ropes it collides with too (as played).
        objects = with_partners(self.scene, objects)
        for obj in objects:
            check_bakeable(obj, self.scene, target)
        if target == "BONES":
            from . import bones as bake_bones

            for obj in objects:
                bake_bones.check(obj)
        if target == "CACHE":
            from . import point_cache as bake_cache

            bake_cache.check(objects)
        try:
            for obj in objects:
                first, last = bake_range(obj, self.scene)
                # Start from the stored rest shape, as the live simulation does at its start
                # frame, and build the simulation with its own settings and pins.
                sim.forget(obj)
                rope_data.restore_rest(obj)
                rope = sim.RopeSim(obj, self.scene, sim.settings_key(obj, self.scene))
                self.records.append(Recording(obj, rope, first, last,
                                              bake_loop.extra_frames(obj.xpbd.bake)))
        except RopeError as exc:
            # Settings the simulation refuses: show the frame as before (the live
            # simulation rebuilds what was dropped) and say which object it was.
            self.scene.frame_set(self.frame_original)
            raise RopeError(f"'{obj.name}': {exc}") from exc
        try:
            self.units = _units(self.records, self.scene)
        except RopeError:
            self.scene.frame_set(self.frame_original)
            raise
        self.first = min(r.first for r in self.records)
        self.last = max(r.last + r.extra for r in self.records)
        self.frame = self.first
        """Next frame to simulate [frame]"""
        self.cache_path: str | None = None
        """The file a cache bake wrote (set by ``write``)"""
        self.warnings: list[str] = []
        """What ``write`` found the user should know (a loop bake whose animation does not
        repeat), one line per rope"""
        for record in self.records:
            BAKING.add(record.obj.session_uid)

    @property
    def done(self) -> bool:
        return self.frame > self.last

    @property
    def progress(self) -> float:
        """Fraction of the frames simulated, 0..1."""
        return (self.frame - self.first) / (self.last - self.first + 1)

    def advance(self, budget: float = 0.1) -> None:
        """Simulate frames for about ``budget`` seconds (at least one frame)."""
        # io_kernels (numba): loaded by the operator before the job starts
        from ..frame import engine
        from ..write import io_kernels

        t_end = time.perf_counter() + budget
        while not self.done:
            frame = self.frame
            self.scene.frame_set(frame)
            import bpy

            depsgraph = bpy.context.evaluated_depsgraph_get()
            for records, run in self.units:
                if not records[0].first <= frame <= records[0].last + records[0].extra:
                    continue
                try:
                    self._advance_run(records, run, depsgraph, io_kernels)
                except engine.MemberError as exc:  # as playback says it, for that object
                    raise exc.error from exc
            self.frame += 1
            if time.perf_counter() >= t_end:
                break

    def _advance_run(self, records: list[Recording], run: engine.Run, depsgraph: Any,
                     io_kernels: Any) -> None:
        """One frame of a run's ropes, made as playback makes it (``engine.Run.show``)."""
        from ..frame import engine

        members = [(r.obj, r.rope) for r in records]
        matrices = engine.worlds(members, depsgraph)
        previous = [r.previous for r in records if r.previous is not None]
        if len(previous) < len(records):  # the first baked frame: the rest shape
            states = run.start(members, depsgraph, False, matrices, self.frame)
        else:
            states = run.next(members, depsgraph, False, previous, self.frame)
        for record, state, world in zip(records, states, matrices, strict=True):
            self._keep(record, state, world, io_kernels)
        self._keep_targets(records, depsgraph)

    def _keep(self, record: Recording, state: sim.Frame, world: np.ndarray,
              io_kernels: Any) -> None:
        """Record ``state`` (world) as the object-space positions playback writes."""
        rope = record.rope
        record.previous = state
        local = np.empty((rope.layout.particle_count, 3), dtype=np.float32)
        io_kernels.world_to_local(state.x, pins.affine_inverse(world), state.pinned_ids,
                                  rope.rest_local, local)
        if not np.isfinite(local).all():  # as RopeSim.write: never keyed into user data
            raise RopeError(f"'{record.obj.name}': a point would be NaN or infinite in object "
                            "space (check the object's scale); nothing was baked")
        record.local.append(local)
        if state.torn is not None:
            from ..write import tears as tear

            if record.tear_frames is None:
                record.tear_frames = np.full(len(state.torn), tear.NEVER, dtype=np.float32)
            new = state.torn & (record.tear_frames == tear.NEVER)
            record.tear_frames[new] = record.first + len(record.local) - 1
        pinned = np.zeros(rope.layout.particle_count, dtype=bool)
        pinned[state.pinned_ids] = True
        record.always_pinned = (pinned if record.always_pinned is None
                                else record.always_pinned & pinned)
        if self.target in ("BONES", "CACHE") or record.extra:
            record.world.append(state.x.copy())
        modelled_tilt = rope.rest_tilt
        if modelled_tilt is not None and self.records_tilt(record):
            splines = rope.layout.splines
            record.tilt.append(
                curve_tilt.written(rope.track, rope.rest_xyz, modelled_tilt, splines, world,
                                   state, local=local) if self.target == "KEYS" else
                curve_tilt.world_tilt(rope.track, rope.rest_xyz, modelled_tilt, splines, state))
        if self.target == "BONES":
            normals = curve_tilt.rod_normals(rope.track, state)
            if normals is not None:
                record.normals.append(normals)

    def records_tilt(self, record: Recording) -> bool:
        """The bake records the curve's tilt: a curve rod (it writes its tilt live) baked to
        keyframes (keyed in object space) or to a cache (its Curves' tilt, world space;
        shape keys carry no tilt)."""
        rope = record.rope
        return (record.obj.type == "CURVE" and rope.rest_tilt is not None
                and rope.track.start_model.rod_layout is not None
                and (self.target == "CACHE" or self.target == "KEYS"
                     and record.obj.xpbd.bake.curve_format == "KEYFRAMES"))

    def _keep_targets(self, records: list[Recording], depsgraph: Any) -> None:
        """Bones into a character's armature: its matrix and its parent bone's pose."""
        if self.target == "BONES":
            from . import bones as bake_bones

            for record in records:
                bake_bones.record_targets(record, depsgraph)

    def run(self, report_every: float = 1.0) -> None:
        """Simulate everything, printing a progress line about every ``report_every`` s
        (background mode: the console is the only progress display)."""
        shown = time.perf_counter()
        while not self.done:
            self.advance(budget=report_every)
            now = time.perf_counter()
            if now - shown >= report_every or self.done:
                shown = now
                print(f"XPBD Rope: baking frame {self.frame - 1} of {self.first}..{self.last}"
                      f" ({100.0 * self.progress:.0f} %)", flush=True)

    def _release(self) -> None:
        for record in self.records:
            BAKING.discard(record.obj.session_uid)
            sim.forget(record.obj)

    def cancel(self) -> None:
        """Drop what was recorded; the objects are as before the bake (the handler shows
        the original frame again)."""
        self._release()
        for record in self.records:
            rope_data.restore_rest(record.obj)
        self.scene.frame_set(self.frame_original)

    def write(self) -> list[str]:
        """Write the recorded animation (every frame must be done); returns one line per
        object."""
        if not self.done:
            raise RuntimeError("write() before every frame was simulated")
        for record in self.records:
            rope_data.restore_rest(record.obj)
        frame_time = self.scene.render.fps_base / self.scene.render.fps
        seams = {r.obj.session_uid: bake_loop.close(r, frame_time) for r in self.records
                 if r.extra}
        try:
            if self.target == "BONES":
                from . import bones as bake_bones

                bake_bones.write_all(self.records, self.bone_segments, self.scene)
            elif self.target == "CACHE":
                from . import point_cache as bake_cache

                self.cache_path = bake_cache.write_all(self.records, self.scene)
            else:
                for record in self.records:
                    if (record.obj.type == "CURVE"
                            and record.obj.xpbd.bake.curve_format == "KEYFRAMES"):
                        bake_keys.write_curve_keys(record)
                    else:
                        bake_keys.write_shape_keys(record)
                    bake_keys.write_tears(record)
        except Exception:
            # A failure while writing (a bug, or Blender refusing data): remove what was
            # written so far, so no object is left half baked.
            for record in self.records:
                if record.obj.xpbd.bake.kind:
                    record.obj.xpbd.bake.baked = True
                    free(record.obj)
            raise
        messages = []
        for record in self.records:
            obj = record.obj
            settings = obj.xpbd.bake
            settings.baked = True
            settings.baked_first, settings.baked_last = record.first, record.last
            where = f" to {self.cache_path}" if self.cache_path else ""
            seam = seams.get(obj.session_uid)
            settings.loop_seam_position = seam.position if seam else 0.0
            settings.loop_seam_velocity = seam.velocity if seam else 0.0
            looped = (f", a loop: seam {100 * seam.position:.2f} % in position, "
                      f"{100 * seam.velocity:.2f} % in velocity" if seam else "")
            if seam and seam.pins > bake_loop.PIN_TOLERANCE:
                self.warnings.append(
                    f"'{obj.name}': a loop, but its pins are {seam.pins:.3g} m from where they "
                    "start one frame after the range: the animation does not repeat after "
                    "it (an F-Curve Cycles modifier makes it repeat), so the loop does not "
                    "close")
            messages.append(f"Baked '{obj.name}' frames {record.first}..{record.last} "
                            f"({settings.kind.replace('_', ' ').lower()}){where}{looped}")
        # Only now may the handler see the objects again: it leaves baked ones alone.
        self._release()
        self.scene.frame_set(self.frame_original)
        return messages


# --- ropes colliding with each other -------------------------------------------------------

def with_partners(scene: Any, objects: list) -> list:
    """``objects`` and the simulated ropes they collide with (``group.partition``, as the
    frame handler groups them: enabled, not baked, not failed), in scene order."""
    from ..frame import group

    wanted = {obj.session_uid for obj in objects}
    candidates = [o for o in scene.objects if o.session_uid in wanted or (
        o.xpbd.enabled and not o.xpbd.bake.baked and o.type in ("MESH", "CURVE")
        and o.mode != "EDIT" and o.session_uid not in BAKING and sim.status(o) is None)]
    groups, _notes = group.partition([(o, None) for o in candidates])
    for members in groups:
        if wanted & {o.session_uid for o, _ in members}:
            wanted |= {o.session_uid for o, _ in members}
    extra = [o for o in candidates if o.session_uid in wanted
             and all(o.session_uid != obj.session_uid for obj in objects)]
    return list(objects) + extra


def _units(records: list[Recording], scene: Any) -> list[tuple[list[Recording], Any]]:
    """The records in runs of the frame engine (``runs.make_runs``: ropes that collide
    with each other together, as in playback), each run with its records. RopeError if
    ropes that collide with each other have different bake ranges."""
    from ..frame import runs

    by_uid = {r.obj.session_uid: r for r in records}
    planned, _notes = runs.make_runs([(r.obj, r.rope) for r in records], scene.name,
                                     batch=False)  # (a batch changes no bit)
    units: list[tuple[list[Recording], Any]] = []
    for run, members in planned:
        grouped = [by_uid[obj.session_uid] for obj, _rope in members]
        ranges = {(r.first, r.last, r.extra) for r in grouped}
        if len(ranges) > 1:
            names = ", ".join(f"'{r.obj.name}' {r.first}..{r.last}"
                              + (f" (loop, {r.extra - 1} frames)" if r.extra else "")
                              for r in grouped)
            raise RopeError(f"Ropes that collide with each other are baked together and need "
                            f"the same bake range and loop: {names}")
        units.append((grouped, run))
    return units


# --- free -------------------------------------------------------------------------------------

def free(obj: Any) -> str:
    """Remove everything the bake of ``obj`` added, put the exact rest shape back and return
    the object to the live simulation. RopeError if it is not baked."""
    settings = obj.xpbd.bake
    if not settings.baked:
        raise RopeError(f"'{obj.name}' is not baked")
    if obj.mode == "EDIT":
        raise RopeError(f"'{obj.name}' is in Edit Mode: leave it first")
    kind = settings.kind
    action = settings.action
    if kind == "CURVE_KEYS":
        action_compat.remove_action(obj.data, action)
    elif kind == "SHAPE_KEYS":
        key = obj.data.shape_keys
        action_compat.remove_action(key, action)
        if key is not None:
            obj.shape_key_clear()
    elif kind == "BONES":
        from . import bones as bake_bones

        bake_bones.free(obj)
    elif kind == "CACHE":
        from . import point_cache as bake_cache

        bake_cache.free(obj)
    settings.action = None
    settings.baked = False
    settings.kind = ""
    sim.forget(obj)
    if rope_data.restore_rest(obj) and not obj.xpbd.enabled:
        # Disabled while baked: the rope is off now, as unticking Enabled leaves it (the
        # stored copy kept for this Free is dropped, unless a linked duplicate uses it).
        import bpy

        if not rest.other_users(obj, bpy.data.objects):
            rest.clear(obj)
    return f"Freed the bake of '{obj.name}'"
