"""A pile of crossed ropes on the floor: does it come to rest?

10 ropes along x lying on a ground plane 10 cm apart and 10 along y dropped across them
(60 points, 1.2 m, radius 5 mm, 10 g a point, self-collision, default frictions), 24 fps,
S = 20, sleeping off (nothing may hide a rope that still moves). Plays 240 frames (10 s)
twice in one process: with the contacts as they are, and with the residue that they undo
with velocity set to 0 (``contacts.constants.RESIDUE_SINKS``, read where ``MotionPrediction``
makes it, so patched there; the rule before 2026-12-04:
every overlap found at a substep's start pushed out without velocity). Prints, every second,
the largest move of a particle in a frame [mm], the kinetic energy [J] and the fastest
particle [mm/s], and the ms per frame.

    python -m benchmarks pile
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from xpbd_addon.core import Model, Plane, step  # noqa: E402
from xpbd_addon.core.contacts import prediction  # noqa: E402

ROPES, POINTS, LENGTH, RADIUS = 10, 60, 1.2, 0.005
DT, SUBSTEPS, FRAMES = 1.0 / 24.0, 20, 240


def pile() -> Model:
    s = np.linspace(-LENGTH / 2, LENGTH / 2, POINTS)
    offsets = (np.arange(ROPES) - (ROPES - 1) / 2) * 0.1
    ropes = [np.stack([s, np.full(POINTS, y), np.full(POINTS, 0.02)], -1) for y in offsets]
    ropes += [np.stack([np.full(POINTS, x), s, np.full(POINTS, 0.04)], -1) for x in offsets]
    x = np.concatenate(ropes)
    base = np.arange(len(ropes))[:, None] * POINTS
    edges = np.stack([base + np.arange(POINTS - 1), base + np.arange(1, POINTS)], -1)
    return Model(x, edges.reshape(-1, 2), np.full(len(x), 100.0), 1e-7, radius=RADIUS,
                 self_collision=True, damping=0.2, sleep_speed=0.0)


def play(label: str) -> None:
    model = pile()
    state = model.state()
    ground = [Plane((0.0, 0.0, 0.0))]
    mass = 1.0 / model.particle_inv_mass
    times = []
    print(f"-- {label}")
    for frame in range(FRAMES):
        before = state.x.copy()
        start = time.perf_counter()
        step(model, state, DT, SUBSTEPS, colliders=ground)
        times.append(time.perf_counter() - start)
        if frame % 24 == 23:
            move = np.linalg.norm(state.x - before, axis=1).max()
            energy = 0.5 * (mass * (state.v ** 2).sum(axis=1)).sum()
            fastest = np.linalg.norm(state.v, axis=1).max()
            print(f"  {(frame + 1) / 24:4.0f} s: largest move {move * 1e3:8.4f} mm a frame, "
                  f"kinetic energy {energy:.2e} J, fastest {fastest * 1e3:7.3f} mm/s, "
                  f"{np.median(times[-24:]) * 1e3:.1f} ms a frame", flush=True)


def main() -> None:
    play("now")
    kept = prediction.RESIDUE_SINKS
    prediction.RESIDUE_SINKS = 0.0
    try:
        play("residue 0 (overlap at a substep's start pushed out without velocity)")
    finally:
        prediction.RESIDUE_SINKS = kept


if __name__ == "__main__":
    main()
