"""Blender's Cloth with collisions on the scenes of ``bench_collision.py``: ms per frame of 100
ropes x 100 points with self-collision and a 10k-triangle collider, next to our solver.

    python benchmarks/blender_cloth_collision.py [--quick] [--scenes terrain,sphere]
                                                 [--quality 20,5] [--no-ours] [--blender53]

The scenes are ``bench_collision``'s own arrays (``terrain()``, ``uv_sphere()``, the rope
layouts of ``ropes()``), computed once by the driver and handed to every worker, so both
solvers see identical geometry:

* terrain: the 4 m x 4 m height field of 10,082 triangles, 100 ropes (1 m, 100 points)
  dropped side by side 4 cm apart from z = 0.3;
* crossed: the same terrain, two crossed layers of 50 ropes 2 cm apart (z = 0.3 / 0.35), so
  the ropes land on each other (where self-collision matters);
* sphere: the closed UV sphere of 9,898 triangles (r = 0.5 m), 100 ropes 2 cm apart dropped
  from z = 0.55;
* in every scene a ground plane at z = -0.6 (a 20 m x 20 m quad with Collision physics).

Blender side (one fresh Blender process per row, ``--worker``; bpy 5.0.1 from ``.venv``, and
bpy 5.3 from ``.venv-5.3`` with ``--blender53``):

* The collider is one mesh object with Collision physics (``modifiers.new(type='COLLISION')``),
  Thickness Outer 0.001 m (Blender's minimum; see below), everything else default.
* The ropes are ONE mesh object with a Cloth modifier. An edges-only mesh (100 edge chains,
  as ``blender_builtin.py`` uses) simulates but does NOT collide: Cloth's object and self
  collisions are triangle-based, and a cloth without faces falls straight through the
  collider (the ``edges-only`` row checks this every run). So each rope is a zigzag strip:
  the same 100 points, alternately offset +-r sideways (a ribbon 2r = 10 mm wide), with the
  edges (i, i+1) and (i, i+2) and the 98 triangles (i, i+1, i+2): 10,000 vertices and 9,800
  triangles, as many particles as ours, each within r of our particle.
* Cloth settings: Blender's defaults (mass 0.3 kg per vertex, stiffness 15/15/5/0.5, air
  damping 1) except: collisions with objects on, Distance 0.005 m (``distance_min``), self
  collision on or off, Self Distance 0.005 m (``self_distance_min``), Quality (steps per
  frame) 20 to match our S = 20 at 24 fps, and Blender's default 5.
* Contact distance: Blender keeps a cloth vertex ``distance_min`` + the collider's Thickness
  Outer away from it (measured on a plane: 5 + 5 mm rests at 8.9 mm; with 5 + 1 mm the
  median clearance on the terrain is 5.8 mm at quality 5, 6.8-7.8 mm at quality 20), so the
  collider's Thickness Outer is at its minimum, 1 mm, to get near our r = 5 mm.

Measured (each row in its own process): the ropes are released at frame 1 (the cache's
start, the rest state); frame 2 is the first simulated step (it builds the solver, reported
apart, like ours, whose first step compiles and is not timed), then ``frames`` (48; ``--quick``
12) steps are timed, one ``scene.frame_set(f)`` each, in order, with an empty point cache
(a fresh file; ``is_baked`` is checked false and the positions must change from frame to
frame, so every frame is computed, not read back). ms/frame: mean over the timed steps,
"settled" the mean over their second half, and the max. Wall time, Blender's own threads (2
cores here).

Quality, from the evaluated vertex positions after every frame (outside the timed call),
the same for both solvers: the signed distance of every particle centre to the collider
(``mathutils.bvhtree`` nearest point, sign from the triangle's up / outward normal) and to
the ground plane, the smaller of the two; "lowest" is its minimum (mm) over the run; "below"
counts the particles that end (last frame) deeper than one radius under a surface
(distance < -r: through it), in brackets the worst frame. The terrain is an open sheet: a
rope sliding off its edge can get under it from the side without passing through, so a
particle under the terrain counts only if it crossed it from above inside its footprint
(the ones that came round the edge are counted apart, ``under_open_edge_last``). Stretch:
every edge's length over its rest length, mean and max over the last frame, and the max
over the run. CPU time per frame (the process's, all threads) is in the JSON too.

Ours (``--no-ours`` skips it): ``bench_collision``'s model on the same scenes (S = 20, one
thread), stepped the same way, same quality figures; the ms/frame figures of the doc come
from ``bench_collision.py`` itself, run right after.

Output: a Markdown table on stdout and ``out/blender_cloth_collision.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _cloth_quality import GROUND_Z, RADIUS, Quality, Surface, _timing  # noqa: E402
from _workers import bpy_version, run_worker  # noqa: E402

REPO = HERE.parent
OUT_JSON = REPO / "out" / "blender_cloth_collision.json"
VENV_50 = REPO / ".venv" / "bin" / "python"
VENV_53 = REPO / ".venv-5.3" / "bin" / "python"

FPS = 24
DISTANCE_MIN = 0.005  # Cloth > Collisions > Object Collisions > Distance
SELF_DISTANCE_MIN = 0.005  # Cloth > Collisions > Self Collisions > Distance
THICKNESS_OUTER = 0.001  # Collision > Softbody & Cloth > Thickness Outer (Blender's minimum)
SCENES = ("terrain", "crossed", "sphere")


# --------------------------------------------------------------------------------------
# scene arrays (driver side: needs bench_collision, i.e. the core and numba)
# --------------------------------------------------------------------------------------


def scene_arrays(layout: str, root: str) -> dict[str, np.ndarray]:
    sys.path.insert(0, str(Path(root) / "benchmarks"))
    import bench_collision as bc

    vertices, triangles = bc.uv_sphere() if layout == "sphere" else bc.terrain()
    model = bc.ropes(layout, False)
    x = np.asarray(model.particle_rest_x, dtype=np.float64).reshape(bc.ROPES, bc.POINTS, 3)
    return {"vertices": vertices, "triangles": triangles, "ropes": x}


# --------------------------------------------------------------------------------------
# Blender worker
# --------------------------------------------------------------------------------------


def zigzag(ropes: np.ndarray, width: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each rope's points alternately offset +-width/2 sideways (horizontal, across the rope),
    with edges (i, i+1), (i, i+2) and triangles (i, i+1, i+2)."""
    nr, npnt, _ = ropes.shape
    along = ropes[:, -1] - ropes[:, 0]
    side = np.cross([0.0, 0.0, 1.0], along)
    side /= np.linalg.norm(side, axis=1, keepdims=True)
    sign = np.where(np.arange(npnt) % 2 == 0, -1.0, 1.0)
    x = ropes + 0.5 * width * sign[None, :, None] * side[:, None, :]
    base = (np.arange(nr) * npnt)[:, None]
    i1, i2 = np.arange(npnt - 1), np.arange(npnt - 2)
    e1 = np.stack([base + i1, base + i1 + 1], -1).reshape(-1, 2)
    e2 = np.stack([base + i2, base + i2 + 2], -1).reshape(-1, 2)
    tris = np.stack([base + i2, base + i2 + 1, base + i2 + 2], -1).reshape(-1, 3)
    return x.reshape(-1, 3), np.concatenate([e1, e2]), tris


def _mesh_object(name: str, x: np.ndarray, edges: np.ndarray, faces: np.ndarray) -> Any:
    import bpy

    mesh = bpy.data.meshes.new(name)
    mesh.from_pydata(x.tolist(), edges.tolist(), faces.tolist())
    mesh.update()
    mesh.validate()
    obj = bpy.data.objects.new(name, mesh)
    bpy.context.scene.collection.objects.link(obj)
    return obj


def _collider(name: str, vertices: np.ndarray, triangles: np.ndarray) -> Any:
    obj = _mesh_object(name, vertices, np.zeros((0, 2), int), triangles)
    obj.modifiers.new("Collision", "COLLISION")
    obj.collision.thickness_outer = THICKNESS_OUTER
    return obj


def blender_worker(args: argparse.Namespace) -> dict[str, Any]:
    import bpy

    data = np.load(args.scene_file)
    ropes, vertices, triangles = data["ropes"], data["vertices"], data["triangles"]
    nr, npnt, _ = ropes.shape
    total = args.frames + 1  # frame 1: release (rest state), 2: first step, then the timed ones

    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = FPS, 1.0
    scene.frame_start, scene.frame_end = 1, total + 1
    scene.frame_set(1)

    _collider("Collider", vertices, triangles)
    g = 10.0
    ground = np.array([[-g, -g, GROUND_Z], [g, -g, GROUND_Z], [g, g, GROUND_Z], [-g, g, GROUND_Z]])
    _collider("Ground", ground, np.array([[0, 1, 2], [0, 2, 3]]))

    if args.mesh == "edges":
        x = ropes.reshape(-1, 3)
        base = (np.arange(nr) * npnt)[:, None]
        edges = np.stack([base + np.arange(npnt - 1), base + np.arange(1, npnt)], -1)
        edges, tris = edges.reshape(-1, 2), np.zeros((0, 3), int)
    else:
        x, edges, tris = zigzag(ropes, 2 * RADIUS)
    obj = _mesh_object("Ropes", x, edges, tris)
    mod = obj.modifiers.new("Cloth", "CLOTH")
    cs, cc = mod.settings, mod.collision_settings
    cs.quality = args.quality
    cc.use_collision = True
    cc.distance_min = DISTANCE_MIN
    cc.use_self_collision = args.self_collision
    cc.self_distance_min = SELF_DISTANCE_MIN
    cache = mod.point_cache
    cache.frame_start, cache.frame_end = 1, total + 1
    if cache.is_baked:
        raise RuntimeError("point cache is baked")

    surface = Surface(vertices, triangles, closed=args.scene == "sphere")
    quality = Quality(surface, edges, x)
    buf = np.empty(len(x) * 3, dtype=np.float32)
    prev = x.copy()
    ms: list[float] = []
    cpu: list[float] = []  # process CPU time, all threads
    moved: list[float] = []
    first_ms = 0.0
    for f in range(2, total + 2):
        c0, t0 = time.process_time(), time.perf_counter()
        scene.frame_set(f)
        dt = (time.perf_counter() - t0) * 1e3
        if f == 2:
            first_ms = dt
        else:
            ms.append(dt)
            cpu.append((time.process_time() - c0) * 1e3)
        ev = obj.evaluated_get(bpy.context.evaluated_depsgraph_get()).data
        ev.attributes["position"].data.foreach_get("vector", buf)
        p = buf.reshape(-1, 3).astype(np.float64)
        if not np.all(np.isfinite(p)):
            raise RuntimeError(f"non-finite positions at frame {f}")
        moved.append(float(np.linalg.norm(p - prev, axis=1).max()))
        prev = p
        quality.frame(p)
    if cache.is_baked:
        raise RuntimeError("point cache became baked")
    frozen = sum(1 for m in moved[: len(moved) // 4 or 1] if m == 0.0)
    if frozen:
        raise RuntimeError(f"positions did not change in {frozen} early frames: cache read back?")

    settings = {
        "quality": cs.quality,
        "mass": round(cs.mass, 4),
        "air_damping": round(cs.air_damping, 4),
        "tension_stiffness": round(cs.tension_stiffness, 4),
        "bending_stiffness": round(cs.bending_stiffness, 4),
        "use_collision": cc.use_collision,
        "distance_min": round(cc.distance_min, 6),
        "collision_quality": cc.collision_quality,
        "use_self_collision": cc.use_self_collision,
        "self_distance_min": round(cc.self_distance_min, 6),
        "self_friction": round(cc.self_friction, 4),
        "friction": round(cc.friction, 4),
        "collider_thickness_outer": THICKNESS_OUTER,
    }
    return {
        "solver": "blender_cloth",
        "blender": bpy.app.version_string,
        "python": platform.python_version(),
        "scene": args.scene,
        "mesh": args.mesh,
        "vertices": len(x),
        "cloth_triangles": len(tris),
        "collider_triangles": len(triangles),
        "self_collision": args.self_collision,
        "quality": args.quality,
        "frames": args.frames,
        "ms_first_step": first_ms,
        **_timing(ms),
        "cpu_ms_mean": float(np.mean(cpu)),
        "max_move_m_per_frame": [round(m, 5) for m in moved],
        **quality.result(),
        "settings": settings,
    }


# --------------------------------------------------------------------------------------
# our solver, same scenes and figures
# --------------------------------------------------------------------------------------


def ours_worker(args: argparse.Namespace) -> dict[str, Any]:
    import bpy  # noqa: F401  (mathutils for the quality figures)

    sys.path.insert(0, str(Path(args.ours_root) / "benchmarks"))
    import bench_collision as bc

    from xpbd_addon.core import step
    from xpbd_addon.core.collision import Collider, Plane

    vertices, triangles = bc.uv_sphere() if args.scene == "sphere" else bc.terrain()
    colliders = [Collider(vertices, triangles), Plane((0, 0, GROUND_Z))]
    model = bc.ropes(args.scene, args.self_collision)
    state = model.state()
    x0 = np.asarray(model.particle_rest_x, dtype=np.float64)
    edges = np.asarray(model.edge_index)
    quality = Quality(Surface(vertices, triangles, closed=args.scene == "sphere"), edges, x0)
    t0 = time.perf_counter()
    step(model, state, bc.DT, bc.SUBSTEPS, colliders=colliders)  # first step: compiles
    first_ms = (time.perf_counter() - t0) * 1e3
    quality.frame(np.asarray(state.x, dtype=np.float64))
    ms: list[float] = []
    cpu: list[float] = []
    for _ in range(args.frames):
        c0, t0 = time.process_time(), time.perf_counter()
        step(model, state, bc.DT, bc.SUBSTEPS, colliders=colliders)
        ms.append((time.perf_counter() - t0) * 1e3)
        cpu.append((time.process_time() - c0) * 1e3)
        quality.frame(np.asarray(state.x, dtype=np.float64))
    return {
        "solver": "ours",
        "scene": args.scene,
        "vertices": model.particle_count,
        "collider_triangles": len(triangles),
        "self_collision": args.self_collision,
        "substeps": bc.SUBSTEPS,
        "frames": args.frames,
        "ms_first_step": first_ms,
        **_timing(ms),
        "cpu_ms_mean": float(np.mean(cpu)),
        "core_root": str(Path(bc.ROOT)),
        **quality.result(),
    }


# --------------------------------------------------------------------------------------
# driver
# --------------------------------------------------------------------------------------


def _run(python: Path, extra: list[str], label: str) -> dict[str, Any]:
    print(f"... {label}", file=sys.stderr, flush=True)
    res, tail = run_worker([str(python), str(Path(__file__).resolve()), *extra], tail_lines=3)
    if res is None:
        return {"label": label, "error": tail or "no result"}
    res["process_wall_s"] = round(res["process_wall_s"], 1)
    res["load_average_after"] = [round(v, 2) for v in os.getloadavg()]
    return res


def _row(r: dict[str, Any]) -> str:
    if "error" in r:
        return f"| {r['label']} | failed: {r['error']} |" + " |" * 10
    if r["solver"] == "ours":
        name = f"ours, S = {r['substeps']}"
    else:
        name = f"Cloth {r['blender']}, quality {r['quality']}"
        if r["mesh"] == "edges":
            name += ", edges-only mesh"
    selfc = "on" if r["self_collision"] else "off"
    return (
        f"| {r['scene']} | {name} | {selfc} | {r['ms_mean']:.0f} | {r['ms_settled']:.0f} "
        f"| {r['ms_median']:.0f} | {r['ms_max']:.0f} | {r['ms_first_step']:.0f} "
        f"| {r['lowest_mm']:.1f} "
        f"| {r['below_last']} ({r['below_max']}) | {r['stretch_mean_pct_last']:.2f} "
        f"| {r['stretch_max_pct_last']:.1f} ({r['stretch_max_pct']:.1f}) |"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="12 timed frames instead of 48")
    ap.add_argument("--frames", type=int, help="timed frames (default 48, --quick 12)")
    ap.add_argument("--scenes", default=",".join(SCENES), help="comma-separated: terrain,...")
    ap.add_argument("--quality", default="20,5", help="Cloth quality values (default 20,5)")
    ap.add_argument("--no-ours", action="store_true", help="skip our solver's rows")
    ap.add_argument("--blender53", action="store_true", help="also bpy 5.3 (.venv-5.3)")
    ap.add_argument(
        "--ours-root",
        default=str(REPO),
        help="checkout whose core and bench_collision our rows use (default: this one; e.g. "
        "a `git archive HEAD` snapshot while the working tree is being edited)",
    )
    ap.add_argument("--json", default=str(OUT_JSON), help="where to write the JSON")
    ap.add_argument("--worker", choices=["blender", "ours"], help=argparse.SUPPRESS)
    ap.add_argument("--scene", help=argparse.SUPPRESS)
    ap.add_argument("--scene-file", help=argparse.SUPPRESS)
    ap.add_argument("--self-collision", type=int, default=1, help=argparse.SUPPRESS)
    ap.add_argument("--mesh", default="zigzag", help=argparse.SUPPRESS)
    ap.add_argument("--qual", type=int, default=20, dest="quality_one", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    args.frames = args.frames or (12 if args.quick else 48)

    if args.worker:
        args.self_collision = bool(args.self_collision)
        if args.worker == "blender":
            args.quality = args.quality_one
            res = blender_worker(args)
        else:
            res = ours_worker(args)
        print("RESULT " + json.dumps(res), flush=True)
        return 0

    scenes = [s.strip() for s in args.scenes.split(",") if s.strip()]
    qualities = [int(q) for q in args.quality.split(",") if q.strip()]
    pythons = {"5.0": VENV_50}
    if args.blender53:
        pythons["5.3"] = VENV_53
    pythons = {k: p for k, p in pythons.items() if bpy_version(p) == k}
    load_start = [round(v, 2) for v in os.getloadavg()]
    rows: list[dict[str, Any]] = []
    t_start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for scene in scenes:
            path = Path(tmp) / f"{scene}.npz"
            np.savez(path, **scene_arrays(scene, args.ours_root))
            common = ["--scene", scene, "--scene-file", str(path), "--frames", str(args.frames)]
            if not args.no_ours:
                for sc in (1, 0):
                    extra = ["--self-collision", str(sc), "--ours-root", args.ours_root]
                    rows.append(_run(VENV_50, ["--worker", "ours", *common, *extra],
                                     f"ours {scene} self={sc}"))
            for ver, py in pythons.items():
                for q in qualities:
                    for sc in (1, 0):
                        rows.append(_run(py, ["--worker", "blender", *common, "--qual", str(q),
                                              "--self-collision", str(sc)],
                                         f"cloth {ver} {scene} quality={q} self={sc}"))
            if scene == scenes[0]:  # the check that an edges-only cloth does not collide
                rows.append(_run(VENV_50, ["--worker", "blender", *common, "--qual", "5",
                                           "--self-collision", "0", "--mesh", "edges"],
                                 f"cloth 5.0 {scene} edges-only mesh"))

    print(f"\n### 100 ropes x 100 points (r = {RADIUS * 1e3:g} mm), 10k-triangle collider + ground "
          f"plane, {args.frames} timed frames at {FPS} fps from release\n")
    print("| scene | solver | self-collision | ms/frame | settled | median | max | first step "
          "| lowest (mm) | below -r: end (worst) | mean stretch % | max stretch %: end (run) |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(_row(r))
    print(f"\nlowest: min signed distance of a particle centre to the collider or the ground "
          f"over the run; below -r: particles deeper than r = {RADIUS * 1e3:g} mm under the "
          "surface at the last frame (worst frame). Stretch: edge length / rest - 1. Load "
          f"average {load_start} at the start, {[round(v, 2) for v in os.getloadavg()]} at "
          f"the end; {time.perf_counter() - t_start:.0f} s in all.")

    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({
        "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "load_average_start": load_start,
        "load_average_end": [round(v, 2) for v in os.getloadavg()],
        "quick": args.quick,
        "frames": args.frames,
        "radius": RADIUS,
        "results": rows,
    }, indent=2) + "\n")
    print(f"wrote {out}", file=sys.stderr)
    return 1 if any("error" in r for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
