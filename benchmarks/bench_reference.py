"""The project's ``step`` against a minimal reference kernel, interleaved in one process.

The reference is the plain XPBD sweep (the seed's substep: predict, one Gauss-Seidel pass over
the distance constraints with lambda reset, v = (x - x_prev) / h) written as bare as it gets:
16 ropes interleaved in SIMD lanes ([block][slot][xyz][lane]), predict, project and velocity
update fused along the chain, all substeps of a block in one call. It is C compiled at run
time with the system compiler (``cc -O3 -march=native``, ``C_FLAGS``, into a temporary
directory, loaded with ctypes) when one is present, else the same loop in numba (``--numba``
forces it). That fallback is the barest loop, scalar (a run-time lane count, signed indices:
LLVM does not vectorise it; 22-38 ns per particle-substep here against the C's 3.6-7.6), so
its ratios say how far the project is ahead of a plain loop, not how close to the machine it
is. Floating-point contraction is off (numba's LLVM does not contract either), so the
reference does the same arithmetic as ``step(solver="sweep")``; the benchmark checks that
their trajectories agree bit for bit. Scenes with fewer than 8 ropes also run the reference
with one rope per "block" (lanes = 1, what the project's sweep does there) and keep the faster
of the two.

Scenes: 1 rope x 12 points, 10 x 100, 100 x 100, 1000 x 100; 2 m ropes, first point pinned,
released from horizontal and timed while they swing; S = 20, dt = 1/24 s, compliance 1e-7 m/N.
Each turn runs one frame of the reference, of ``step(solver="sweep")`` and of ``step`` (the
default direct solve) one after the other, so load from other processes hits all three alike;
the ratios are per particle-substep, the median over turns of each turn's ratio. ``step`` is
called as a user calls it (input checks, copies, threads where it uses them: 1000 x 100 at
S = 20 runs on two threads), the reference on one thread. Energy: the peak kinetic energy over
m g L / 2 during the first 2 s from release (a rope that behaves stays below 1).

    python -m benchmarks reference [--quick]
"""

from __future__ import annotations

import ctypes
import math
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.bench_core import DT, SCENES, SUBSTEPS, behaviour, ropes  # noqa: E402
from xpbd_addon.core import step  # noqa: E402

GRAVITY = (0.0, 0.0, -9.81)
C_FLAGS = ("-O3", "-march=native", "-fno-math-errno", "-ffp-contract=off",
           "-mprefer-vector-width=512")
"""No errno from sqrt (numba sets none; with it gcc keeps a scalar call: 3x slower), no
contraction into FMA (numba's LLVM does none: same bits), and 512-bit vectors where the CPU
has them (16 lanes = two of them; ignored elsewhere)."""

C_SOURCE = r"""
/* The plain XPBD sweep over blocks of L interleaved ropes; layout per block:
   x, v, xp [slot][3][L], w [slot][L], rest, alpha [edge][L]. "ivdep": the lanes are
   independent ropes; without it gcc guards the vector loop with an alias check that fails
   here and runs the scalar copy (3x slower). */
#define PREDICT(i) do { \
    XP[i] = X[i]; XP[i + L] = X[i + L]; XP[i + 2 * L] = X[i + 2 * L]; \
    int free_ = W[wi] > 0.0; \
    V[i] = free_ ? V[i] + h * gx : V[i]; \
    V[i + L] = free_ ? V[i + L] + h * gy : V[i + L]; \
    V[i + 2 * L] = free_ ? V[i + 2 * L] + h * gz : V[i + 2 * L]; \
    X[i] += h * V[i]; X[i + L] += h * V[i + L]; X[i + 2 * L] += h * V[i + 2 * L]; } while (0)
#define VELOCITY(i, wv) do { int free_ = (wv) > 0.0; \
    V[i] = free_ ? (X[i] - XP[i]) * vscale : V[i]; \
    V[i + L] = free_ ? (X[i + L] - XP[i + L]) * vscale : V[i + L]; \
    V[i + 2 * L] = free_ ? (X[i + 2 * L] - XP[i + 2 * L]) * vscale : V[i + 2 * L]; } while (0)

#include <math.h>
void NAME(double *restrict x, double *restrict v, double *restrict xp,
          const double *restrict w, const double *restrict rest,
          const double *restrict alpha, long blocks, long n, long substeps, double h,
          double gx, double gy, double gz, double vscale)
{
    const double ih2 = 1.0 / (h * h);
    for (long b = 0; b < blocks; b++) {
        double *restrict X = x + b * n * 3 * L;
        double *restrict V = v + b * n * 3 * L;
        double *restrict XP = xp + b * n * 3 * L;
        const double *restrict W = w + b * n * L;
        const double *restrict R = rest + b * (n - 1) * L;
        const double *restrict A = alpha + b * (n - 1) * L;
        for (long s = 0; s < substeps; s++) {
            _Pragma("GCC ivdep") for (long l = 0; l < L; l++) {
                long i = l, wi = l;
                PREDICT(i);
            }
            for (long p = 0; p + 1 < n; p++) {
                _Pragma("GCC ivdep") for (long l = 0; l < L; l++) {
                    long a = p * 3 * L + l, i = a + 3 * L, wi = (p + 1) * L + l;
                    PREDICT(i);
                    double wa = W[p * L + l], wb = W[wi];
                    double dx = X[a] - X[i], dy = X[a + L] - X[i + L];
                    double dz = X[a + 2 * L] - X[i + 2 * L];
                    double length = sqrt(dx * dx + dy * dy + dz * dz);
                    double at = A[p * L + l] * ih2;
                    double den = (wa + wb + at) * length;
                    double scale = den > 0.0 ? (-(length - R[p * L + l]) - at * 0.0) / den : 0.0;
                    double cx = scale * dx, cy = scale * dy, cz = scale * dz;
                    X[a] += wa * cx; X[a + L] += wa * cy; X[a + 2 * L] += wa * cz;
                    X[i] -= wb * cx; X[i + L] -= wb * cy; X[i + 2 * L] -= wb * cz;
                    VELOCITY(a, wa);
                }
            }
            _Pragma("GCC ivdep") for (long l = 0; l < L; l++) {
                long i = (n - 1) * 3 * L + l;
                VELOCITY(i, W[(n - 1) * L + l]);
            }
        }
    }
}
"""


def _compile_c(folder: Path):
    """The C reference as {lanes: function}, or None without a working compiler."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        return None
    source = folder / "reference.c"
    source.write_text("".join(f"#define L {lanes}\n#define NAME sweep{lanes}\n{C_SOURCE}"
                              "#undef L\n#undef NAME\n#undef PREDICT\n#undef VELOCITY\n"
                              for lanes in (16, 1)))
    library = folder / "reference.so"
    try:
        subprocess.run([compiler, *C_FLAGS, "-shared",
                        "-fPIC", "-o", str(library), str(source), "-lm"], check=True,
                       capture_output=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    dll = ctypes.CDLL(str(library))
    pointer = ctypes.POINTER(ctypes.c_double)
    functions = {}
    for lanes in (16, 1):
        function = getattr(dll, f"sweep{lanes}")
        function.restype = None
        function.argtypes = [pointer] * 6 + [ctypes.c_long] * 3 + [ctypes.c_double] * 5
        functions[lanes] = function
    return f"C ({Path(compiler).name} {' '.join(C_FLAGS)})", functions


def _numba_reference():
    """The same loop in numba, for machines without a C compiler."""
    from numba import njit

    def make(lanes: int):
        @njit(error_model="numpy", cache=False)
        def sweep(x, v, xp, w, rest, alpha, blocks, n, substeps, h, gx, gy, gz, vscale):
            ih2 = 1.0 / (h * h)
            for b in range(blocks):
                o, ow, oe = b * n * 3 * lanes, b * n * lanes, b * (n - 1) * lanes
                for _ in range(substeps):
                    for p in range(n):
                        for lane in range(lanes):
                            i, wi = o + p * 3 * lanes + lane, ow + p * lanes + lane
                            for c in range(3):
                                xp[i + c * lanes] = x[i + c * lanes]
                                if w[wi] > 0.0:
                                    v[i + c * lanes] += h * (gx, gy, gz)[c]
                                x[i + c * lanes] += h * v[i + c * lanes]
                            if p == 0:
                                continue
                            a, wa, wb = i - 3 * lanes, w[wi - lanes], w[wi]
                            dx = x[a] - x[i]
                            dy = x[a + lanes] - x[i + lanes]
                            dz = x[a + 2 * lanes] - x[i + 2 * lanes]
                            length = math.sqrt(dx * dx + dy * dy + dz * dz)
                            at = alpha[oe + (p - 1) * lanes + lane] * ih2
                            den = (wa + wb + at) * length
                            scale = ((-(length - rest[oe + (p - 1) * lanes + lane]) - at * 0.0)
                                     / den if den > 0.0 else 0.0)
                            for c, d in ((0, dx), (1, dy), (2, dz)):
                                correction = scale * d  # as the sweep: w * (scale * d)
                                x[a + c * lanes] += wa * correction
                                x[i + c * lanes] -= wb * correction
                            if wa > 0.0:
                                for c in range(3):
                                    v[a + c * lanes] = (x[a + c * lanes]
                                                        - xp[a + c * lanes]) * vscale
                    for lane in range(lanes):
                        i = o + (n - 1) * 3 * lanes + lane
                        if w[ow + (n - 1) * lanes + lane] > 0.0:
                            for c in range(3):
                                v[i + c * lanes] = (x[i + c * lanes] - xp[i + c * lanes]) * vscale

        return sweep

    return "numba (no C compiler found)", {16: make(16), 1: make(1)}


class Reference:
    """The reference's buffers for ``count`` ropes of ``points`` points (as ``ropes``)."""

    def __init__(self, function, lanes: int, count: int, points: int) -> None:
        model = ropes(count, points, solver="sweep")
        self.function, self.lanes, self.count, self.points = function, lanes, count, points
        self.blocks = -(-count // lanes)
        slots = self.blocks * lanes
        x = np.zeros((slots, points, 3))
        x[:count] = model.particle_rest_x.reshape(count, points, 3)
        w = np.zeros((slots, points))
        w[:count] = model.particle_inv_mass.reshape(count, points)
        rest = np.zeros((slots, points - 1))
        rest[:count] = model.edge_rest_length.reshape(count, points - 1)
        alpha = np.zeros((slots, points - 1))
        alpha[:count] = model.edge_compliance.reshape(count, points - 1)
        # (slots, ...) -> [block][slot][xyz][lane] and [block][slot][lane]
        self.x = np.ascontiguousarray(
            x.reshape(self.blocks, lanes, points, 3).transpose(0, 2, 3, 1)).ravel()
        self.v = np.zeros_like(self.x)
        self.xp = np.zeros_like(self.x)
        self.w, self.rest, self.alpha = (
            np.ascontiguousarray(a.reshape(self.blocks, lanes, -1).transpose(0, 2, 1)).ravel()
            for a in (w, rest, alpha))
        self.mass = np.divide(1.0, w[:count], out=np.zeros_like(w[:count]), where=w[:count] > 0)
        self.h = DT / SUBSTEPS
        self.velocity_scale = math.exp(-model.damping * self.h) / self.h

        arrays: tuple = (self.x, self.v, self.xp, self.w, self.rest, self.alpha)
        if isinstance(function, ctypes._CFuncPtr):  # pointers made once: ctypes is slow at it
            arrays = tuple(a.ctypes.data_as(ctypes.POINTER(ctypes.c_double)) for a in arrays)
        self.arguments = (*arrays, self.blocks, points, SUBSTEPS, self.h, *GRAVITY,
                          self.velocity_scale)

    def frame(self) -> None:
        self.function(*self.arguments)

    def ropes_xv(self) -> tuple[np.ndarray, np.ndarray]:
        """x, v as (count * points, 3), in the particle order of ``ropes``."""
        def back(a: np.ndarray) -> np.ndarray:
            shaped = a.reshape(self.blocks, self.points, 3, self.lanes).transpose(0, 3, 1, 2)
            return shaped.reshape(-1, self.points, 3)[:self.count].reshape(-1, 3)
        return back(self.x), back(self.v)

    def energy(self, seconds: float = 2.0) -> float:
        """Peak kinetic energy / (m g L / 2) over ``seconds`` from release (as ``behaviour``)."""
        available = float(self.mass.sum()) * 9.81 * 2.0 / 2.0
        peak = 0.0
        for _ in range(int(seconds / DT)):
            self.frame()
            _, v = self.ropes_xv()
            peak = max(peak, 0.5 * float(np.sum(self.mass.reshape(-1)[:, None] * v ** 2)))
        return peak / available


def _time(run) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def measure(functions: dict, count: int, points: int, quick: bool) -> dict:
    turns = max(5, min(200, int((10 if quick else 60) * 1e4 / (count * points))))
    work = count * points * SUBSTEPS
    # the reference's layout: 16 lanes, and one rope per block too where the sweep does that
    candidates = [Reference(functions[16], 16, count, points)]
    if count < 8:
        candidates.append(Reference(functions[1], 1, count, points))
    for candidate in candidates:
        candidate.frame()
    best = min(candidates, key=lambda c: min(_time(c.frame) for _ in range(5)))
    reference = Reference(best.function, best.lanes, count, points)
    sweep, direct = ropes(count, points, solver="sweep"), ropes(count, points)
    sweep_state, direct_state = sweep.state(), direct.state()
    # the same arithmetic: the reference's frames equal the sweep's bit for bit
    for _ in range(3):
        reference.frame()
        step(sweep, sweep_state, DT, SUBSTEPS)
    x, v = reference.ropes_xv()
    identical = bool(np.array_equal(x, sweep_state.x) and np.array_equal(v, sweep_state.v))
    runs = {"reference": reference.frame,
            "sweep": lambda: step(sweep, sweep_state, DT, SUBSTEPS),
            "direct": lambda: step(direct, direct_state, DT, SUBSTEPS)}
    for run in runs.values():
        run()
    samples: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(turns):
        for name, run in runs.items():
            samples[name].append(_time(run))
    times = {name: np.array(values) for name, values in samples.items()}
    row = {"scene": f"{count} x {points}", "lanes": best.lanes, "identical": identical}
    for name, values in times.items():
        row[name + "_ns"] = float(np.median(values)) / work * 1e9
    for name in ("sweep", "direct"):
        ratios = times[name] / times["reference"]
        row[name + "_ratio"] = (float(np.median(ratios)), float(np.percentile(ratios, 10)),
                                float(np.percentile(ratios, 90)))
    row["reference_energy"] = Reference(best.function, best.lanes, count, points).energy()
    row["sweep_energy"] = behaviour(ropes(count, points, solver="sweep"))[0]
    row["direct_energy"] = behaviour(ropes(count, points))[0]
    return row


def main(argv: list[str]) -> int:
    quick = "--quick" in argv
    with tempfile.TemporaryDirectory() as folder:
        compiled = None if "--numba" in argv else _compile_c(Path(folder))
        kind, functions = compiled or _numba_reference()
        rows = [measure(functions, count, points, quick) for count, points in SCENES]
    print(f"\nReference: {kind}, one thread. S = {SUBSTEPS}, dt = 1/24 s; ns per "
          "particle-substep (median frame), ratio to the reference: median of the turns "
          "[10th-90th percentile]\n")
    print("| ropes x points | reference | step, sweep | sweep / ref | step, direct (default) "
          "| direct / ref | ref = sweep bit for bit |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        lanes = "" if r["lanes"] == 16 else f" ({r['lanes']} lane)"
        cells = [f"{r['reference_ns']:.1f}{lanes}"]
        for name in ("sweep", "direct"):
            m, lo, hi = r[name + "_ratio"]
            cells += [f"{r[name + '_ns']:.1f}", f"{m:.2f} [{lo:.2f}-{hi:.2f}]"]
        cells.append("yes" if r["identical"] else "NO")
        print(f"| {r['scene']} | " + " | ".join(cells) + " |")
    print("\nPeak kinetic energy / (m g L / 2) over the first 2 s from release\n")
    print("| ropes x points | reference | step, sweep | step, direct |")
    print("|---|---|---|---|")
    for r in rows:
        print(f"| {r['scene']} | {r['reference_energy']:.2f} | {r['sweep_energy']:.2f} | "
              f"{r['direct_energy']:.2f} |")
    return 0 if all(r["identical"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
