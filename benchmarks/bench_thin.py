"""Ropes on thin things: where the segment contacts hold and what they cost.

Two scans in the core, each row a fresh rope:

* a wire along y (a 16-sided cylinder of radius 2.5 mm or 1 mm) and a 1 m rope of 11 points
  (r = 5 mm, 0.05 kg a point, alpha 1e-6 m/N) thrown down at it at 5-40 m/s between two of
  its points, 24 fps, 1 s: "held" if it hangs on the wire at the end, with the least gap of
  its centre line to the wire [r] over the frames;
* the add-on's default rope (20 points over 2 m, r = 1 cm) dropped from 30 cm across a pole
  of 2.5 cm, 1 cm or 5 mm radius (32 sides, mu 0.3), 5 s: the least gap [r], the largest
  stretch and kinetic + gravitational energy gain over the run, where along the rope it
  lies on the pole at 3 s and 5 s, and ms per frame;
* the same rope (20 points) and ropes subdivided to 51, 101 and 201 points (0.05 kg each,
  r = 5 mm, damping 0.1 /s) dropped from 5 cm across a 1 cm pole (16 sides, the default
  friction 0.5 / 0.4), 10 s: whether it still hangs on the pole, its energy gain, and the
  largest strain of a segment at the end (the segments over the pole);
* scattered drops: the default rope's mass and radius (0.05 kg a point, r = 5 mm) at 20,
  51, 101 and 201 points over 2 m, dropped from 30 cm across a pole of 5 mm, 1 cm or 2.5 cm
  radius (16 sides, friction 0.5 / 0.4) at 5, 10 and 20 substeps, its middle off the pole
  by up to 5 cm and its damping 0.1 or 1 /s at random (two seeds: 72 drops), 5 s: how many
  still hang on the pole (both ends down, the top within 5 cm of it), and how many cut into
  it deeper than 15 % of the radius at some frame.

    python -m benchmarks thin            (python3 build.py bench thin)
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.core.colliders import cylinder, distance_to_axis  # noqa: E402
from xpbd_addon.core import Collider, Model, step  # noqa: E402

DT = 1.0 / 24.0


def rope(points, length, height, radius, centre=0.0, damping=0.1):
    x = np.zeros((points, 3))
    x[:, 0] = np.linspace(-length / 2, length / 2, points) + centre
    x[:, 2] = height
    edges = np.stack([np.arange(points - 1), np.arange(1, points)], axis=1)
    return Model(x, edges, np.full(points, 20.0), 1e-6, radius=radius, damping=damping)


def thrown(speed, wire, substeps, radius=0.005):
    model = rope(11, 1.0, 0.05 + wire + radius, radius, centre=0.05)
    state = model.state()
    state.v[:, 2] = -speed
    collider = Collider(*cylinder(wire, 0.5, 16))
    least = np.inf
    for _ in range(24):
        step(model, state, DT, substeps, colliders=[collider])
        gap = distance_to_axis(state.x, model.edge_index).min() - wire * np.cos(np.pi / 16)
        least = min(least, gap / radius)
    return state.x[:, 2].max() > 0.0, least


def dropped(pole, substeps, radius=0.01, frames=120):
    model = rope(20, 2.0, 0.3, radius)
    state = model.state()
    collider = Collider(*cylinder(pole, 1.0, 32), static_friction=0.3, dynamic_friction=0.3)
    mass = 1.0 / model.particle_inv_mass

    def energy():
        return float((0.5 * mass * (state.v ** 2).sum(axis=1)).sum()
                     + 9.81 * (mass * state.x[:, 2]).sum())

    start, least, stretch, gain, where, spent = energy(), np.inf, 0.0, -np.inf, {}, 0.0
    edges, rest = model.edge_index, model.edge_rest_length.sum()
    for frame in range(1, frames + 1):
        begin = time.perf_counter()
        step(model, state, DT, substeps, colliders=[collider])
        spent += time.perf_counter() - begin
        distance = distance_to_axis(state.x, edges)
        least = min(least, (distance.min() - pole * np.cos(np.pi / 32)) / radius)
        length = np.linalg.norm(state.x[edges[:, 0]] - state.x[edges[:, 1]], axis=1).sum()
        stretch = max(stretch, length / rest - 1.0)
        gain = max(gain, energy() - start)
        if frame in (72, 120):
            a, b = state.x[:-1], state.x[1:]
            over = np.flatnonzero((a[:, 0] * b[:, 0] <= 0.0) & (a[:, 2] + b[:, 2] > 0.0))
            if len(over):
                i = int(over[0])
                f = a[i, 0] / (a[i, 0] - b[i, 0]) if a[i, 0] != b[i, 0] else 0.5
                where[frame] = (i + f) * 2.0 / 19
            else:
                where[frame] = float("nan")
    return least, stretch, gain, where, 1e3 * spent / frames


def subdivided(points, substeps, frames=240):
    model = rope(points, 2.0, 0.05, 0.005)
    state = model.state()
    collider = Collider(*cylinder(0.01, 1.0, 16))
    mass = 1.0 / model.particle_inv_mass

    def energy():
        return float((0.5 * mass * (state.v ** 2).sum(axis=1)).sum()
                     + 9.81 * (mass * state.x[:, 2]).sum())

    start, gain = energy(), -np.inf
    for _ in range(frames):
        step(model, state, DT, substeps, colliders=[collider])
        gain = max(gain, energy() - start)
    edges = model.edge_index
    held = distance_to_axis(state.x, edges).min() < 0.03
    strain = (np.linalg.norm(state.x[edges[:, 0]] - state.x[edges[:, 1]], axis=1)
              / model.edge_rest_length - 1.0).max()
    return held, gain, strain


def scattered(points, substeps, pole, seed, frames=120):
    """One scattered drop (module docstring): (hangs on the pole, least gap [r])."""
    rng = np.random.default_rng(points * 100 + substeps * 10 + int(pole * 1000) + 7919 * seed)
    centre = rng.uniform(-0.05, 0.05)
    radius = 0.005
    model = rope(points, 2.0, 0.3, radius, centre, damping=float(rng.choice([0.1, 1.0])))
    state = model.state()
    collider = Collider(*cylinder(pole, 1.0, 16))
    surface = pole * np.cos(np.pi / 16) + radius  # (the mesh's flat sides)
    least = np.inf
    for _ in range(frames):
        step(model, state, DT, substeps, colliders=[collider])
        least = min(least, (distance_to_axis(state.x, model.edge_index).min() - surface) / radius)
    top = state.x[:, 2].max()
    hangs = bool(-0.05 < top < pole + 0.06 and state.x[0, 2] < -0.3 and state.x[-1, 2] < -0.3)
    return hangs, least


def main() -> None:
    print("thrown at a wire: held? (least gap of the centre line, in r)")
    for wire in (0.0025, 0.001):
        for substeps in (10, 20):
            row = []
            for speed in (5, 10, 20, 40):
                held, least = thrown(speed, wire, substeps)
                row.append(f"{speed} m/s {'held' if held else 'not held'} ({least:.2f})")
            print(f"  wire r = {wire * 1e3:.1f} mm, S = {substeps}: " + "; ".join(row))
    print("\nthe default rope dropped across a pole (mu 0.3), 5 s")
    for pole in (0.025, 0.01, 0.005):
        for substeps in (5, 10, 20):
            least, stretch, gain, where, ms = dropped(pole, substeps)
            print(f"  pole r = {pole * 1e3:.0f} mm, S = {substeps:2d}: least gap {least:.2f} r, "
                  f"stretch {100 * stretch:.2f} %, energy gain {gain:+.3f} J, on the pole at "
                  f"{where[72]:.3f} / {where[120]:.3f} m along it, {ms:.2f} ms a frame")
    print("\nropes subdivided, dropped from 5 cm across a 1 cm pole (mu 0.5), 10 s")
    for points in (20, 51, 101, 201):
        row = []
        for substeps in (5, 10, 20):
            held, gain, strain = subdivided(points, substeps)
            row.append(f"S = {substeps} {'holds' if held else 'slides off'} (energy gain "
                       f"{gain:+.2f} J, segment strain {100 * strain:.1f} %)")
        print(f"  {points} points: " + "; ".join(row))
    print("\nscattered drops across poles of 5 mm, 1 cm and 2.5 cm, 5 s (two seeds)")
    for points in (20, 51, 101, 201):
        for substeps in (5, 10, 20):
            hung = cut = total = 0
            for pole in (0.005, 0.01, 0.025):
                for seed in (0, 1):
                    hangs, least = scattered(points, substeps, pole, seed)
                    hung += hangs
                    cut += least < -0.15
                    total += 1
            print(f"  {points} points, S = {substeps:2d}: hangs on {hung} of {total}, "
                  f"cuts in deeper than 0.15 r in {cut}")


if __name__ == "__main__":
    main()
