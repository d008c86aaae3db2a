"""The solver core, headless: ns per particle-substep and ms per frame at S = 20.

Scenes: 1 rope x 12 points, 10 x 100, 100 x 100, 1000 x 100 (2 m ropes, first point pinned,
released from horizontal and timed while they swing). Columns: the public ``step`` with the
default direct solve, the direct solve with bending stiffness, ``step`` with
``solver="sweep"`` (plain XPBD; lanes, bit-identical to the
sequential sweep, which is checked here), the sequential sweep alone, the sweep spread over
threads, and a plain-numpy implementation of the same sweep (vectorised across ropes, the
chain walked in order, so it is the same Gauss-Seidel update). Then the cost of the direct solve
relative to the sweep, per particle-substep: frames of the two alternate in one process (``step``
as a user calls it, threads where ``step`` uses them), the ratio of each pair of frames, median and
range, so that load from other processes hits both alike. Next to each time, the ropes'
behaviour over their first 2 s from release: the peak kinetic energy over what the fall can give
(a rope that behaves stays below 1) and the stretch. Then cold compile and cached load
of the kernels, each in a fresh process.

    python -m benchmarks.bench_core [--quick]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from xpbd_addon.core import Model, step  # noqa: E402
from xpbd_addon.core.solver import _advance, step_sequential  # noqa: E402

SUBSTEPS = 20
DT = 1.0 / 24.0
SCENES = [(1, 12), (10, 100), (100, 100), (1000, 100)]


def ropes(count: int, points: int, *, model_class: type = Model, **options) -> Model:
    """``count`` 2 m ropes of ``points`` 1 kg points along x, first points pinned, alpha
    1e-7 m/N; ``model_class``: the core's Model, or another commit's (``bench_step_ab``)."""
    x = np.zeros((count, points, 3))
    x[:, :, 0] = np.linspace(0.0, 2.0, points)
    x[:, :, 1] = 0.05 * np.arange(count)[:, None]
    base = (np.arange(count) * points)[:, None]
    edges = np.stack([base + np.arange(points - 1), base + np.arange(1, points)], -1)
    inv_mass = np.ones((count, points))
    inv_mass[:, 0] = 0.0
    return model_class(x.reshape(-1, 3), edges.reshape(-1, 2), inv_mass.reshape(-1), 1e-7,
                       **options)


def numpy_sweep(x, v, w, rest, alpha, gravity, dt, substeps):
    """The plain XPBD sweep in numpy: x, v (R, n, 3), w (R, n), rest/alpha (R, n - 1)."""
    h = dt / substeps
    free = (w > 0.0)[..., None]
    for _ in range(substeps):
        v += h * gravity * free
        x_prev = x.copy()
        x += h * v
        for p in range(x.shape[1] - 1):
            d = x[:, p] - x[:, p + 1]
            length = np.sqrt((d * d).sum(-1))
            denominator = (w[:, p] + w[:, p + 1] + alpha[:, p] / h**2) * length
            scale = np.where(denominator > 0, -(length - rest[:, p]) / np.where(
                denominator > 0, denominator, 1.0), 0.0)[:, None] * d
            x[:, p] += w[:, p, None] * scale
            x[:, p + 1] -= w[:, p + 1, None] * scale
        v[:] = np.where(free, (x - x_prev) / h, v)


def time_frames(run, frames: int) -> float:
    """Median seconds per frame over ``frames`` frames (after one warm-up frame)."""
    run()
    samples = []
    for _ in range(frames):
        start = time.perf_counter()
        run()
        samples.append(time.perf_counter() - start)
    return float(np.median(samples))


def behaviour(model: Model, seconds: float = 2.0) -> tuple[float, float]:
    """(peak kinetic energy / what the fall can give, peak stretch of the ropes' total
    length) over ``seconds`` from release, with ``step`` as timed. What the fall can give:
    each point dropping by its distance from the rope's pin, sum m_i g r_i (m g L / 2 for
    many points; 6 % more for 12)."""
    state = model.state()
    w = model.particle_inv_mass
    mass = np.divide(1.0, w, out=np.zeros_like(w), where=w > 0.0)
    available = 9.81 * float(np.sum(mass * model.particle_rest_x[:, 0]))
    rest = model.edge_rest_length.sum()
    a, b = model.edge_index[:, 0], model.edge_index[:, 1]
    peak = stretch = 0.0
    for _ in range(int(seconds / DT)):
        step(model, state, DT, SUBSTEPS)
        peak = max(peak, 0.5 * float(np.sum(mass[:, None] * state.v ** 2)))
        length = np.linalg.norm(state.x[a] - state.x[b], axis=1).sum()
        stretch = max(stretch, float(length / rest - 1.0))
    return peak / available, stretch


def paired_ratio(run_a, run_b, pairs: int) -> tuple[float, float, float]:
    """Median, min and max over ``pairs`` of time(run_a) / time(run_b), the two alternating
    (after one warm-up call of each)."""
    run_a()
    run_b()
    ratios = []
    for _ in range(pairs):
        start = time.perf_counter()
        run_a()
        middle = time.perf_counter()
        run_b()
        ratios.append((middle - start) / (time.perf_counter() - middle))
    return float(np.median(ratios)), float(min(ratios)), float(max(ratios))


def measure_scene(count: int, points: int, quick: bool) -> dict:
    frames = max(3, int((5 if quick else 30) * 1e4 / (count * points)))
    frames = min(frames, 200)
    work = count * points * SUBSTEPS
    row: dict = {"scene": f"{count} x {points}", "particles": count * points}

    def record(name: str, seconds: float) -> None:
        row[name + "_ms"] = seconds * 1e3
        row[name + "_ns"] = seconds / work * 1e9

    bending = {"bending_compliance": 1e-3}
    runs = {}
    for name, options in (("direct", {}), ("bending", bending), ("sweep", {"solver": "sweep"})):
        model = ropes(count, points, **options)
        state = model.state()
        runs[name] = lambda m=model, s=state: step(m, s, DT, SUBSTEPS)
        record(name, time_frames(runs[name], frames))
        row[name + "_energy"], row[name + "_stretch"] = behaviour(model)
    pairs = max(5, min(frames, 60))
    row["ratio"] = paired_ratio(runs["direct"], runs["sweep"], pairs)
    row["ratio_bending"] = paired_ratio(runs["bending"], runs["sweep"], pairs)
    sweep = ropes(count, points, solver="sweep")
    state = sweep.state()
    record("sequential", time_frames(lambda: step_sequential(sweep, state, DT, SUBSTEPS),
                                     max(3, frames // 5)))
    if sweep.plan.lanes is not None:
        threaded = sweep.state()
        record("threads", time_frames(
            lambda: _advance(sweep, threaded, DT, SUBSTEPS, (0, 0, -9.81), None, sweep.plan,
                             parallel=True), frames))
    # Same update, same results: lanes against the sequential sweep, numpy against both.
    a, b = sweep.state(), sweep.state()
    for _ in range(3):
        step(sweep, a, DT, SUBSTEPS)
        step_sequential(sweep, b, DT, SUBSTEPS)
    row["lanes_bit_identical"] = bool(np.array_equal(a.x, b.x) and np.array_equal(a.v, b.v))
    x = sweep.particle_rest_x.reshape(count, points, 3).copy()
    v = np.zeros_like(x)
    w = sweep.particle_inv_mass.reshape(count, points)
    rest = sweep.edge_rest_length.reshape(count, points - 1)
    alpha = sweep.edge_compliance.reshape(count, points - 1)
    g = np.array([0.0, 0.0, -9.81])
    for _ in range(3):
        numpy_sweep(x, v, w, rest, alpha, g, DT, SUBSTEPS)
    row["numpy_matches"] = bool(np.allclose(x.reshape(-1, 3), b.x, atol=1e-9))
    record("numpy", time_frames(lambda: numpy_sweep(x, v, w, rest, alpha, g, DT, SUBSTEPS),
                                max(2, frames // 20)))
    return row


COMPILE_PROBE = r"""
import sys, time
sys.path.insert(0, sys.argv[1])
start = time.perf_counter()
from xpbd_addon.core import Model, step
import numpy as np
for solver in ("direct", "sweep"):
    for ropes in (1, 16):  # the sequential and the lane kernels
        x = np.zeros((ropes * 3, 3)); x[:, 0] = np.arange(ropes * 3)
        e = [(3 * r + i, 3 * r + i + 1) for r in range(ropes) for i in range(2)]
        m = Model(x, e, np.ones(ropes * 3), 0.0, solver=solver)
        step(m, m.state(), 1 / 24, 2)
print(time.perf_counter() - start)
"""


def compile_times() -> dict:
    """First step in a fresh process with an empty cache (cold) and again (cached)."""
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        run = [sys.executable, "-c", COMPILE_PROBE, str(ROOT)]
        cold = float(subprocess.run(run, env=env, capture_output=True, text=True,
                                    check=True).stdout)
        cached = float(subprocess.run(run, env=env, capture_output=True, text=True,
                                      check=True).stdout)
    return {"cold_s": cold, "cached_s": cached}


def main(argv: list[str]) -> int:
    quick = "--quick" in argv
    rows = [measure_scene(c, p, quick) for c, p in SCENES]
    compile_info = compile_times()
    print(f"\nCore solver, S = {SUBSTEPS}, dt = 1/24 s; ms per frame (ns per particle-substep)\n")
    print("| ropes x points | direct (default) | direct + bending | sweep (lanes) | "
          "sequential sweep | sweep, threads | numpy sweep | lanes = sequential |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        cells = []
        for name in ("direct", "bending", "sweep", "sequential", "threads", "numpy"):
            cells.append(f"{r[name + '_ms']:.3f} ({r[name + '_ns']:.1f})" if name + "_ms" in r
                         else "-")
        same = "yes" if r["lanes_bit_identical"] else "NO"
        print(f"| {r['scene']} | " + " | ".join(cells) + f" | {same} |")
    print("\nDirect solve / sweep (lanes), per particle-substep: alternating frames of `step`, "
          "median [min-max] of the pairs' ratios\n")
    print("| ropes x points | direct / sweep | direct + bending / sweep |")
    print("|---|---|---|")
    for r in rows:
        cells = [f"{m:.2f} [{lo:.2f}-{hi:.2f}]" for m, lo, hi in (r["ratio"], r["ratio_bending"])]
        print(f"| {r['scene']} | " + " | ".join(cells) + " |")
    print("\nBehaviour over the first 2 s from release: peak kinetic energy / what the fall "
          "can give, sum m g r (stretch of the total length)\n")
    print("| ropes x points | direct (default) | direct + bending | sweep (lanes) |")
    print("|---|---|---|---|")
    for r in rows:
        cells = [f"{r[name + '_energy']:.2f} ({100 * r[name + '_stretch']:.2f} %)"
                 for name in ("direct", "bending", "sweep")]
        print(f"| {r['scene']} | " + " | ".join(cells) + " |")
    print(f"\nKernels: cold compile {compile_info['cold_s']:.2f} s, "
          f"cached load {compile_info['cached_s']:.2f} s (first step of a fresh process, "
          "numba import included)")
    out = ROOT / "out"
    out.mkdir(exist_ok=True)
    (out / "bench_core.json").write_text(json.dumps({"rows": rows, "compile": compile_info},
                                                    indent=2))
    ok = all(r["lanes_bit_identical"] and r["numpy_matches"] for r in rows)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
