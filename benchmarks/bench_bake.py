"""Bake figures: 250 frames of 100 ropes x 100 points, next to Blender's own Soft Body bake.

    .venv/bin/python benchmarks/bench_bake.py [--quick] [--frames N]

Runs in the dev venv's bpy (5.0.1), headless. Each case builds a fresh scene (24 fps,
gravity -9.81 m/s^2, ropes 2 m long laid along +X and released, first point pinned; the
layout of ``_ropes_bpy.py``), bakes frames 1..N and reports:

- ``simulate``: stepping every frame (``scene.frame_set`` + pin targets + ``core.step``, the
  live simulation's own path), ``write``: creating the animation data, ``total``: both,
  the number of F-Curves / shape keys written, and ``play``: the median ms of
  ``scene.frame_set`` on the baked result (what a farm or the viewport then pays per frame,
  add-on not involved).
- Soft Body: Blender's own bake of the same ropes as one edge mesh (``ptcache.bake_all``;
  the settings of ``blender_builtin.py``: goal on the pin group, edges on), as a reference
  for what a native bake of this size costs.

Cases: curves as 100 objects (one spline each) and as one object with 100 splines (F-Curve
creation in one Action grows with the square of its channels: see ``action_compat``; the
core solves the ropes of one object together, so one object simulates much faster), the
one-object curve to shape keys,
bones (100 objects -> 100 armatures of 100 bones), the mesh (one object, 100 chains) to
shape keys, and the cache bakes (an Alembic file; its size and that of the .blend saved
after the bake are reported), plus a crowd: 1,000 ropes of 20 points in one curve object over
1,000 frames to an Alembic cache (not with ``--quick``). ``--only cache``
runs the cases whose name contains "cache". numba is compiled/loaded by a small warm-up
bake first, not timed.
Output: a Markdown table, and ``out/bench_bake.json``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(HERE))

import _ropes_bpy as layout  # noqa: E402
import bpy  # noqa: E402
import numpy as np  # noqa: E402

import xpbd_addon  # noqa: E402
from xpbd_addon import dependencies  # noqa: E402
from xpbd_addon.blender.bake import job as bake  # noqa: E402

ROPES, POINTS = 100, 100


def _fresh(frames: int) -> object:
    bpy.ops.wm.read_homefile(use_empty=True, use_factory_startup=True)
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = 24, 1.0
    scene.frame_start, scene.frame_end = 1, frames
    scene.frame_set(1)
    return scene


def _curves(scene, ropes: int, points: int, objects: bool) -> list:
    pos = layout.rope_positions(ropes, points, horizontal=True)
    w = np.ones((points, 1), dtype=np.float32)
    out = []
    curve = None
    for r in range(ropes):
        if curve is None or objects:
            curve = bpy.data.curves.new(f"rope{r}", "CURVE")
            curve.dimensions = "3D"
            obj = bpy.data.objects.new(f"rope{r}", curve)
            scene.collection.objects.link(obj)
            out.append(obj)
        spline = curve.splines.new("POLY")
        spline.points.add(points - 1)
        spline.points.foreach_set("co", np.hstack([pos[r], w]).ravel())
    for obj in out:
        obj.xpbd.pin_first = True
        obj.xpbd.enabled = True
    return out


def _mesh(scene, ropes: int, points: int) -> list:
    obj = layout.make_edge_mesh_object("ropes", ropes, points, horizontal=True)
    obj.xpbd.pin_group = layout.PIN_GROUP
    obj.xpbd.enabled = True
    return [obj]


def _play_ms(scene, frames: int) -> float:
    times = []
    for f in np.random.default_rng(1).permutation(np.arange(1, frames + 1))[:40]:
        t0 = time.perf_counter()
        scene.frame_set(int(f))
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def _shape_keyed(objects: list) -> list:
    for obj in objects:
        obj.xpbd.bake.curve_format = "SHAPE_KEYS"
    return objects


def _cached(objects: list, name: str) -> list:
    """Cache bakes write into out/bench_cache/<name>.abc (an absolute path: the benchmark's
    file is never saved)."""
    path = REPO / "out" / "bench_cache" / f"{name}.abc"
    if path.exists():
        path.unlink()
    objects[0].xpbd.bake.cache_path = str(path)
    return objects


def bake_case(name: str, frames: int, build, target: str = "KEYS") -> dict:
    scene = _fresh(frames)
    objects = build(scene)
    t0 = time.perf_counter()
    job = bake.BakeJob(bpy.context, objects, target)
    job.run(report_every=1e9)
    t1 = time.perf_counter()
    job.write()
    t2 = time.perf_counter()
    channels = 0
    for obj in objects:
        s = obj.xpbd.bake
        if s.kind == "SHAPE_KEYS":
            channels += len(obj.data.shape_keys.key_blocks) - 1
        elif s.action is not None:
            channels += sum(len(bag.fcurves) for layer in s.action.layers
                            for strip in layer.strips for bag in strip.channelbags)
    size = blend = 0
    if target == "CACHE":
        path = Path(bpy.path.abspath(objects[0].xpbd.bake.cache_file.filepath))
        size = path.stat().st_size
        bpy.ops.wm.save_as_mainfile(filepath=str(path.with_suffix(".blend")))
        blend = path.with_suffix(".blend").stat().st_size
    return {"case": name, "frames": frames, "simulate_s": t1 - t0, "write_s": t2 - t1,
            "total_s": t2 - t0, "channels": channels, "play_ms": _play_ms(scene, frames),
            "file_mb": size / 1e6, "blend_mb": blend / 1e6}


def soft_body_case(frames: int) -> dict:
    scene = _fresh(frames)
    obj = layout.make_edge_mesh_object("ropes", ROPES, POINTS, horizontal=True)
    mod = obj.modifiers.new("Softbody", "SOFT_BODY")
    sb = obj.soft_body
    sb.use_goal, sb.vertex_group_goal, sb.goal_default = True, layout.PIN_GROUP, 1.0
    mod.point_cache.frame_start, mod.point_cache.frame_end = 1, frames
    t0 = time.perf_counter()
    with bpy.context.temp_override(scene=scene, active_object=obj, object=obj):
        bpy.ops.ptcache.bake_all(bake=True)
    t1 = time.perf_counter()
    if not mod.point_cache.is_baked:
        raise RuntimeError("Soft Body did not bake")
    return {"case": "Soft Body bake (Blender, 1 edge mesh)", "frames": frames,
            "simulate_s": t1 - t0, "write_s": 0.0, "total_s": t1 - t0, "channels": 0,
            "play_ms": _play_ms(scene, frames)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="50 frames instead of 250")
    parser.add_argument("--frames", type=int, default=None)
    parser.add_argument("--only", default="",
                        help="run only the cases whose name contains this (e.g. cache)")
    args = parser.parse_args(argv)
    frames = args.frames or (50 if args.quick else 250)
    xpbd_addon.register()
    reason = dependencies.load_numba()
    if reason:
        print(reason)
        return 1
    bake_case("warm-up", 5, lambda s: _curves(s, 2, 10, True))  # numba compile/load
    cases = [  # (name, objects builder, target); built and run only if selected
        ("curves, 100 objects -> point keyframes",
         lambda s: _curves(s, ROPES, POINTS, True), "KEYS"),
        ("curves, 1 object x 100 splines -> point keyframes",
         lambda s: _curves(s, ROPES, POINTS, False), "KEYS"),
        ("curves, 1 object x 100 splines -> shape keys",
         lambda s: _shape_keyed(_curves(s, ROPES, POINTS, False)), "KEYS"),
        ("curves, 100 objects -> bones (100 armatures)",
         lambda s: _curves(s, ROPES, POINTS, True), "BONES"),
        ("mesh, 1 object x 100 chains -> shape keys",
         lambda s: _mesh(s, ROPES, POINTS), "KEYS"),
        ("curves, 1 object x 100 splines -> Alembic cache",
         lambda s: _cached(_curves(s, ROPES, POINTS, False), "curves1"), "CACHE"),
        ("curves, 100 objects -> Alembic cache",
         lambda s: _cached(_curves(s, ROPES, POINTS, True), "curves100"), "CACHE"),
        ("mesh, 1 object x 100 chains -> Alembic cache",
         lambda s: _cached(_mesh(s, ROPES, POINTS), "mesh1"), "CACHE"),
    ]
    # The scale of a crowd: a thousand 20-point ropes (Add > Curve > XPBD Rope's) over a
    # thousand frames, in one object. Its own frame count: --frames does not change it.
    scale = [("curves, 1 object x 1000 splines x 20 points, 1000 frames -> Alembic cache",
              lambda s: _cached(_curves(s, 1000, 20, False), "crowd"), "CACHE", 1000)]
    only = args.only.lower()
    rows = [bake_case(name, frames, build, target) for name, build, target in cases
            if only in name.lower()]
    rows += [bake_case(name, count, build, target) for name, build, target, count in scale
             if only in name.lower() and not args.quick]
    if only in "soft body bake (blender, 1 edge mesh)":
        rows.append(soft_body_case(frames))
    print(f"\n{ROPES} ropes x {POINTS} points, {frames} frames, bpy {bpy.app.version_string}\n")
    print("| case | simulate s | write s | total s | F-Curves / keys | play ms/frame "
          "| cache MB | .blend MB |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        size = f"{r['file_mb']:.1f} | {r['blend_mb']:.2f}" if r.get("file_mb") else " | "
        print(f"| {r['case']} | {r['simulate_s']:.2f} | {r['write_s']:.2f} | "
              f"{r['total_s']:.2f} | {r['channels']} | {r['play_ms']:.1f} | {size} |")
    out = REPO / "out" / "bench_bake.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
