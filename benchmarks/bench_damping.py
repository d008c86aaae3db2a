"""Numerical damping: how much swing the solver itself takes out, with damping 0.

The exact motion of a pendulum or a rope without damping keeps its amplitude. An implicit
solver (ours: Newton steps on the implicit-Euler system, see ``core/kernels_chain``) trades a
little of it for stability at any point count. Measured here:

- a rope (2 m, 20 or 100 points, alpha 0) released from 120 degrees (30 degrees above the
  horizontal), damping 0: the angle of its tip from the vertical at its last swing after
  ``SECONDS`` s, against the substep count S;
- a single pendulum (one 2 m segment) from 120 degrees, the same;
- the first mode of a hanging rope: a rope at rest given a small sideways swing (5 cm at its
  tip), the amplitude left after 20 s.

    python -m benchmarks.bench_damping
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from xpbd_addon.core import Model, step  # noqa: E402

DT = 1.0 / 24.0
SECONDS = 20.0
LENGTH = 2.0


def chain(points: int, angle_degrees: float) -> Model:
    """A straight chain hanging from its first point at ``angle_degrees`` from the downward
    vertical, 1 kg in all."""
    angle = np.radians(angle_degrees)
    direction = np.array([np.sin(angle), 0.0, -np.cos(angle)])
    x = np.linspace(0.0, LENGTH, points)[:, None] * direction
    inv_mass = np.full(points, float(points - 1))
    inv_mass[0] = 0.0
    edges = [(i, i + 1) for i in range(points - 1)]
    return Model(x, edges, inv_mass, 0.0, damping=0.0, strain_limit=None)


def tip_angles(model: Model, substeps: int, seconds: float) -> np.ndarray:
    state = model.state()
    angles = []
    for _ in range(int(seconds / DT)):
        step(model, state, DT, substeps)
        tip = state.x[-1] - state.x[0]
        angles.append(np.degrees(np.arctan2(tip[0], -tip[2])))
    return np.array(angles)


def last_swing(angles: np.ndarray) -> float:
    """The largest |angle| over the last two seconds (a full swing of a 2 m rope)."""
    return float(np.abs(angles[-int(2.0 / DT):]).max())


def first_mode(points: int, substeps: int) -> float:
    """Amplitude of a hanging rope's first mode after ``SECONDS`` s, as a fraction of its
    start: settled (damping 2 /s), then the sideways shape of its first mode given, damping
    0."""
    model = chain(points, 0.0)
    settling = Model(model.particle_rest_x, model.edge_index, model.particle_inv_mass, 0.0,
                     damping=2.0, strain_limit=None)
    state = settling.state()
    for _ in range(24 * 5):
        step(settling, state, DT, substeps)
    depth = -state.x[:, 2] / LENGTH
    state.x[:, 0] += 0.05 * depth  # a small swing as a whole: the first mode's shape, roughly
    state.v[:] = 0.0
    tips = np.empty(int(SECONDS / DT))
    for frame in range(len(tips)):
        step(model, state, DT, substeps)
        tips[frame] = state.x[-1, 0]
    return float(np.abs(tips[-int(3.0 / DT):]).max() / np.abs(tips[:int(3.0 / DT)]).max())


def main(argv: list[str]) -> int:
    substep_counts = (5, 10, 20, 40)
    print(f"\nSwing left after {SECONDS:.0f} s, released from 120 degrees, damping 0 "
          "(the exact motion keeps 120)\n")
    print("| S | pendulum (1 segment) | rope, 20 points | rope, 100 points | "
          "hanging rope's first mode, 100 points |")
    print("|---|---|---|---|---|")
    for substeps in substep_counts:
        cells = [f"{last_swing(tip_angles(chain(n, 120.0), substeps, SECONDS)):.0f} deg"
                 for n in (2, 20, 100)]
        cells.append(f"{100 * first_mode(100, substeps):.0f} %")
        print(f"| {substeps} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
