"""Seeded fuzz sessions of random user actions on a few ropes, in their own Blender process
(``python fuzz_session.py SEED ACTIONS FOLDER [BUDGET_S] [SESSIONS]``: SESSIONS sessions,
seeds SEED, SEED + 1, ..., each of at most ACTIONS actions and BUDGET_S seconds; run by
``test_fuzz.py``, and for longer runs by hand, docs/development.md).

A mesh, a poly, a Bezier and a NURBS rope; the Bezier one hangs from an empty with rotation
keys, the poly one moves with location keys, and the mesh has a linked duplicate (Alt-D,
not simulated itself). Actions: edit geometry (move a point, add points or a vertex),
change a setting (rods among them: Twist, Plasticity, bending in Material mode), jump to a
frame or a subframe (``frame_set(f, subframe=s)``, as motion blur does), move a rope's
Simulation Start, save and reopen, toggle Enabled, Reset (also through the linked duplicate,
with Use Current Shape as Rest), Edit Mode on the duplicate while the frame changes, an
attachment to an empty scaled to zero or back, extreme values
set from a script (inf, NaN, 1e30, damping 2e5 with Self Collision), Bake, Free Bake; and
on a box with Collision under the ropes and on the scene (``fuzz_props.py``): moved through
them, scaled to nothing, Collision settings at their limits, Collision removed and added,
its mesh collapsed or a vertex non-finite, deleted and made again, the frame rate changed.
After each one:
- no mesh or curve holds a NaN or infinite value;
- no rope shows an "Internal error" (every problem is a message);
- every rope whose stored rest shape fits its topology holds exactly the rest shape the
  user last gave it (``expected``), so Reset recovers it bit for bit;
- now and then (``check_playback``) the frame shown equals playing from the start frame;
- the preparation in the background (``xpbd_addon.preparation``) never failed: it prints a
  failure to the console and the rope simulates anyway, but a user sees a traceback.

A failure is printed with its seed and the actions that led to it (``FAILURE`` lines):
``python fuzz_session.py SEED ACTIONS FOLDER`` replays that session. The last stdout line
is ``RESULT <json>``: ``{"ok": bool, "sessions": int, "actions": int, "failures":
[{"seed", "log", "error"}], "log": [...], "error": str}`` (log and error: the first failure's,
else the last session's log).
"""

from __future__ import annotations

import json
import random
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import bpy  # noqa: E402
import numpy as np  # noqa: E402

import xpbd_addon  # noqa: E402
from blender import ropes  # noqa: E402
from blender.fuzz_props import PropActions, build_prop  # noqa: E402
from xpbd_addon.blender.frame import sim  # noqa: E402
from xpbd_addon.blender.read import geometry, rest  # noqa: E402

NAMES = ("mesh_rope", "poly", "bezier", "nurbs")
FRAME_END = 24
TWIN = "mesh_twin"
"""A linked duplicate of mesh_rope (shares its mesh), not simulated itself"""
HAND = "hand"
"""An empty that attachments hold on to (scaled to zero by ``zero_scale``)"""
EXTREMES = (("damping", 2e5), ("damping", float("inf")), ("damping", 1e30),
            ("compliance", float("inf")), ("vertex_mass", float("nan")),
            ("radius", 1e30), ("length_scale", float("inf")), ("tear_force", float("nan")),
            ("self_friction", float("nan")), ("bending_compliance", float("inf")),
            ("ground_height", 1e30), ("substeps", 10**6), ("twist_stiffness", float("inf")),
            ("frame_start", -2**31), ("frame_end", 2**31 - 1))
"""(setting, value) a script may set: each must be refused with a message or clamped"""


def build() -> None:
    bpy.ops.wm.read_homefile(use_empty=True, use_factory_startup=True)
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, FRAME_END
    ropes.mesh_rope(scene, n=10)
    for kind in ("POLY", "BEZIER", "NURBS"):
        ropes.curve_rope(scene, kind, n=8, axis=0)
    for k, name in enumerate(NAMES):
        obj = bpy.data.objects[name]
        obj.location = (0.0, 0.5 * k, 0.0)
        obj.xpbd.frame_end = FRAME_END
    # One rope under a rotating parent: its frames must not depend on the path to them.
    spin = bpy.data.objects.new("spin", None)
    scene.collection.objects.link(spin)
    spin.keyframe_insert("rotation_euler", frame=1)
    spin.rotation_euler = (0.2, 0.4, 1.5)
    spin.keyframe_insert("rotation_euler", frame=FRAME_END)
    bpy.data.objects["bezier"].parent = spin
    # A rope whose pins move: its start state depends on its start frame's transform.
    poly = bpy.data.objects["poly"]
    poly.keyframe_insert("location", frame=1)
    poly.location = (1.0, 0.5, 0.5)
    poly.keyframe_insert("location", frame=FRAME_END)
    twin = bpy.data.objects["mesh_rope"].copy()
    twin.name = TWIN
    scene.collection.objects.link(twin)
    twin.xpbd.enabled = False
    twin.location = (0.0, -1.0, 0.0)
    hand = bpy.data.objects.new(HAND, None)
    scene.collection.objects.link(hand)
    hand.location = (2.0, 0.0, 0.0)
    build_prop(scene)
    scene.frame_set(1)


class PreparationFailures:
    """Stands in for ``traceback`` in ``xpbd_addon.preparation``: each failure it prints
    there (then goes on) is recorded, for ``Fuzz.check``."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def print_exc(self, *args, **kwargs) -> None:
        self.seen.append(traceback.format_exc())
        traceback.print_exc(*args, **kwargs)

    def __getattr__(self, name: str):
        return getattr(traceback, name)


PREPARATION = PreparationFailures()


def shape(obj) -> np.ndarray:
    """What the user modelled, as stored (mesh [N, 3]; curve [N, CURVE_REST_STRIDE])."""
    return geometry.read_local(obj, geometry.build_layout(obj)).copy()


def all_finite() -> str | None:
    for mesh in bpy.data.meshes:
        buf = np.empty(3 * len(mesh.vertices), dtype=np.float32)
        mesh.attributes["position"].data.foreach_get("vector", buf)
        if not np.isfinite(buf).all():
            return f"mesh {mesh.name}"
    for curve in bpy.data.curves:
        for spline in curve.splines:
            if spline.type == "BEZIER":
                for attr in ("co", "handle_left", "handle_right"):
                    buf = np.empty(3 * len(spline.bezier_points), dtype=np.float32)
                    spline.bezier_points.foreach_get(attr, buf)
                    if not np.isfinite(buf).all():
                        return f"curve {curve.name}"
            else:
                buf = np.empty(4 * len(spline.points), dtype=np.float32)
                spline.points.foreach_get("co", buf)
                if not np.isfinite(buf).all():
                    return f"curve {curve.name}"
    return None


class Fuzz(PropActions):
    def __init__(self, seed: int, folder: Path) -> None:
        self.rng = random.Random(seed)
        self.folder = folder
        self.log: list[str] = []
        self.expected: dict[str, np.ndarray] = {}
        """Per rope: the rest shape the user last gave it (None: not known, not checked)"""
        build()
        for name in NAMES:
            self.expected[name] = shape(bpy.data.objects[name])

    @property
    def scene(self):
        return bpy.context.scene

    def obj(self):
        return bpy.data.objects[self.rng.choice(NAMES)]

    def activate(self, obj) -> None:
        bpy.context.view_layer.objects.active = obj

    # --- actions -------------------------------------------------------------------------
    def move_point(self) -> str:
        obj = self.obj()
        if obj.xpbd.bake.baked:
            return f"move {obj.name}: baked, skipped"
        delta = self.rng.uniform(-0.3, 0.3)
        if obj.type == "MESH":
            obj.data.vertices[2].co.z += delta
        else:
            spline = obj.data.splines[0]
            points = spline.bezier_points if spline.type == "BEZIER" else spline.points
            points[2].co.z += delta
        if not obj.xpbd.enabled or not rest.has_rest(obj):
            # Not a rope yet (or no longer): the shape is what it will start from.
            self.expected[obj.name] = shape(obj)
        return f"move a point of {obj.name} by {delta:.3f}"

    def add_points(self) -> str:
        obj = self.obj()
        if obj.xpbd.bake.baked:
            return f"add to {obj.name}: baked, skipped"
        if obj.type == "MESH":
            mesh = obj.data
            n = len(mesh.vertices)
            mesh.vertices.add(1)
            mesh.edges.add(1)
            mesh.vertices[n].co = (2.5, 0.0, 0.0)
            mesh.edges[-1].vertices = (n - 1, n)
            mesh.update()
        else:
            spline = obj.data.splines[0]
            if spline.type == "BEZIER":
                spline.bezier_points.add(2)
                for p in list(spline.bezier_points)[-2:]:
                    p.co = (2.2, 0.0, 0.0)
                    p.handle_left = (2.1, 0.0, 0.0)
                    p.handle_right = (2.3, 0.0, 0.0)
            else:
                spline.points.add(2)
                for p in list(spline.points)[-2:]:
                    p.co = (2.2, 0.0, 0.0, 1.0)
        self.expected[obj.name] = None  # Reset takes the new shape (checked there)
        return f"add points to {obj.name}"

    def setting(self) -> str:
        obj = self.obj()
        name, value = self.rng.choice([
            ("substeps", self.rng.randint(1, 12)), ("damping", self.rng.uniform(0.0, 2.0)),
            ("compliance", self.rng.choice([0.0, 1e-6, 1e-3])),
            ("use_ground", self.rng.random() < 0.5),
            # a rod (any rope with twist or plasticity; a curved one with bending)
            ("use_twist", self.rng.random() < 0.5), ("use_plasticity", self.rng.random() < 0.5),
            ("stiffness_mode", self.rng.choice(["MATERIAL", "POINT"])),
            ("use_bend_stiffness", self.rng.random() < 0.5)])
        setattr(obj.xpbd, name, value)
        return f"{obj.name}.{name} = {value}"

    def jump(self) -> str:
        frame = self.rng.randint(1, FRAME_END + 3)
        self.scene.frame_set(frame)
        return f"frame {frame}"

    def subframe(self) -> str:
        frame = self.rng.randint(1, FRAME_END + 2)
        fraction = round(self.rng.uniform(0.05, 0.95), 3)
        self.scene.frame_set(frame, subframe=fraction)
        return f"frame {frame} subframe {fraction}"

    def late_start(self) -> str:
        obj = self.obj()
        start = self.rng.choice([1, 1, 3, 7, 12])
        obj.xpbd.frame_start = start
        return f"{obj.name}.frame_start = {start}"

    def twin_edit_mode(self) -> str:
        """Edit Mode on the linked duplicate while the frame changes: mesh_rope pauses."""
        twin = bpy.data.objects[TWIN]
        self.activate(twin)
        bpy.ops.object.mode_set(mode="EDIT")
        try:
            frame = self.rng.randint(1, FRAME_END)
            self.scene.frame_set(frame)
            rope = bpy.data.objects["mesh_rope"]
            message = sim.status(rope) or ""
            if rope.xpbd.enabled and not rope.xpbd.bake.baked and "Edit Mode" not in message:
                raise AssertionError(f"mesh_rope not paused by its twin's Edit Mode: {message!r}")
        finally:
            bpy.ops.object.mode_set(mode="OBJECT")
        return f"Edit Mode on {TWIN}, frame {frame}"

    def twin_reset(self) -> str:
        """Reset (Use Current Shape as Rest) through the linked duplicate."""
        self.activate(bpy.data.objects[TWIN])
        try:
            bpy.ops.xpbd.reset(use_current=True)
        except RuntimeError as exc:
            return f"reset through {TWIN} refused: {exc}"
        self.expected["mesh_rope"] = shape(bpy.data.objects["mesh_rope"])
        return f"reset through {TWIN} (use current)"

    def zero_scale(self) -> str:
        """An attachment to the hand (made once per rope), the hand scaled to 0 or back."""
        obj = self.obj()
        if not obj.xpbd.bake.baked and not len(obj.xpbd.attachments):
            self.activate(obj)
            bpy.ops.xpbd.attachment_add()
            obj.xpbd.attachments[0].target = bpy.data.objects[HAND]
            obj.xpbd.attachments[0].point = -1
        scale = self.rng.choice([0.0, 1.0])
        bpy.data.objects[HAND].scale = (scale, scale, scale)
        frame = self.rng.randint(1, FRAME_END)
        self.scene.frame_set(frame)
        return f"{obj.name} attached, hand scale {scale}, frame {frame}"

    def extreme(self) -> str:
        """A value no panel allows, set from a script, for one frame change; then undone."""
        obj = self.obj()
        name, value = self.rng.choice(EXTREMES)
        collide = self.rng.random() < 0.5
        old = getattr(obj.xpbd, name), obj.xpbd.use_self_collision
        setattr(obj.xpbd, name, value)
        obj.xpbd.use_self_collision = collide
        frame = self.rng.randint(1, FRAME_END)
        # (noted first: a failure in the check below names what was set)
        self.log.append(f"({obj.name}.{name} = {value}, self collision {collide}, "
                        f"frame {frame}: under way)")
        try:
            self.scene.frame_set(frame)
            self.check()
        finally:
            setattr(obj.xpbd, name, old[0])
            obj.xpbd.use_self_collision = old[1]
        return f"{obj.name}.{name} = {value} (self collision {collide}), frame {frame}"

    def reopen(self) -> str:
        path = str(self.folder / "fuzz.blend")
        bpy.ops.wm.save_as_mainfile(filepath=path)
        bpy.ops.wm.open_mainfile(filepath=path)
        return "save and reopen"

    def toggle(self) -> str:
        obj = self.obj()
        obj.xpbd.enabled = not obj.xpbd.enabled
        if not obj.xpbd.enabled and not obj.xpbd.bake.baked and self.expected[obj.name] is not None:
            # Disabled: the rest shape went back into the data.
            got = shape(obj)
            if not np.array_equal(got, self.expected[obj.name]):
                raise AssertionError(f"disabling {obj.name} did not restore its rest shape")
        if not obj.xpbd.enabled and not obj.xpbd.bake.baked:
            self.expected[obj.name] = shape(obj)
        return f"{obj.name}.enabled = {obj.xpbd.enabled}"

    def reset(self) -> str:
        obj = self.obj()
        self.activate(obj)
        if obj.xpbd.bake.baked:
            return f"reset {obj.name}: baked, skipped"
        try:
            bpy.ops.xpbd.reset()
        except RuntimeError as exc:
            return f"reset {obj.name} refused: {exc}"
        if self.expected[obj.name] is None:
            # After a topology change: Reset made a rest shape (the current shape, or the
            # one stored on the first frame after the edit); from now on it must stay.
            self.expected[obj.name] = shape(obj)
        elif not np.array_equal(shape(obj), self.expected[obj.name]):
            raise AssertionError(f"Reset of {obj.name} did not restore its rest shape")
        return f"reset {obj.name}"

    def bake(self) -> str:
        obj = self.obj()
        self.activate(obj)
        try:
            bpy.ops.xpbd.bake()
        except RuntimeError as exc:
            return f"bake {obj.name} refused: {exc}"
        return f"bake {obj.name}"

    def free_bake(self) -> str:
        obj = self.obj()
        self.activate(obj)
        try:
            bpy.ops.xpbd.free_bake()
        except RuntimeError as exc:
            return f"free {obj.name} refused: {exc}"
        return f"free bake {obj.name}"

    def check_playback(self) -> str:
        scene = self.scene
        frame = scene.frame_current
        scene.frame_set(frame)  # show what the handler makes of this frame (after toggles)
        # (a rope that stopped with a message shows what it showed last, not this frame)
        live = [bpy.data.objects[n] for n in NAMES if bpy.data.objects[n].xpbd.enabled
                and not bpy.data.objects[n].xpbd.bake.baked
                and sim.status(bpy.data.objects[n]) is None]
        shown = {o.name: ropes.local_points(o).copy() for o in live}
        sim.clear()
        for k in range(1, frame + 1):
            scene.frame_set(k)
        for o in live:
            if sim.status(o) is None and not np.array_equal(ropes.local_points(o), shown[o.name]):
                apart = np.abs(ropes.local_points(o) - shown[o.name]).max()
                raise AssertionError(f"frame {frame} of {o.name} differs from playback (by up "
                                     f"to {apart:.3g} m)")
        return f"frame {frame} equals playback"

    # --- invariants ------------------------------------------------------------------------
    def check(self) -> None:
        if PREPARATION.seen:
            raise AssertionError("the preparation failed: "
                                 + PREPARATION.seen[0].strip().splitlines()[-1])
        where = all_finite()
        if where is not None:
            raise AssertionError(f"a non-finite value in {where}")
        for obj in bpy.data.objects:
            message = sim.status(obj) or ""
            if "Internal error" in message:
                raise AssertionError(f"{obj.name}: {message}")
        for name in NAMES:
            obj = bpy.data.objects[name]
            expected = self.expected[name]
            if expected is None or obj.xpbd.bake.baked:
                continue
            try:
                layout = geometry.build_layout(obj)
            except sim.RopeError:
                continue
            stored = rest.load(obj, layout)
            if stored is not None and not np.array_equal(stored, expected):
                rows = np.flatnonzero((stored != expected).any(axis=1)).tolist()
                raise AssertionError(f"the stored rest shape of {name} is not the user's "
                                     f"(rows {rows}, enabled {obj.xpbd.enabled})")

    def run(self, actions: int, budget: float) -> None:
        weighted = ([self.jump] * 6 + [self.move_point] * 2 + [self.setting] * 2
                    + [self.add_points, self.reopen, self.toggle, self.toggle, self.reset,
                       self.reset, self.bake, self.free_bake, self.check_playback]
                    + [self.subframe] * 2 + [self.check_playback, self.late_start,
                                             self.twin_edit_mode, self.twin_reset,
                                             self.zero_scale, self.extreme]
                    + [self.prop_move, self.prop_scale, self.prop_settings,
                       self.prop_collision, self.prop_mesh, self.prop_delete,
                       self.frame_rate])
        end = time.perf_counter() + budget
        for _ in range(actions):
            if time.perf_counter() > end:
                self.log.append("(time budget reached)")
                break
            action = self.rng.choice(weighted)
            self.log.append(action())
            self.check()


def session(seed: int, actions: int, folder: Path, budget: float) -> dict:
    """One session: ``{"seed", "ok", "log", "error"}``."""
    fuzz = None
    PREPARATION.seen.clear()
    try:
        fuzz = Fuzz(seed, folder)
        fuzz.run(actions, budget=budget)
        return {"seed": seed, "ok": True, "log": fuzz.log, "error": ""}
    except Exception:  # noqa: BLE001 - reported with the actions that led to it
        return {"seed": seed, "ok": False, "log": fuzz.log if fuzz else [],
                "error": traceback.format_exc()}


def main() -> None:
    seed, actions, folder = int(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3])
    budget = float(sys.argv[4]) if len(sys.argv) > 4 else 40.0
    sessions = int(sys.argv[5]) if len(sys.argv) > 5 else 1
    xpbd_addon.register()
    from xpbd_addon import preparation

    preparation.traceback = PREPARATION
    results = []
    for k in range(sessions):
        done = session(seed + k, actions, folder, budget)
        results.append(done)
        steps = sum(1 for line in done["log"] if not line.startswith("("))
        print(f"SESSION seed {done['seed']}: {steps} actions, "
              f"{'ok' if done['ok'] else 'FAILED'}", flush=True)
        if not done["ok"]:
            print(f"FAILURE seed {done['seed']} after {steps} actions "
                  f"(replay: python {Path(__file__).name} {done['seed']} {actions} FOLDER):",
                  flush=True)
            for line in done["log"]:
                print(f"  {line}")
            print(done["error"], flush=True)
    failures = [r for r in results if not r["ok"]]
    shown = failures[0] if failures else results[-1]
    out = {"ok": not failures, "sessions": len(results),
           "actions": sum(sum(1 for line in r["log"] if not line.startswith("("))
                          for r in results),
           "failures": [{k: r[k] for k in ("seed", "log", "error")} for r in failures],
           "seed": shown["seed"], "log": shown["log"], "error": shown["error"]}
    print(f"FUZZ {out['sessions']} sessions, {out['actions']} actions, "
          f"{len(failures)} failures", flush=True)
    print("RESULT " + json.dumps(out), flush=True)
    xpbd_addon.unregister()


if __name__ == "__main__":
    main()
