"""The cost of a rod (``core.Rod``) against the same rope without one, with the motion.

Scenes: ropes modelled as arcs (a tail's curl, 240 degrees over 1 m, in a vertical plane,
drawn 10 cm out of it along its length), hung by their first point, Material EI 0.05 N m^2,
rho 0.065 kg/m, damping 0.1 1/s: 1 rope x 24 points and 100 ropes x 100 points, 48 frames at
S = 10 and 20. Reported per scene: ms per frame (median of the frames after the first, which
compiles), ns per particle-substep, the substeps a rod took (``rod.least_substeps`` may take
more), and the motion: how far the tip moved from its modelled place and the bend kept (the
mean turn per point now over the modelled one; a rope uncoils, a rod keeps its shape).

    python3 build.py bench rods
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from xpbd_addon.core import Model, Rod, step  # noqa: E402
from xpbd_addon.core.material import RopeMaterial, rope_parameters  # noqa: E402
from xpbd_addon.core.rod import least_substeps  # noqa: E402

DT = 1.0 / 24.0
FRAMES = 48


def arcs(ropes: int, points: int, rod: bool) -> Model:
    angle = np.linspace(0.0, np.radians(240.0), points)
    radius = 1.0 / np.radians(240.0)
    one = np.stack([radius * np.sin(angle), np.linspace(0.0, 0.1, points),
                    radius * (1.0 - np.cos(angle))], axis=1)
    x = np.concatenate([one + [0.0, 0.5 * k, 0.0] for k in range(ropes)])
    edges = np.concatenate([[(k * points + i, k * points + i + 1) for i in range(points - 1)]
                            for k in range(ropes)])
    pinned = np.zeros(len(x), dtype=bool)
    pinned[::points] = True
    inv_mass, compliance, bending = rope_parameters(
        x, edges, RopeMaterial(0.065, 3.0e4, 0.05), pinned=pinned)
    return Model(x, edges, inv_mass, compliance, bending_compliance=bending, damping=0.1,
                 radius=0.005, rod=Rod() if rod else None)


def turns(x: np.ndarray, points: int) -> float:
    d = np.diff(x.reshape(-1, points, 3), axis=1)
    d /= np.linalg.norm(d, axis=2)[..., None]
    return float(np.arccos(np.clip((d[:, 1:] * d[:, :-1]).sum(axis=2), -1, 1)).mean())


def run(ropes: int, points: int, substeps: int, rod: bool) -> dict:
    model = arcs(ropes, points, rod)
    state = model.state()
    times = []
    for _ in range(FRAMES):
        began = time.perf_counter()
        step(model, state, DT, substeps)
        times.append(time.perf_counter() - began)
    ms = float(np.median(times[1:])) * 1e3
    taken = substeps if model.rod_layout is None else max(substeps, least_substeps(
        model.rod_layout, state.x, model.particle_inv_mass, DT))
    tips = state.x[points - 1::points] - model.particle_rest_x[points - 1::points]
    return {"ms": ms, "ns": ms * 1e6 / (ropes * points * taken), "taken": taken,
            "tip": float(np.linalg.norm(tips, axis=1).max()),
            "bend": turns(state.x, points) / turns(model.particle_rest_x, points)}


def main() -> None:
    print("| scene | S | rope: ms/frame | ns/particle-substep | tip moved [m] | bend kept "
          "| rod: ms/frame | substeps taken | ns/particle-substep | tip moved [m] | bend kept |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for ropes, points in ((1, 24), (100, 100)):
        for substeps in (10, 20):
            a = run(ropes, points, substeps, False)
            b = run(ropes, points, substeps, True)
            print(f"| {ropes} x {points} | {substeps} | {a['ms']:.3f} | {a['ns']:.0f} | "
                  f"{a['tip']:.3f} | {a['bend']:.2f} | {b['ms']:.3f} | {b['taken']} | "
                  f"{b['ns']:.0f} | {b['tip']:.3f} | {b['bend']:.2f} |", flush=True)


if __name__ == "__main__":
    main()
