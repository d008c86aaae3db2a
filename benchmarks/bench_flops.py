"""The direct solve against the machine's arithmetic: floating-point operations per particle
and Newton step, and the fraction of the CPU's peak they run at (issue 33).

What it counts. The chain solve's two kernels for 16 lanes (``kernels_chain._forward``: the
rows and the forward elimination; ``_back``: the back substitution and the residual), compiled
afresh in a temporary numba cache so that their LLVM IR is at hand. In each, the loop body
LLVM vectorised (``vector.body``) holds every floating-point instruction of one node, each on
a vector of lanes: the count of fadd / fsub / fmul / fdiv / fneg and sqrt there is the flops
per particle and step (numba contracts no multiply-add: each is one instruction).

What it times. Newton steps of every block of the benchmark ropes of ``bench_core`` (2 m,
100 points, released from horizontal 2 s before), ``kernels_chain.newton`` called with
exactly one step (min = max = 1) on the frame's lane buffer, 20 in a row per block as the
solver takes a frame's substeps, one thread: ns per particle and step, the median of 60
calls; with the flops, GFLOP/s. Beside it, a whole substep of ``step`` (S = 20, one thread):
their ratio bounds the Newton steps a substep takes (the rest of a substep, predict and
velocity, costs little). How the timed ropes behave: their kinetic energy over what the fall
from horizontal can give (m g L / 2 a rope; below 1 for a solve that gains none) and their
largest strain, at the end.

The peak. The clock from /proc/cpuinfo ("cpu MHz", the nominal one of a VM's CPU) times 16
double-precision flops per cycle and core (two 256-bit FMA pipes, as in AMD Zen 2-4 and Intel
since Haswell: an FMA counts 2), so 8 multiplies and 8 adds a cycle at most where no FMA is
used; stated, not measured. The 2-core figure is twice that.

    python -m benchmarks flops
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

FLOPS_PER_CYCLE = 16
"""Double-precision flops per cycle and core: two 256-bit FMA pipes (an FMA counts 2)"""

_OPS = ("fadd", "fsub", "fmul", "fdiv", "fneg")


def _vector_body_ops(ir: str) -> tuple[dict[str, int], int]:
    """The floating-point vector instructions of the vectorised loop body of ``ir``, and the
    vector width [lanes]."""
    counts = dict.fromkeys((*_OPS, "sqrt"), 0)
    widths: set[int] = set()
    block = None
    for line in ir.split("\n"):
        label = re.match(r"^([\w.]+):", line)
        if label:
            block = label.group(1)
            continue
        if block != "vector.body":
            continue
        for op in _OPS:
            found = re.search(rf"= {op} (?:\w+ )*<(\d+) x double>", line)
            if found:
                counts[op] += 1
                widths.add(int(found.group(1)))
        if re.search(r"@llvm\.sqrt\.v\d+f64", line):
            counts["sqrt"] += 1
    return counts, max(widths) if widths else 1


def _count() -> None:
    """In a fresh process with an empty cache: print the counts as a Python literal."""
    from benchmarks.bench_core import ropes
    from xpbd_addon.core import step
    from xpbd_addon.core.solve import kernels_chain

    model = ropes(16, 30)
    state = model.state()
    step(model, state, 1.0 / 24.0, 2)
    result = {}
    for name, kernel in (("forward", kernels_chain._forward), ("back", kernels_chain._back)):
        for signature, ir in kernel.inspect_llvm().items():
            text = str(signature)
            if "Literal[int](16)" not in text:
                continue
            if name == "forward" and "Literal[bool](False), Literal[bool](True), none" not in text:
                continue  # a Newton step after the first: tension from lambda, no reset
            if name == "back" and "Literal[bool](False), none, Literal[int](16)" not in text:
                continue  # moving, not only estimating
            result[name] = _vector_body_ops(ir)
    print(repr(result))


def _newton_steps_kernel():
    """A kernel taking Newton steps of exactly one step each on every block of 16 lanes (the
    same call as the solver's: literal flags and lane count)."""
    from numba import njit

    from xpbd_addon.core.solve.kernels_chain import newton

    @njit(nogil=True)
    def one_step(buffer, edge_buffer, particle_offset, edge_offset, length, inverse_h2,
                 repeats):
        # block after block, ``repeats`` steps each, as the solver takes a frame's substeps
        # block after block (the block stays in cache)
        for b in range(length.shape[0]):
            for _ in range(repeats):
                newton(buffer, edge_buffer, particle_offset[b], edge_offset[b], length[b],
                       inverse_h2, 1, 1, 0.0, True, None, 16)

    return one_step


def _time(ropes_count: int, points: int, calls: int) -> tuple[float, float, float, float]:
    """ns per particle of one Newton step (median of ``calls``) and of a substep of ``step``
    (S = 20, one thread, median of ``calls`` frames) on ``ropes_count`` x ``points`` ropes
    swinging from 2 s after their release on; and at the end their kinetic energy over
    m g L / 2 and their largest strain."""
    import numba

    from benchmarks.bench_core import ropes
    from xpbd_addon.core import step

    numba.set_num_threads(1)  # (the threaded kernels on one thread: the one-core figure)
    substeps, dt = 20, 1.0 / 24.0
    model = ropes(ropes_count, points)
    state = model.state()
    for _ in range(48):
        step(model, state, dt, substeps)
    frames = []
    for _ in range(calls):
        start = time.perf_counter()
        step(model, state, dt, substeps)
        frames.append(time.perf_counter() - start)
    lanes = model.plan.lanes
    assert lanes is not None
    layout = lanes.layout
    assert layout.lanes == 16
    workspace = state.workspace
    assert workspace is not None
    buffer, edges = workspace.lane_particles.copy(), workspace.lane_edges.copy()
    one_step = _newton_steps_kernel()
    inverse_h2 = (substeps / dt) ** 2
    arguments = (buffer, edges, layout.block_particle_offset, layout.block_edge_offset,
                 layout.block_length, inverse_h2, substeps)
    one_step(*arguments)
    steps = []
    for _ in range(calls):
        start = time.perf_counter()
        one_step(*arguments)
        steps.append(time.perf_counter() - start)
    particles = model.particle_count
    free = model.particle_inv_mass > 0.0
    mass = 1.0 / model.particle_inv_mass[free]
    kinetic = 0.5 * float((mass[:, None] * state.v[free] ** 2).sum())
    half_length = float(model.edge_rest_length.sum()) / ropes_count / 2.0  # [m] L / 2
    fall = 9.81 * float(mass.sum()) * half_length
    edges = model.edge_index
    lengths = np.linalg.norm(state.x[edges[:, 0]] - state.x[edges[:, 1]], axis=1)
    strain = float((lengths / model.edge_rest_length - 1.0).max())
    return (1e9 * float(np.median(steps)) / (particles * substeps),
            1e9 * float(np.median(frames)) / (particles * substeps), kinetic / fall, strain)


def _clock_ghz() -> float:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("cpu MHz"):
            return float(line.split(":")[1]) / 1000.0
    return float("nan")


def main() -> None:
    with tempfile.TemporaryDirectory() as cache:
        environment = dict(os.environ, NUMBA_CACHE_DIR=cache)
        out = subprocess.run([sys.executable, "-c",
                              "from benchmarks.bench_flops import _count; _count()"],
                             cwd=ROOT, env=environment, capture_output=True, text=True,
                             check=True).stdout.strip().splitlines()[-1]
    counts = ast.literal_eval(out)
    print("\nfloating-point instructions per particle in the vectorised loop body "
          "(a vector of lanes each):\n")
    print("| kernel | vector width | fadd | fsub | fmul | fdiv | fneg | sqrt | total |")
    print("|---|---|---|---|---|---|---|---|---|")
    flops = 0
    for name, (ops, width) in counts.items():
        total = sum(ops.values())
        flops += total
        print(f"| {name} | {width} | " + " | ".join(str(ops[k]) for k in
              ("fadd", "fsub", "fmul", "fdiv", "fneg", "sqrt")) + f" | {total} |")
    multiplies = sum(ops["fmul"] for ops, _ in counts.values())
    clock = _clock_ghz()
    peak = FLOPS_PER_CYCLE * clock  # GFLOP/s of one core
    print(f"\none Newton step: {flops} flops per particle ({multiplies} multiplies); "
          f"clock {clock:.2f} GHz, peak {peak:.1f} GFLOP/s a core, {2 * peak:.1f} for two "
          f"(multiplies alone: at most {FLOPS_PER_CYCLE // 2} a cycle)\n")
    print("| ropes x points | ns per particle and Newton step | GFLOP/s | of one core's peak "
          "| of two cores' | ns per particle-substep of step (S = 20) | Newton steps a "
          "substep, at most | kinetic / (m g L / 2), largest strain, at the end |")
    print("|---|---|---|---|---|---|---|---|")
    step_times: list[float] = []
    for ropes_count, points in ((100, 100), (1000, 100)):
        step_ns, substep_ns, kinetic, strain = _time(ropes_count, points, 60)
        rate = flops / step_ns
        print(f"| {ropes_count} x {points} | {step_ns:.2f} | {rate:.1f} | "
              f"{100 * rate / peak:.0f} % | {50 * rate / peak:.0f} % | {substep_ns:.2f} | "
              f"{substep_ns / step_ns:.2f} | {kinetic:.2f}, {100 * strain:.2f} % |")
        step_times.append(step_ns)
    bound = multiplies / (FLOPS_PER_CYCLE // 2) / clock  # [ns]: the multiply pipes' floor
    print(f"\nthe multiplies alone take {bound:.2f} ns a particle and step at 8 a cycle: the "
          f"step runs at {100 * bound / min(step_times):.0f} % of that floor")


if __name__ == "__main__":
    main()
