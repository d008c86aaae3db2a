"""Bending ropes drawn at random: how many gain energy, the working tree against a commit.

Each case: a chain of 3-60 points (segments 5-100 mm) curled at random (0-0.6 rad a point,
out of its plane), point masses 1-100 g drawn independently (adjacent points up to 100x
apart), 0-3 points pinned anywhere, EI 10^-4 - 10^2 N m^2 (bending compliance l/EI; one case
in ten 0, rigid), stretch alpha 0 or 10^-8 - 10^-3 m/N, 1-40 substeps at 24 fps, gravity on
in seven cases of ten, every free point set moving at random (normal, 0-2 m/s), 2 s without
damping. A case gains where its energy (kinetic, gravitational, stored: ``energy``) rises
more than 0.1 % of its start's magnitude (plus 1 mJ) above the start in any frame. A rope's
own solve has no source of energy, so every gain is the solver's.

    python -m benchmarks bend_energy [--ref=COMMIT] [--seeds=0-2] [--cases=120]
"""

from __future__ import annotations

import importlib
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.bench_collision_ab import _option, _package_at  # noqa: E402

DT = 1.0 / 24.0
FRAMES = 48


def _case(seed: int, case: int):
    """The case's rope: (x, inv_mass, pins, compliance, bending compliance, substeps,
    gravity, velocities)."""
    rng = np.random.default_rng((seed, case))
    n = int(rng.integers(3, 60))
    segment = rng.uniform(0.005, 0.1, n - 1)
    turns = np.cumsum(rng.normal(0.0, rng.uniform(0.0, 0.6), n - 1))
    d = np.stack([np.cos(turns), rng.normal(0.0, 0.3, n - 1), np.sin(turns)], axis=1)
    d *= (segment / np.linalg.norm(d, axis=1))[:, None]
    x = np.concatenate([np.zeros((1, 3)), np.cumsum(d, axis=0)])
    inv_mass = 1.0 / rng.uniform(0.001, 0.1, n)
    pins = rng.choice(n, size=int(rng.integers(0, 4)), replace=False)
    inv_mass[pins] = 0.0
    stiffness = 10 ** rng.uniform(-4, 2)
    mean_length = np.concatenate([[segment[0]], 0.5 * (segment[:-1] + segment[1:]),
                                  [segment[-1]]])
    bending = mean_length / stiffness
    if rng.random() < 0.1:
        bending[:] = 0.0
    compliance = 0.0 if rng.random() < 0.5 else 10 ** rng.uniform(-8, -3)
    substeps = int(rng.choice([1, 2, 3, 5, 10, 20, 40]))
    gravity = (0.0, 0.0, -9.81) if rng.random() < 0.7 else (0.0, 0.0, 0.0)
    v = rng.normal(0.0, rng.uniform(0.0, 2.0), (n, 3))
    v[pins] = 0.0
    return x, inv_mass, compliance, bending, substeps, gravity, v


def _rise(core, seed: int, case: int) -> tuple[int, float]:
    """(substeps, the largest rise of the energy over the start's magnitude)."""
    x, inv_mass, compliance, bending, substeps, gravity, v = _case(seed, case)
    model = core.Model(x, [(i, i + 1) for i in range(len(x) - 1)], inv_mass, compliance,
                       bending_compliance=bending)
    state = model.state()
    state.v[:] = v
    free = inv_mass > 0.0
    mass = np.where(free, 1.0 / np.where(free, inv_mass, 1.0), 0.0)
    stored = importlib.import_module(f"{core.__name__}.energy").stored_energy

    def energy() -> float:
        return float(0.5 * (mass * (state.v * state.v).sum(axis=1)).sum()
                     - (mass * gravity[2] * state.x[:, 2]).sum() + stored(model, state.x))

    start = energy()
    highest = start
    for _ in range(FRAMES):
        core.step(model, state, DT, substeps, gravity=gravity)
        if not np.all(np.isfinite(state.x)):
            return substeps, float("inf")
        highest = max(highest, energy())
    return substeps, (highest - start) / (abs(start) + 1e-3)


def main() -> None:
    ref = _option("ref", "") or None
    first, last = (int(s) for s in _option("seeds", "0-2").split("-"))
    cases = int(_option("cases", "120"))
    with tempfile.TemporaryDirectory() as directory:
        cores = {"working tree": importlib.import_module("xpbd_addon.core")}
        if ref is not None:
            cores = {ref: importlib.import_module(f"{_package_at(ref, Path(directory))}.core"),
                     **cores}
        print(f"\nbending ropes at random, seeds {first}-{last}, {cases} cases each: cases "
              "whose energy rose > 0.1 % (worst rise over the start's magnitude)\n")
        print("| code | gained | of | worst | by substeps (gained / cases) |")
        print("|---|---|---|---|---|")
        for name, core in cores.items():
            gains, total, worst = 0, 0, 0.0
            by: dict[int, list[int]] = {}
            for seed in range(first, last + 1):
                for case in range(cases):
                    substeps, rise = _rise(core, seed, case)
                    gained = rise > 1e-3
                    gains += gained
                    total += 1
                    worst = max(worst, rise)
                    count = by.setdefault(substeps, [0, 0])
                    count[0] += gained
                    count[1] += 1
            spread = ", ".join(f"S {s}: {g}/{c}" for s, (g, c) in sorted(by.items()))
            print(f"| {name} | {gains} | {total} | {worst:.3g} | {spread} |", flush=True)


if __name__ == "__main__":
    main()
