"""What the air costs a frame, an earlier commit against the working tree in one process.

Ropes as Add > Curve > XPBD Rope makes them (2 m, 1 cm radius, first point pinned, 0.1 kg,
damping 0.1 1/s, self-collision on), released from horizontal at S = 10, with and without
the air (``core.Air()``, still air), free or above a ground plane; the two packages' frames
alternate (``--ref`` extracted and imported, as ``collision_ab`` does). Per cell: the median
ms a frame over ``--frames`` frames, and what the ropes did: the peak kinetic energy over
what their fall can give (m g L / 2 per rope), and the largest segment strain at the end.

    python -m benchmarks air_ab --ref=COMMIT [--frames=96]
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
from benchmarks.bench_step_ab import _stretch  # noqa: E402

DT = 1.0 / 24.0
SUBSTEPS = 10
LENGTH = 2.0
MASS = 0.1
"""[kg] a rope's mass"""
SCENES = [(1, 20), (10, 20), (100, 100)]
GRAVITY = 9.81


def _model(core, count: int, points: int):
    x = np.zeros((count, points, 3))
    x[:, :, 0] = np.linspace(0.0, LENGTH, points)
    x[:, :, 1] = 0.05 * np.arange(count)[:, None]
    x[:, :, 2] = 1.0
    base = (np.arange(count) * points)[:, None]
    edges = np.stack([base + np.arange(points - 1), base + np.arange(1, points)], -1)
    inv_mass = np.full((count, points), points / MASS)
    inv_mass[:, 0] = 0.0
    return core.Model(x.reshape(-1, 3), edges.reshape(-1, 2), inv_mass.reshape(-1), 1e-6,
                      radius=0.01, damping=0.1, self_collision=True)


def _kinetic(model, state) -> float:
    free = model.particle_inv_mass > 0.0
    speed2 = (state.v[free] ** 2).sum(axis=1)
    return float((0.5 * speed2 / model.particle_inv_mass[free]).sum())


def main() -> None:
    ref = _option("ref", "HEAD")
    frames = int(_option("frames", "96"))
    with tempfile.TemporaryDirectory() as directory:
        cores = cores_ab(ref, Path(directory))
        print(f"\nms a frame at S = {SUBSTEPS}, median of {frames} frames in turns; peak "
              "kinetic energy / (m g L / 2), largest strain % at the end\n")
        print("| ropes x points | ground | air | " + " | ".join(
            f"{name}: ms | energy | strain" for name in cores) + " |")
        print("|---|---|---|" + "---|---|---|" * len(cores))
        for count, points in SCENES:
            for ground in (False, True):
                for air in (False, True):
                    models = {name: _model(core, count, points) for name, core in cores.items()}
                    states = {name: model.state() for name, model in models.items()}
                    colliders = {name: [core.Plane((0.0, 0.0, 0.0))] if ground else []
                                 for name, core in cores.items()}
                    airs = {name: core.Air() if air else None for name, core in cores.items()}
                    times: dict[str, list[float]] = {name: [] for name in cores}
                    peak = dict.fromkeys(cores, 0.0)
                    for _ in range(frames):
                        for name, core in cores.items():
                            start = time.perf_counter()
                            core.step(models[name], states[name], DT, SUBSTEPS,
                                      colliders=colliders[name], air=airs[name])
                            times[name].append(time.perf_counter() - start)
                            peak[name] = max(peak[name],
                                             _kinetic(models[name], states[name]))
                    fall = count * MASS * GRAVITY * LENGTH / 2.0
                    cells = [f"{np.median(times[name][1:]) * 1e3:.3f} | "
                             f"{peak[name] / fall:.2f} | "
                             f"{_stretch(models[name], states[name]):.3f}" for name in cores]
                    print(f"| {count} x {points} | {'yes' if ground else 'no'} | "
                          f"{'yes' if air else 'no'} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
