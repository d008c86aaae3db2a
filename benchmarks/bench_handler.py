"""One frame of the XPBD Rope frame handler, I/O included, in real Blender (the bpy wheel).

100 ropes x 100 points (2 m each, released horizontally so they swing), S = 20 substeps,
24 fps, first point pinned; once as one edge mesh (pin vertex group) and once as one curve
object with 100 poly splines (pin_first). Reported per frame, median over 60 consecutive
simulated frames after a warm-up (numba compile / cache load excluded):

    handler    our frame_change_post handler: pin targets, one core.step, write-back
    step       core.step alone inside it (the solver); handler - step = our I/O and bookkeeping
    frame_set  the whole scene.frame_set(f): Blender's evaluation plus the handler

and the rope's stretch (longest rope length / rest length - 1) at the last frame.

Then many small rope objects, as a rigger's scene of tails and cables: 100 objects of one
20-point rope each (meshes, then curves), S = 10, once on their own and once falling onto a
9,900-triangle sphere with Collision physics (the ropes collide with it; it is read from the
evaluated scene every frame). Reported: the handler per frame, the solver's share, and what
is left per object (reading, checks, writing).

Last, one 20-point rope (radius 5 mm) falling onto a 159,200-triangle sphere with Collision
physics (a character-sized collider): at rest, moved by its object's transform (a driver),
and deformed by a Wave modifier; with the rope's stretch and how close it came to the
sphere's surface (the rope's radius: it lies on it). Then six such ropes hanging round the
deforming sphere's equator, as six runs (substeps 10-15) and as one batch.

    python benchmarks/bench_handler.py [--frames 60] [--json out/bench_handler.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
ROPES, POINTS, LENGTH, SUBSTEPS = 100, 100, 2.0, 20
TARGET_MS = 2.0


def _positions() -> np.ndarray:
    """(ROPES, POINTS, 3) float32: ropes along +x, one row along y 5 cm apart."""
    pos = np.zeros((ROPES, POINTS, 3), dtype=np.float32)
    pos[:, :, 0] = np.linspace(0.0, LENGTH, POINTS)[None, :]
    pos[:, :, 1] = (np.arange(ROPES) * 0.05)[:, None]
    return pos


def make_mesh(bpy, scene):
    pos = _positions().reshape(-1, 3)
    ids = np.arange(ROPES * POINTS).reshape(ROPES, POINTS)
    edges = np.stack([ids[:, :-1].ravel(), ids[:, 1:].ravel()], axis=1)
    mesh = bpy.data.meshes.new("ropes_mesh")
    mesh.vertices.add(len(pos))
    mesh.vertices.foreach_set("co", pos.ravel())
    mesh.edges.add(len(edges))
    mesh.edges.foreach_set("vertices", edges.astype(np.int32).ravel())
    mesh.update()
    obj = bpy.data.objects.new("ropes_mesh", mesh)
    scene.collection.objects.link(obj)
    obj.vertex_groups.new(name="pin").add(ids[:, 0].tolist(), 1.0, "REPLACE")
    obj.xpbd.pin_group = "pin"
    return obj


def make_curve(bpy, scene):
    pos = _positions()
    curve = bpy.data.curves.new("ropes_curve", "CURVE")
    curve.dimensions = "3D"
    for r in range(ROPES):
        spline = curve.splines.new("POLY")
        spline.points.add(POINTS - 1)
        co = np.ones((POINTS, 4), dtype=np.float32)
        co[:, :3] = pos[r]
        spline.points.foreach_set("co", co.ravel())
    obj = bpy.data.objects.new("ropes_curve", curve)
    scene.collection.objects.link(obj)
    obj.xpbd.pin_first = True
    return obj


def _stretch(obj) -> float:
    from xpbd_addon.blender.frame import sim

    entry = sim.REGISTRY[obj.session_uid]
    x = entry.cache[max(entry.cache)].x.reshape(ROPES, POINTS, 3)
    lengths = np.linalg.norm(np.diff(x, axis=1), axis=2).sum(axis=1)
    return float(lengths.max() / LENGTH - 1.0)


def measure(bpy, kind: str, frames: int) -> dict:
    import xpbd_addon.core as core
    from xpbd_addon import handlers

    bpy.ops.wm.read_homefile(use_empty=True, use_factory_startup=True)
    scene = bpy.context.scene
    obj = make_mesh(bpy, scene) if kind == "mesh" else make_curve(bpy, scene)
    obj.xpbd.substeps = SUBSTEPS
    obj.xpbd.frame_end = 10_000
    obj.xpbd.enabled = True
    handler_ms: list[float] = []
    step_ms: list[float] = []
    real_step = core.step

    def timed_step(*args, **kwargs):
        t = time.perf_counter()
        real_step(*args, **kwargs)
        step_ms.append(1e3 * (time.perf_counter() - t))

    def timed_handler(scene_, depsgraph=None):
        t = time.perf_counter()
        handlers.update_scene(scene_, depsgraph)
        handler_ms.append(1e3 * (time.perf_counter() - t))

    post = bpy.app.handlers.frame_change_post
    index = post.index(handlers.on_frame_change_post)
    post[index] = timed_handler
    core.step = timed_step
    try:
        for frame in range(1, 6):  # warm-up: build, numba compile or cache load
            scene.frame_set(frame)
        handler_ms.clear()
        step_ms.clear()
        total_ms = []
        for frame in range(6, 6 + frames):
            t = time.perf_counter()
            scene.frame_set(frame)
            total_ms.append(1e3 * (time.perf_counter() - t))
    finally:
        post[post.index(timed_handler)] = handlers.on_frame_change_post
        core.step = real_step
    assert len(step_ms) == frames, "every timed frame must simulate exactly one step"
    return {
        "object": kind, "ropes": ROPES, "points": POINTS, "substeps": SUBSTEPS,
        "handler_ms": float(np.median(handler_ms)), "step_ms": float(np.median(step_ms)),
        "frame_set_ms": float(np.median(total_ms)), "stretch": _stretch(obj),
    }


OBJECTS, OBJECT_POINTS, OBJECT_SUBSTEPS = 100, 20, 10


def make_objects(bpy, scene, kind: str) -> list:
    """OBJECTS rope objects (``make_objects_of``)."""
    return make_objects_of(bpy, scene, kind, OBJECTS)


def make_objects_of(bpy, scene, kind: str, count: int) -> list:
    """``count`` rope objects of OBJECT_POINTS points, 1 m along x, 1 cm apart along y,
    first point pinned (mesh: a pin vertex group; curve: pin_first)."""
    objects = []
    xs = np.linspace(-0.5, 0.5, OBJECT_POINTS)
    for r in range(count):
        pos = np.zeros((OBJECT_POINTS, 3), dtype=np.float32)
        pos[:, 0] = xs
        pos[:, 1] = (r - count / 2) * 0.01
        pos[:, 2] = 0.7
        if kind == "mesh":
            mesh = bpy.data.meshes.new(f"rope{r}")
            mesh.vertices.add(OBJECT_POINTS)
            mesh.vertices.foreach_set("co", pos.ravel())
            ids = np.arange(OBJECT_POINTS, dtype=np.int32)
            mesh.edges.add(OBJECT_POINTS - 1)
            mesh.edges.foreach_set("vertices", np.stack([ids[:-1], ids[1:]], 1).ravel())
            mesh.update()
            obj = bpy.data.objects.new(f"rope{r}", mesh)
            obj.vertex_groups.new(name="pin").add([0], 1.0, "REPLACE")
            obj.xpbd.pin_group = "pin"
        else:
            curve = bpy.data.curves.new(f"rope{r}", "CURVE")
            curve.dimensions = "3D"
            spline = curve.splines.new("POLY")
            spline.points.add(OBJECT_POINTS - 1)
            co = np.ones((OBJECT_POINTS, 4), dtype=np.float32)
            co[:, :3] = pos
            spline.points.foreach_set("co", co.ravel())
            obj = bpy.data.objects.new(f"rope{r}", curve)
            obj.xpbd.pin_first = True
        scene.collection.objects.link(obj)
        obj.xpbd.substeps = OBJECT_SUBSTEPS
        obj.xpbd.radius = 0.005
        obj.xpbd.frame_end = 10_000
        obj.xpbd.enabled = True
        objects.append(obj)
    return objects


def measure_objects(bpy, kind: str, frames: int, collider: bool) -> dict:
    """The handler's frame for OBJECTS rope objects (see the module)."""
    import xpbd_addon.core as core
    from xpbd_addon import handlers
    from xpbd_addon.blender.frame import sim

    bpy.ops.wm.read_homefile(use_empty=True, use_factory_startup=True)
    scene = bpy.context.scene
    if collider:
        bpy.ops.mesh.primitive_uv_sphere_add(segments=100, ring_count=50, radius=0.5)
        bpy.context.object.modifiers.new("Collision", "COLLISION")
    objects = make_objects(bpy, scene, kind)
    handler_ms: list[float] = []
    step_ms = [0.0]
    real_step = core.step

    def timed_step(*args, **kwargs):
        t = time.perf_counter()
        real_step(*args, **kwargs)
        step_ms[-1] += 1e3 * (time.perf_counter() - t)

    def timed_handler(scene_, depsgraph=None):
        step_ms.append(0.0)
        t = time.perf_counter()
        handlers.update_scene(scene_, depsgraph)
        handler_ms.append(1e3 * (time.perf_counter() - t))

    post = bpy.app.handlers.frame_change_post
    post[post.index(handlers.on_frame_change_post)] = timed_handler
    core.step = timed_step
    try:
        for frame in range(1, 6):
            scene.frame_set(frame)
        handler_ms.clear()
        step_ms[:] = [0.0]
        for frame in range(6, 6 + frames):
            scene.frame_set(frame)
    finally:
        post[post.index(timed_handler)] = handlers.on_frame_change_post
        core.step = real_step
    stretch = 0.0
    for obj in objects:
        entry = sim.REGISTRY[obj.session_uid]
        x = entry.cache[max(entry.cache)].x
        stretch = max(stretch, float(np.linalg.norm(np.diff(x, axis=0), axis=1).sum()) - 1.0)
    handler, step = float(np.median(handler_ms)), float(np.median(step_ms[1:]))
    return {"object": f"{OBJECTS} {kind}es" if kind == "mesh" else f"{OBJECTS} {kind}s",
            "collider": collider, "handler_ms": handler, "step_ms": step,
            "per_object_us": 1e3 * (handler - step) / OBJECTS, "stretch": stretch}


BIG_MOTIONS = ("at rest", "moved by its transform", "deformed by a wave")


def _big_sphere(bpy, motion: str):
    """A new scene with the 159,200-triangle sphere (r = 0.5 m, Collision physics), at rest,
    moved by a driver on its location (1 cm a frame) or deformed by a Wave modifier (before
    its Collision), as ``motion`` (``BIG_MOTIONS``) says. Returns (scene, sphere)."""
    bpy.ops.wm.read_homefile(use_empty=True, use_factory_startup=True)
    bpy.ops.mesh.primitive_uv_sphere_add(segments=400, ring_count=200, radius=0.5)
    sphere = bpy.context.object
    if motion == BIG_MOTIONS[1]:
        driver = sphere.driver_add("location", 0).driver
        driver.type = "SCRIPTED"
        driver.expression = "0.01 * frame"
    elif motion == BIG_MOTIONS[2]:
        wave = sphere.modifiers.new("Wave", "WAVE")
        wave.height, wave.width, wave.speed = 0.01, 0.5, 0.05
    sphere.modifiers.new("Collision", "COLLISION")
    return bpy.context.scene, sphere


@contextmanager
def _timed_handler(bpy) -> Iterator[list[float]]:
    """The frame handler timed within the block: yields the list of its ms per frame."""
    from xpbd_addon import handlers

    handler_ms: list[float] = []

    def timed_handler(scene_, depsgraph=None):
        t = time.perf_counter()
        handlers.update_scene(scene_, depsgraph)
        handler_ms.append(1e3 * (time.perf_counter() - t))

    post = bpy.app.handlers.frame_change_post
    post[post.index(handlers.on_frame_change_post)] = timed_handler
    try:
        yield handler_ms
    finally:
        post[post.index(timed_handler)] = handlers.on_frame_change_post


def measure_big_collider(bpy, frames: int, motion: str) -> dict:
    """The handler's frame for one rope over the big sphere (``_big_sphere``), with the rope's
    stretch and how close it came to the sphere's surface (it must touch it, not sink in)."""
    from xpbd_addon.blender.frame import sim

    scene, sphere = _big_sphere(bpy, motion)
    (rope,) = make_objects_of(bpy, scene, "mesh", 1)
    gaps = []
    with _timed_handler(bpy) as handler_ms:
        for frame in range(1, 6 + frames):
            scene.frame_set(frame)
            x = sim.REGISTRY[rope.session_uid].cache[frame].x
            center = np.array(sphere.matrix_world.translation)
            gaps.append(np.linalg.norm(x - center, axis=1).min() - 0.5)
    triangles = sum(len(p.vertices) - 2 for p in sphere.data.polygons)
    x = sim.REGISTRY[rope.session_uid].cache[5 + frames].x
    stretch = np.linalg.norm(np.diff(x, axis=0), axis=1).sum() / 1.0 - 1.0
    return {"triangles": triangles, "motion": motion,
            "handler_ms": float(np.median(handler_ms[5:])), "stretch": float(stretch),
            "closest_mm": 1e3 * float(min(gaps))}


def measure_ropes_round(bpy, frames: int, batch: bool) -> dict:
    """Six 20-point ropes hanging round the equator of the big sphere deformed by a Wave
    modifier: one batch (the same settings) or six runs (substeps 10-15)."""
    from xpbd_addon.blender.frame import sim

    scene, _ = _big_sphere(bpy, BIG_MOTIONS[2])
    ropes = make_objects_of(bpy, scene, "mesh", 6)
    for k, rope in enumerate(ropes):
        angle = 2.0 * np.pi * k / len(ropes)
        rope.location = (0.55 * np.cos(angle), 0.55 * np.sin(angle), 0.0)
        rope.rotation_euler = (0.0, 0.0, angle)
        if not batch:
            rope.xpbd.substeps = OBJECT_SUBSTEPS + k
    gaps, stretch = [], 0.0
    with _timed_handler(bpy) as handler_ms:
        for frame in range(1, 6 + frames):
            scene.frame_set(frame)
            for rope in ropes:
                x = sim.REGISTRY[rope.session_uid].cache[frame].x
                gaps.append(np.linalg.norm(x, axis=1).min() - 0.5)
                length = np.linalg.norm(np.diff(x, axis=0), axis=1).sum()
                stretch = max(stretch, length - 1.0)
    return {"batch": batch, "handler_ms": float(np.median(handler_ms[5:])),
            "stretch": float(stretch), "closest_mm": 1e3 * float(min(gaps))}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--frames", type=int, default=60)
    parser.add_argument("--json", default=str(ROOT / "out" / "bench_handler.json"))
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    import bpy

    import xpbd_addon

    xpbd_addon.register()
    try:
        results = [measure(bpy, kind, args.frames) for kind in ("mesh", "curve")]
        many = [measure_objects(bpy, kind, args.frames, collider)
                for collider in (False, True) for kind in ("mesh", "curve")]
        big = [measure_big_collider(bpy, args.frames, motion) for motion in BIG_MOTIONS]
        round_ = [measure_ropes_round(bpy, args.frames, batch) for batch in (False, True)]
    finally:
        xpbd_addon.unregister()
    print(f"XPBD Rope handler, {ROPES} ropes x {POINTS} points, S = {SUBSTEPS}, "
          f"median of {args.frames} frames (target < {TARGET_MS} ms per frame)")
    print(f"{'object':<8}{'handler ms':>12}{'step ms':>10}{'I/O etc ms':>12}{'frame_set ms':>14}"
          f"{'stretch':>10}")
    for r in results:
        print(f"{r['object']:<8}{r['handler_ms']:>12.3f}{r['step_ms']:>10.3f}"
              f"{r['handler_ms'] - r['step_ms']:>12.3f}{r['frame_set_ms']:>14.3f}"
              f"{100 * r['stretch']:>9.2f}%")
    print(f"\n{OBJECTS} rope objects x {OBJECT_POINTS} points, S = {OBJECT_SUBSTEPS}, median "
          f"of {args.frames} frames")
    print(f"{'objects':<12}{'collider':>10}{'handler ms':>12}{'step ms':>10}"
          f"{'rest us/object':>16}{'stretch':>10}")
    for r in many:
        print(f"{r['object']:<12}{'sphere' if r['collider'] else '-':>10}"
              f"{r['handler_ms']:>12.2f}{r['step_ms']:>10.2f}{r['per_object_us']:>16.0f}"
              f"{100 * r['stretch']:>9.2f}%")
    print(f"\none {OBJECT_POINTS}-point rope over a {big[0]['triangles']:,}-triangle sphere "
          f"(r = 0.5 m), median of {args.frames} frames")
    print(f"{'sphere':<24}{'handler ms':>12}{'stretch':>10}{'closest to surface':>20}")
    for r in big:
        print(f"{r['motion']:<24}{r['handler_ms']:>12.1f}{100 * r['stretch']:>9.2f}%"
              f"{r['closest_mm']:>17.1f} mm")
    print(f"\nsix {OBJECT_POINTS}-point ropes round the deforming sphere's equator")
    for r in round_:
        print(f"{'one batch' if r['batch'] else 'six runs':<24}{r['handler_ms']:>12.1f}"
              f"{100 * r['stretch']:>9.2f}%{r['closest_mm']:>17.1f} mm")
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps({"one_object": results, "many_objects": many,
                                           "big_collider": big, "ropes_round": round_},
                                          indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
