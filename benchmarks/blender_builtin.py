"""Blender's own rope-capable solvers on the benchmark ropes: reference figures for ours.

    python benchmarks/blender_builtin.py [--quick]            100 ropes x 100 points
    python benchmarks/blender_builtin.py --rope-stretch-100   one 100-point rope (issue 6)
    python benchmarks/blender_builtin.py --setup              create .venv-5.3 (bpy 5.3)

The script itself needs no ``bpy``: every solver runs in a fresh Blender process of its own
(``--worker``, an internal flag) under the interpreter that has the right ``bpy`` wheel:

* bpy 5.0.1 (Python 3.11, the project's ``.venv``): (a) Soft Body, (b) Cloth, each a physics
  modifier on one edge-only mesh holding every rope as a disconnected chain;
* bpy 5.3 (Python 3.13, ``.venv-5.3``, made by ``--setup``): the XPBD node-group assets of
  Blender's essentials library, (c) 'Cloth Dynamics (Experimental)' in a Geometry Nodes
  modifier on the same edge mesh and (d) 'Hair Dynamics' on a hair ``Curves`` object with one
  poly curve per rope.

The ropes (``_ropes_bpy.py``): each 2 m long, its first point pinned (vertex group ``pin``:
weight 1 there, 0 elsewhere; for hair, the curve root, which Hair Dynamics keeps on its input
position when there is no surface); 24 fps, scene gravity -9.81 m/s^2, frames 1..N stepped in
order with ``scene.frame_set``. Two starts, both run by default (``--start``):

* ``hanging``: straight down at rest length (tops on a 10 x 10 grid 0.1 m apart): the static
  stretch under the rope's own weight, plus the small bounce of settling into it;
* ``horizontal``: laid along +X and released (tops in one row along Y): a swing, the harder
  case for stretch (the peak is in "max stretch").

Settings (everything else is Blender's default, recorded per row in the JSON):

* Soft Body: Goal on with vertex group ``pin`` and Default goal 1.0 (Blender scales the
  group's weights by it; at its default 0.7 the top point is not held and the ropes fall),
  Edges on (pull/push 0.5, damping 0.5, bend 0), auto step 10..300, error limit 0.1.
* Cloth: Pin Group ``pin``; quality 5, mass 0.3 kg, stiffness 15/15/5/0.5, collisions as
  default (no self collision; there is nothing else to collide with).
* Cloth Dynamics: Pin Group = attribute ``pin`` (the vertex group), Substeps 20 (asset default
  5), Constraint Steps 15 (its default), Stretchiness 0, Mass 1, Linear Damping 1.
* Hair Dynamics: Mode 'Physics (Experimental)' (the default, 'Animation', does not simulate),
  Substeps 20 (asset default 10), Constraint Steps 15 (its default), Stretchiness 0,
  Bendiness 0.5 (it keeps the rest shape's bends: the horizontal rope's rest shape is
  straight), Mass 0.01, Linear/Angular damping 3.

Measured per solver, in one run:

* ms/frame: wall time of ``scene.frame_set(f)`` (the depsgraph evaluation, Blender's own
  threading, i.e. both cores here), median over frames ``WARMUP + 1 .. N``; the first frame,
  which builds the solver, is reported apart.
* stretch: each rope's polyline length ``L`` from the evaluated vertex positions (read with
  ``foreach_get`` on the evaluated mesh / curves, outside the timed call), ``L / L0 - 1``; the
  mean is over all ropes and the frames after the warm-up (for ``--rope-stretch-100``, over the
  settled second half of the run), the max over all ropes and frames.
* pin drift: the largest distance of a pinned point from its rest position, which tells
  whether pinning worked ("pinned" = under 1 mm).

Timing caveat: the wall time counts other load on the machine (two shared cores here), so the
table also gives the fastest frame ("min ms") and the process's CPU time; compare figures from
one quiet run. The default run takes about 2.5 minutes here (4.5 under heavy load);
``--quick`` about 20 s. Stretch figures are deterministic: they repeat exactly run to run.

Output: a Markdown table on stdout, and ``out/blender_builtin.json`` (one key per mode, so both
modes' figures live side by side).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _workers import bpy_version, run_worker  # noqa: E402

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
OUT_JSON = REPO / "out" / "blender_builtin.json"
VENV_50 = REPO / ".venv" / "bin" / "python"
VENV_53 = REPO / ".venv-5.3" / "bin" / "python"
PY313_CANDIDATES = ("/root/.pyenv/versions/3.13.0/bin/python", "python3.13")

FPS = 24
LENGTH = 2.0  # m, every rope
WARMUP = 3  # frames left out of the timing median (frame 1 builds the solver)

# case -> (label, Blender major.minor it needs)
CASES: dict[str, tuple[str, str]] = {
    "soft_body": ("Soft Body (modifier, edge mesh)", "5.0"),
    "cloth": ("Cloth (modifier, edge mesh)", "5.0"),
    "cloth_dynamics": ("Cloth Dynamics (Experimental), GN asset, edge mesh", "5.3"),
    "hair_dynamics": ("Hair Dynamics, GN asset, hair curves", "5.3"),
}
MAIN_CASES = ["soft_body", "cloth", "cloth_dynamics", "hair_dynamics"]
ROPE100_CASES = ["cloth_dynamics", "hair_dynamics"]


# --------------------------------------------------------------------------------------
# worker: runs inside bpy
# --------------------------------------------------------------------------------------


def worker(args: argparse.Namespace) -> dict[str, Any]:
    import _builtin_solvers as solvers
    import _ropes_bpy as ropes
    import bpy
    import numpy as np

    case = args.worker
    need = CASES[case][1]
    have = "{}.{}".format(*bpy.app.version[:2])
    if have != need:
        raise SystemExit(f"{case} needs bpy {need}, this interpreter has {have}")

    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    scene.render.fps = FPS
    scene.render.fps_base = 1.0
    scene.frame_start = 1
    scene.frame_end = args.frames
    scene.frame_set(1)

    nr, npnt = args.ropes, args.points
    layout = {"length": LENGTH, "horizontal": args.start == "horizontal"}
    if case == "hair_dynamics":
        obj = ropes.make_hair_curves_object("Ropes", nr, npnt, **layout)
    else:
        obj = ropes.make_edge_mesh_object("Ropes", nr, npnt, **layout)
    if case == "soft_body":
        settings = solvers.setup_soft_body(obj, args.frames)
    elif case == "cloth":
        settings = solvers.setup_cloth(obj, args.frames)
    elif case == "cloth_dynamics":
        settings = solvers.setup_cloth_dynamics(obj, args.substeps, args.constraint_steps)
    else:
        settings = solvers.setup_hair_dynamics(obj, args.substeps, args.constraint_steps)

    rest = ropes.rope_positions(nr, npnt, **layout).reshape(-1, 3).astype(np.float64)
    pins = np.arange(0, nr * npnt, npnt)
    rest_len = ropes.rope_lengths(rest.ravel(), nr, npnt)
    buf = np.empty(nr * npnt * 3, dtype=np.float32)

    ms: list[float] = []
    cpu_ms: list[float] = []  # process CPU time (all threads): less sensitive to other load
    stretch: list[np.ndarray] = []  # per frame, per rope
    pin_drift = 0.0
    for f in range(1, args.frames + 1):
        c0 = time.process_time()
        t0 = time.perf_counter()
        scene.frame_set(f)
        ms.append((time.perf_counter() - t0) * 1e3)
        cpu_ms.append((time.process_time() - c0) * 1e3)
        dg = bpy.context.evaluated_depsgraph_get()
        data = obj.evaluated_get(dg).data
        pos_attr = data.attributes["position"]
        if len(pos_attr.data) != nr * npnt:
            raise RuntimeError(f"evaluated geometry has {len(pos_attr.data)} points")
        pos_attr.data.foreach_get("vector", buf)
        if not np.all(np.isfinite(buf)):
            raise RuntimeError(f"non-finite positions at frame {f}")
        stretch.append(ropes.rope_lengths(buf, nr, npnt) / rest_len - 1.0)
        p = buf.reshape(-1, 3)[pins].astype(np.float64)
        pin_drift = max(pin_drift, float(np.linalg.norm(p - rest[pins], axis=1).max()))

    s = np.array(stretch)  # (frames, ropes)
    first = args.settle_from if args.settle_from else WARMUP + 1
    timed = ms[WARMUP:]
    tail = buf.reshape(nr, npnt, 3)[:, -1, :].astype(np.float64)
    return {
        "case": case,
        "solver": CASES[case][0],
        "start": args.start,
        "blender": bpy.app.version_string,
        "python": platform.python_version(),
        "ropes": nr,
        "points": npnt,
        "frames": args.frames,
        "fps": FPS,
        "ms_per_frame_median": statistics.median(timed),
        "ms_per_frame_mean": statistics.fmean(timed),
        "ms_per_frame_min": min(timed),
        "cpu_ms_per_frame_median": statistics.median(cpu_ms[WARMUP:]),
        "ms_first_frame": ms[0] if ms else None,
        "ms_per_frame": [round(x, 2) for x in ms],
        "stretch_mean_frames": [first, args.frames],
        "stretch_mean_pct": float(s[first - 1 :].mean() * 100.0),
        "stretch_max_pct": float(s.max() * 100.0),
        "stretch_last_frame_pct": float(s[-1].mean() * 100.0),
        "pin_drift_m": pin_drift,
        "pinned": pin_drift < 1e-3,
        "tail_z_last_frame_mean": float(tail[:, 2].mean()),
        "settings": settings,
    }


# --------------------------------------------------------------------------------------
# driver: plain Python, starts one worker process per solver
# --------------------------------------------------------------------------------------


def _interpreters(args: argparse.Namespace) -> dict[str, str]:
    found: dict[str, str] = {}
    for cand in [args.python50, args.python53, sys.executable, str(VENV_50), str(VENV_53)]:
        if not cand or cand in found.values():
            continue
        ver = bpy_version(cand)
        if ver and ver not in found:
            found[ver] = cand
    return found


def _run_worker(
    python: str, case: str, start: str, args: argparse.Namespace, extra: list[str]
) -> Any:
    cmd = [
        python,
        str(Path(__file__).resolve()),
        "--worker",
        case,
        "--start",
        start,
        "--frames",
        str(args.frames),
        "--ropes",
        str(args.ropes),
        "--points",
        str(args.points),
        "--substeps",
        str(args.substeps),
        *extra,
    ]
    res, tail = run_worker(cmd)
    if res is not None:
        return res
    return {
        "case": case,
        "solver": CASES[case][0],
        "start": start,
        "error": tail or "no result",
    }


def _table(rows: list[dict[str, Any]]) -> str:
    head = (
        "| solver | Blender | start | ms/frame | min ms | CPU ms | mean stretch % "
        "| max stretch % | pinned (drift) |\n|---|---|---|---:|---:|---:|---:|---:|---|"
    )
    lines = [head]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['solver']} | - | {r['start']} | failed: {r['error']} | | | | | |")
            continue
        name = r["solver"]
        st = r["settings"]
        if "Substeps" in st:
            name += f" (S={st['Substeps']}, {st['Constraint Steps']} constraint steps)"
        drift = f"{r['pin_drift_m'] * 1e3:.2g} mm"
        pin = f"yes ({drift})" if r["pinned"] else f"NO ({drift})"
        lines.append(
            f"| {name} | {r['blender']} | {r['start']} "
            f"| {r['ms_per_frame_median']:.1f} | {r['ms_per_frame_min']:.1f} "
            f"| {r['cpu_ms_per_frame_median']:.1f} | {r['stretch_mean_pct']:.2f} "
            f"| {r['stretch_max_pct']:.2f} | {pin} |"
        )
    return "\n".join(lines)


def setup_53(args: argparse.Namespace) -> int:
    """Create .venv-5.3 with bpy 5.3 (Python 3.13), the interpreter the GN assets need."""
    py = args.python313 or next(
        (c for c in PY313_CANDIDATES if os.path.exists(c) or shutil.which(c)), None
    )
    if not py:
        print("no Python 3.13 found: pass --python313 PATH", file=sys.stderr)
        return 2
    venv = VENV_53.parent.parent
    if not VENV_53.exists():
        subprocess.run([py, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(VENV_53), "-m", "pip", "install", "-q", "bpy==5.3.*"], check=True)
    print(f"{venv}: bpy {bpy_version(VENV_53)}")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="short run (fewer frames)")
    ap.add_argument(
        "--rope-stretch-100",
        action="store_true",
        help="one 2 m rope of 100 points (hanging at rest, and released from horizontal): "
        "stretch of the 5.3 XPBD assets",
    )
    ap.add_argument("--only", help="comma-separated cases: " + ",".join(CASES))
    ap.add_argument("--frames", type=int, help="frames to step (default 120; --quick 24)")
    ap.add_argument("--ropes", type=int, help="ropes (default 100)")
    ap.add_argument("--points", type=int, default=100, help="points per rope (default 100)")
    ap.add_argument("--substeps", type=int, default=20, help="substeps of the 5.3 assets")
    ap.add_argument("--constraint-steps", type=int, help="5.3 assets (default: theirs, 15)")
    ap.add_argument(
        "--start",
        choices=["hanging", "horizontal", "both"],
        default="both",
        help="ropes hanging straight down at rest, released from horizontal, or both (default)",
    )
    ap.add_argument("--python50", help="interpreter with bpy 5.0 (default .venv)")
    ap.add_argument("--python53", help="interpreter with bpy 5.3 (default .venv-5.3)")
    ap.add_argument("--setup", action="store_true", help="create .venv-5.3 (bpy 5.3) and exit")
    ap.add_argument("--python313", help="Python 3.13 for --setup")
    ap.add_argument("--json", default=str(OUT_JSON), help="where to write the JSON")
    ap.add_argument("--worker", choices=list(CASES), help=argparse.SUPPRESS)
    ap.add_argument("--settle-from", type=int, default=0, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.worker:
        res = worker(args)
        print("RESULT " + json.dumps(res), flush=True)
        return 0
    if args.setup:
        return setup_53(args)

    mode = "rope_stretch_100" if args.rope_stretch_100 else "ropes_100x100"
    if args.rope_stretch_100:
        args.ropes = args.ropes or 1
        args.frames = args.frames or (72 if args.quick else 240)  # 3 s / 10 s
        settle = args.frames // 2 + 1  # mean over the settled second half (5 s by default)
        cases = ROPE100_CASES
    else:
        args.ropes = args.ropes or 100
        args.frames = args.frames or (24 if args.quick else 120)  # 1 s / 5 s
        settle = 0
        cases = MAIN_CASES
    if args.only:
        cases = [c.strip() for c in args.only.split(",") if c.strip()]
        bad = [c for c in cases if c not in CASES]
        if bad:
            ap.error(f"unknown case(s) {bad}; choose from {list(CASES)}")
    if args.frames <= WARMUP + 1:
        ap.error(f"--frames must be > {WARMUP + 1}")

    interp = _interpreters(args)
    extra = ["--settle-from", str(settle)] if settle else []
    if args.constraint_steps:
        extra += ["--constraint-steps", str(args.constraint_steps)]
    rows: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    starts = ["hanging", "horizontal"] if args.start == "both" else [args.start]
    for start in starts:
        for case in cases:
            need = CASES[case][1]
            if need not in interp:
                hint = " (run with --setup first)" if need == "5.3" else ""
                rows.append(
                    {
                        "case": case,
                        "solver": CASES[case][0],
                        "start": start,
                        "error": f"no bpy {need}{hint}",
                    }
                )
                continue
            print(
                f"... {case} {start} (bpy {need}, {args.ropes} x {args.points}, "
                f"{args.frames} frames)",
                file=sys.stderr,
                flush=True,
            )
            rows.append(_run_worker(interp[need], case, start, args, extra))

    print(
        f"\n### Blender built-in solvers: {args.ropes} rope(s) x {args.points} points, "
        f"{LENGTH:g} m, top pinned, {FPS} fps, frames 1..{args.frames}\n"
    )
    print(_table(rows))
    print(
        f"\nms/frame: median wall time of scene.frame_set over frames {WARMUP + 1}.."
        f"{args.frames} (min ms: the fastest of them; CPU ms: the process's CPU time, all "
        "threads, median). "
        "stretch: rope length / rest length - 1 from the evaluated positions; mean over "
        + (
            f"frames {settle}..{args.frames} (settled)"
            if settle
            else f"frames {WARMUP + 1}..{args.frames}"
        )
        + ", max over all frames and ropes."
        f" Total {time.perf_counter() - t0:.0f} s."
    )

    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    doc: dict[str, Any] = {}
    if out.exists():
        try:
            doc = json.loads(out.read_text())
        except ValueError:
            doc = {}
    doc[mode] = {
        "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "load_average_at_end": list(os.getloadavg()),
        "quick": args.quick,
        "frames": args.frames,
        "ropes": args.ropes,
        "points": args.points,
        "length_m": LENGTH,
        "warmup_frames": WARMUP,
        "results": rows,
    }
    out.write_text(json.dumps(doc, indent=2) + "\n")
    print(f"wrote {out}", file=sys.stderr)
    return 1 if any("error" in r for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
