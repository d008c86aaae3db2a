"""The cost of a ``step`` call, an earlier commit against the working tree in one process.

100 ropes x 100 points (10,000 particles; 2 m, first point pinned, swinging) and 1 x 12, with
the default direct solve and with ``solver="sweep"``, at S = 20 and S = 40; the two packages'
calls alternate (``--ref`` extracted and imported as ``xpbd_ref``, as ``collision_ab`` does),
so the machine's drift hits both alike. Per cell: the median ms per call. The fixed cost of a
call (checks, copies, set-up, the frame's tension estimate) is estimated from two substep
counts, t(S) = F + S c: F = 2 t(20) - t(40). (From S = 1 and 20 it counted the extra Newton
steps of a 1/24 s step as fixed cost: 0.72 ms at 100 x 100, where S = 20 and 40 give 0.26.)
The trajectories of the two are compared too (bit for bit).

    python -m benchmarks step_ab --ref=COMMIT [--calls=200]
    python -m benchmarks step_ab --breakdown [--calls=300]
    python -m benchmarks step_ab --first-substep [--calls=300]

``--breakdown``: where the working tree's fixed cost at 100 x 100 sits, the direct solve's
frame kernel called alone with S = 0 (dispatch and the copies of x, v in and out), 1, 2, 3,
20 and 40 substeps, its first substep estimating the tension from x, v or starting from the
tension the last call left (what ``step`` does with ``State.tension``), against the Python
part of ``step`` (``step`` with that kernel replaced by nothing); then two States of one
Model in turn, one carrying the tension from frame to frame and one estimating it: how far
apart, and the time of a frame of each.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.bench_collision_ab import _option, cores_ab  # noqa: E402
from benchmarks.bench_core import ropes  # noqa: E402

DT = 1.0 / 24.0
SCENES = [(1, 12), (100, 100)]


BEND_STIFFNESS = 1.0
"""EI [N m^2] of the "direct + bending" rows: stiff, as a thick cable"""


def _model(core, count: int, points: int, solver: str):
    if solver == "direct + bending":
        segment = 2.0 / (points - 1)
        return ropes(count, points, model_class=core.Model, solver="direct",
                     bending_compliance=segment / BEND_STIFFNESS)
    return ropes(count, points, model_class=core.Model, solver=solver)


def _stretch(model, state) -> float:
    """The largest segment strain |l - L| / L [%] at the end of the run."""
    a, b = model.edge_index[:, 0], model.edge_index[:, 1]
    length = np.linalg.norm(state.x[a] - state.x[b], axis=1)
    return float(np.abs(length / model.edge_rest_length - 1.0).max() * 100.0)


def breakdown(calls: int) -> None:
    """The ``--breakdown`` table (module docstring)."""
    from xpbd_addon import core
    from xpbd_addon.core import solver
    from xpbd_addon.core.solve import frame
    from xpbd_addon.core.solve.kernels_frame import direct_frame

    model = _model(core, 100, 100, "direct")
    state = model.state()
    for _ in range(3):
        core.step(model, state, DT, 20)
    workspace, plan = state.workspace, model.plan
    blocks, order = frame.lane_blocks(plan), frame.lane_order(plan)
    gravity = np.array([0.0, 0.0, -9.81])
    h = DT / 20

    def median_us(call) -> float:
        call()
        samples = []
        for _ in range(calls):
            start = time.perf_counter()
            call()
            samples.append(time.perf_counter() - start)
        return float(np.median(samples)) * 1e6

    print("\n100 x 100, direct solve: us a call, median of", calls)
    print("\n| what | us |\n|---|---|")
    for fresh in (True, False):
        for substeps in (0, 1, 2, 3, 20, 40):
            us = median_us(lambda substeps=substeps, fresh=fresh: direct_frame(
                workspace.lane_particles, workspace.lane_edges, blocks, gravity, h, substeps,
                False, model.iterations, model.strain_limit, 1.0 / h, order, state.x, state.v,
                fresh))
            start = ("the tension estimated from x, v" if fresh
                     else "from the last frame's tension")
            print(f"| frame kernel, S = {substeps}, {start} | {us:.0f} |")
    kernels = solver.kernels()
    solver._kernels = kernels._replace(solve_frame=lambda *args, **keywords: None)
    try:
        us = median_us(lambda: core.step(model, state, DT, 20))
    finally:
        solver._kernels = kernels
    print(f"| `step` without the frame kernel | {us:.0f} |")
    carried_against_estimated(solver)


def carried_against_estimated(solver) -> None:
    """Two States of one Model stepped in turn, one starting each frame from the tension it
    carries (``State.tension``, ``core.tension``), the other made to estimate it from x, v:
    how far they are apart after 48 frames, and the median ms of a frame of each over 120
    (the first 10 left out), 100 ropes x 100 points, without and with bending."""
    print("\n100 x 100: carrying the tension against estimating it, in turn in one process")
    print("\n| solver | S | largest difference of x after 48 frames [m] | strain % | "
          "kinetic energy [J] | ms a frame, carried / estimated; the States swapped |")
    print("|---|---|---|---|---|---|")
    carry = solver.carry_into
    for kind in ("direct", "direct + bending"):
        for substeps in (20, 5):
            runs = [_in_turn(solver, carry, kind, substeps, carried) for carried in (0, 1)]
            (x, strain, kinetic), (x_estimated, strain_estimated, kinetic_estimated) = runs[0][0]
            ms = " ; ".join(f"{a:.3f} / {b:.3f}" for _, (a, b) in runs)
            print(f"| {kind} | {substeps} | {np.abs(x - x_estimated).max():.2e} | "
                  f"{strain:.4f} / {strain_estimated:.4f} | {kinetic:.6g} / "
                  f"{kinetic_estimated:.6g} | {ms} |", flush=True)


def _in_turn(solver, carry, kind: str, substeps: int, carried: int) -> tuple[list, tuple]:
    """Two States stepped in turn, the one numbered ``carried`` carrying its tension, the
    other estimating (the order swapped between two runs: the States' buffers lie
    differently in memory, which alone moved a frame by up to 10 %). Returns (the carried
    and the estimated State's x, strain, kinetic energy after 48 frames; their median ms)."""
    from xpbd_addon import core

    model = _model(core, 100, 100, kind)
    states = (model.state(), model.state())
    times: tuple[list[float], list[float]] = ([], [])
    ends: list = [None, None]
    for frame in range(120):
        for k, state in enumerate(states):
            solver.carry_into = carry if k == carried else (lambda *args, **keywords: False)
            try:
                start = time.perf_counter()
                core.step(model, state, DT, substeps)
                times[k].append(time.perf_counter() - start)
            finally:
                solver.carry_into = carry
            if frame == 47:
                ends[k] = (state.x.copy(), _stretch(model, state), _kinetic(model, state))
    ms = [float(np.median(t[10:])) * 1e3 for t in times]
    order = (carried, 1 - carried)
    return [ends[k] for k in order], (ms[order[0]], ms[order[1]])


def first_substep(calls: int) -> None:
    """The ``--first-substep`` table: the frame kernel alone at 16-200 ropes of 100 points
    with S = 0-3, each call from the same x, v and the tension the last call left (so the
    first substep starts from its own converged tension): how much more the first substep
    of a call costs than a later one, against the size of the lane buffers. The difference
    grows with the buffers past the core's L2 cache (each block's data is read from memory
    again in a call's first substep, and stays cached for its later ones)."""
    print("\nframe kernel from the same x, v, µs a call (median of", calls, ")")
    print("\n| ropes × 100 | lane buffers MB | S = 0 | 1 | 2 | 3 | first substep | later "
          "substep |\n|---|---|---|---|---|---|---|---|")
    for count in (16, 32, 64, 100, 200):
        megabytes, times = _substep_times(count, calls)
        later = (times[3] - times[1]) / 2
        print(f"| {count} | {megabytes:.1f} | " + " | ".join(f"{t:.0f}" for t in times)
              + f" | {times[1] - times[0]:.0f} | {later:.0f} |", flush=True)


def _substep_times(count: int, calls: int) -> tuple[float, list[float]]:
    """(the lane buffers' MB, the frame kernel's median µs at S = 0, 1, 2, 3) for ``count``
    ropes of 100 points (``first_substep``)."""
    from xpbd_addon import core
    from xpbd_addon.core.solve import frame
    from xpbd_addon.core.solve.kernels_frame import direct_frame

    model = _model(core, count, 100, "direct")
    state = model.state()
    for _ in range(10):
        core.step(model, state, DT, 20)
    workspace, plan = state.workspace, model.plan
    blocks, order = frame.lane_blocks(plan), frame.lane_order(plan)
    gravity, h = np.array([0.0, 0.0, -9.81]), DT / 20
    x, v = state.x.copy(), state.v.copy()

    def call(substeps: int) -> float:
        state.x[:], state.v[:] = x, v
        start = time.perf_counter()
        direct_frame(workspace.lane_particles, workspace.lane_edges, blocks, gravity, h,
                     substeps, False, model.iterations, model.strain_limit, 1.0 / h, order,
                     state.x, state.v, False)
        return time.perf_counter() - start

    times = []
    for substeps in (0, 1, 2, 3):
        call(substeps)
        times.append(float(np.median([call(substeps) for _ in range(calls)])) * 1e6)
    return (workspace.lane_particles.nbytes + workspace.lane_edges.nbytes) / 1e6, times


def _kinetic(model, state) -> float:
    """[J] the state's kinetic energy."""
    mass = 1.0 / np.where(model.particle_inv_mass > 0.0, model.particle_inv_mass, np.inf)
    return 0.5 * float((mass[:, None] * state.v ** 2).sum())


def main() -> None:
    if "--breakdown" in sys.argv:
        breakdown(int(_option("calls", "300")))
        return
    if "--first-substep" in sys.argv:
        first_substep(int(_option("calls", "300")))
        return
    ref = _option("ref", "HEAD")
    calls = int(_option("calls", "200"))
    with tempfile.TemporaryDirectory() as directory:
        cores = cores_ab(ref, Path(directory))
        print(f"\nms per step call, median of {calls} alternating calls; fixed cost F = "
              "2 t(20) - t(40)\n")
        print("| scene | solver | " + " | ".join(
            f"{name}: S = 20 | S = 40 | F" for name in cores) + " | same bits | strain % |")
        print("|---|---|" + "---|---|---|" * len(cores) + "---|---|")
        for count, points in SCENES:
            for solver in ("direct", "direct + bending", "sweep"):
                models = {name: _model(core, count, points, solver)
                          for name, core in cores.items()}
                states = {name: model.state() for name, model in models.items()}
                cells: dict[str, list[float]] = {}
                for substeps in (20, 40):
                    samples: dict[str, list[float]] = {name: [] for name in cores}
                    for turn in range(calls + 1):
                        for name, core in cores.items():
                            start = time.perf_counter()
                            core.step(models[name], states[name], DT, substeps)
                            if turn:  # the first call of each is a warm-up
                                samples[name].append(time.perf_counter() - start)
                    for name in cores:
                        cells.setdefault(name, []).append(float(np.median(samples[name])) * 1e3)
                a, b = (states[name] for name in cores)
                same = np.array_equal(a.x, b.x) and np.array_equal(a.v, b.v)
                row = []
                for name in cores:
                    twenty, forty = cells[name]
                    row += [f"{twenty:.3f}", f"{forty:.3f}", f"{2 * twenty - forty:.3f}"]
                strain = " / ".join(f"{_stretch(models[name], states[name]):.4f}"
                                    for name in cores)
                print(f"| {count} x {points} | {solver} | " + " | ".join(row)
                      + f" | {'yes' if same else 'NO'} | {strain} |", flush=True)


if __name__ == "__main__":
    main()
