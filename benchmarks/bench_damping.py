"""Numerical damping: how much swing the solver itself takes out, with damping 0.

The exact motion of a pendulum or a rope without damping keeps its amplitude. An implicit
solver (ours: Newton steps on the implicit-Euler system, see ``core/kernels_chain``) trades a
little of it for stability at any point count. Measured here:

- a rope (2 m, 20 or 100 points, alpha 0) released from 120 degrees (30 degrees above the
  horizontal), damping 0: the angle of its tip from the vertical at its last swing after
  ``SECONDS`` s, against the substep count S;
- a single pendulum (one 2 m segment) from 120 degrees, the same;
- the slowest swing of a hanging rope: a rope at rest turned by 3 degrees about its pin and
  released, the amplitude left after 20 s (from the energy of the swing).

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


def chain(points: int, angle_degrees: float, integrator: str = "euler") -> Model:
    """A straight chain hanging from its first point at ``angle_degrees`` from the downward
    vertical, 1 kg in all."""
    angle = np.radians(angle_degrees)
    direction = np.array([np.sin(angle), 0.0, -np.cos(angle)])
    x = np.linspace(0.0, LENGTH, points)[:, None] * direction
    inv_mass = np.full(points, float(points - 1))
    inv_mass[0] = 0.0
    edges = [(i, i + 1) for i in range(points - 1)]
    return Model(x, edges, inv_mass, 0.0, damping=0.0, strain_limit=None,
                 integrator=integrator)


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


def first_mode(points: int, substeps: int, integrator: str) -> float:
    """Amplitude of a hanging rope's slowest swing after ``SECONDS`` s, as a fraction of
    its start (the square root of the swing's energy over its start): settled (damping
    2 /s), turned rigidly by 3 degrees about its pin (its lengths kept), released, damping 0.
    The energy is kinetic + gravitational relative to the settled shape."""
    model = chain(points, 0.0, integrator)
    settling = Model(model.particle_rest_x, model.edge_index, model.particle_inv_mass, 0.0,
                     damping=2.0, strain_limit=None)
    state = settling.state()
    for _ in range(24 * 5):
        step(settling, state, DT, substeps)
    settled = state.x.copy()
    turn = np.radians(3.0)
    x, z = state.x[:, 0].copy(), state.x[:, 2].copy()
    state.x[:, 0] = np.cos(turn) * x - np.sin(turn) * z
    state.x[:, 2] = np.sin(turn) * x + np.cos(turn) * z
    state.v[:] = 0.0
    w = model.particle_inv_mass
    mass = np.divide(1.0, w, out=np.zeros_like(w), where=w > 0.0)

    def energy() -> float:
        kinetic = 0.5 * float(np.sum(mass[:, None] * state.v ** 2))
        return kinetic + 9.81 * float(np.sum(mass * (state.x[:, 2] - settled[:, 2])))

    start = energy()
    for _ in range(int(SECONDS / DT)):
        step(model, state, DT, substeps)
    return float(np.sqrt(max(energy(), 0.0) / start))


def main(argv: list[str]) -> int:
    substep_counts = (5, 10, 20, 40)
    print(f"\nSwing left after {SECONDS:.0f} s, released from 120 degrees, damping 0 "
          "(the exact motion keeps 120), implicit Euler / BDF2\n")
    print("| S | pendulum (1 segment) | rope, 20 points | rope, 100 points | "
          "hanging rope's slowest swing, 100 points |")
    print("|---|---|---|---|---|")
    for substeps in substep_counts:
        cells = []
        for n in (2, 20, 100):
            kept = [last_swing(tip_angles(chain(n, 120.0, integrator), substeps, SECONDS))
                    for integrator in ("euler", "bdf2")]
            cells.append(f"{kept[0]:.0f} / {kept[1]:.0f} deg")
        modes = [first_mode(100, substeps, integrator) for integrator in ("euler", "bdf2")]
        cells.append(f"{100 * modes[0]:.0f} / {100 * modes[1]:.0f} %")
        print(f"| {substeps} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
