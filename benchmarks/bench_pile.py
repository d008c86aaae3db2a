"""A pile of crossed ropes on the floor: does it come to rest, when does it sleep, and what
does a frame cost before and after?

10 ropes along x lying on a ground plane 10 cm apart and 10 along y dropped across them
(60 points, 1.2 m, radius 5 mm, 10 g a point, self-collision, default frictions), 24 fps,
S = 20. Plays 240 frames (10 s) with sleeping off (``sleep_speed`` 0: nothing hides a rope
that still moves) and on (``--sleep=SPEED`` [m/s], default the Model's default, 1e-3), each
in turn in one process. Prints, every second, the largest move of a particle in a frame
[mm], the kinetic energy [J], the fastest particle [mm/s], how many ropes slept through the
frame and the median ms per frame of that second; then when each rope fell asleep for good
and the median ms per frame before the first rope slept and once all slept. ``--air``: in
the air (``core.Air()``, as ropes from Add > Curve > XPBD Rope are), its drag taken at every
substep. ``--rods``: the ropes are rods (``core.Rod()``, bending compliance 1e-2, their
straight shape modelled), whose frames and twist must rest too before they sleep.

    python -m benchmarks pile [--sleep=1e-3] [--frames=240] [--only=on|off] [--air] [--rods]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from xpbd_addon.core import Air, Model, Plane, Rod, step  # noqa: E402

ROPES, POINTS, LENGTH, RADIUS = 10, 60, 1.2, 0.005
DT, SUBSTEPS, FRAMES = 1.0 / 24.0, 20, 240


def pile(sleep_speed: float, rods: bool = False) -> Model:
    s = np.linspace(-LENGTH / 2, LENGTH / 2, POINTS)
    offsets = (np.arange(ROPES) - (ROPES - 1) / 2) * 0.1
    ropes = [np.stack([s, np.full(POINTS, y), np.full(POINTS, 0.02)], -1) for y in offsets]
    ropes += [np.stack([np.full(POINTS, x), s, np.full(POINTS, 0.04)], -1) for x in offsets]
    x = np.concatenate(ropes)
    base = np.arange(len(ropes))[:, None] * POINTS
    edges = np.stack([base + np.arange(POINTS - 1), base + np.arange(1, POINTS)], -1)
    return Model(x, edges.reshape(-1, 2), np.full(len(x), 100.0), 1e-7, radius=RADIUS,
                 self_collision=True, damping=0.2, sleep_speed=sleep_speed,
                 bending_compliance=1e-2 if rods else None, rod=Rod() if rods else None)


def play(label: str, sleep_speed: float, frames: int, air: Air | None = None,
         rods: bool = False) -> None:
    model = pile(sleep_speed, rods)
    state = model.state()
    ground = [Plane((0.0, 0.0, 0.0))]
    mass = 1.0 / model.particle_inv_mass
    count = 2 * ROPES
    times, asleep_counts = [], []
    slept_at = np.full(count, -1)  # the frame from which each rope sleeps for good
    print(f"-- {label}")
    for frame in range(frames):
        before = state.x.copy()
        start = time.perf_counter()
        step(model, state, DT, SUBSTEPS, colliders=ground, air=air)
        times.append(time.perf_counter() - start)
        asleep = (np.zeros(count, dtype=bool) if state.rest is None
                  else state.rest.asleep.reshape(count, POINTS)[:, 0] != 0)
        asleep_counts.append(int(asleep.sum()))
        slept_at[~asleep] = -1
        slept_at[asleep & (slept_at < 0)] = frame
        if frame % 24 == 23:
            move = np.linalg.norm(state.x - before, axis=1).max()
            energy = 0.5 * (mass * (state.v ** 2).sum(axis=1)).sum()
            fastest = np.linalg.norm(state.v, axis=1).max()
            print(f"  {(frame + 1) / 24:4.0f} s: largest move {move * 1e3:8.4f} mm a frame, "
                  f"kinetic energy {energy:.2e} J, fastest {fastest * 1e3:7.3f} mm/s, "
                  f"{asleep_counts[-1]:2d} asleep, "
                  f"{np.median(times[-24:]) * 1e3:.2f} ms a frame", flush=True)
    if sleep_speed > 0.0:
        when = ", ".join("-" if f < 0 else f"{(f + 1) / 24:.2f}" for f in slept_at)
        print(f"  asleep for good from [s], rope by rope (the first {ROPES} on the floor): "
              f"{when}")
        counts = np.array(asleep_counts)
        first = int(np.argmax(counts > 0)) if counts.any() else frames
        awake_ms = np.median(times[:first]) * 1e3 if first else float("nan")
        everyone = np.flatnonzero(counts == count)
        asleep_ms = (np.median([times[f] for f in everyone]) * 1e3 if len(everyone)
                     else float("nan"))
        print(f"  ms a frame: {awake_ms:.2f} before any rope slept (frames 1-{first}), "
              f"{asleep_ms:.3f} with all asleep ({len(everyone)} frames)")


def main(argv: list[str]) -> None:
    options = dict(a[2:].split("=", 1) for a in argv if a.startswith("--") and "=" in a)
    speed = float(options.get("sleep", pile(1e-3).sleep_speed))
    frames = int(options.get("frames", FRAMES))
    only = options.get("only")
    air, where = (Air(), ", in the air") if "--air" in argv else (None, "")
    rods = "--rods" in argv
    where += ", rods" if rods else ""
    if only in (None, "off"):
        play(f"sleeping off (sleep_speed 0){where}", 0.0, frames, air, rods)
    if only in (None, "on"):
        play(f"sleeping on (sleep_speed {speed:g} m/s){where}", speed, frames, air, rods)


if __name__ == "__main__":
    main(sys.argv[1:])
