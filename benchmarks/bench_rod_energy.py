"""Rods released at random: how many gain energy, per substep count.

Curls drawn out of their plane (12-60 points, 1-8 rad, 1 m, 20 cm out of plane), hung by
their first point under gravity, Material stiffness (0.05-1 kg/m, EI 0.01-5 N m^2), the
twist default (EI / 1.3, with twist dynamics), GJ = 0.05 EI or none (held), damping 0.1 /s,
every particle set moving at random (normal, 0-2 m/s), 3, 5, 10 or 20 substeps at 24 fps,
3 s each. A case gains where its energy (kinetic, the twist's kinetic, stored, gravitational)
rises more than 1 % of its start's magnitude above the start in any frame. Seeds 1-9 of 150
cases each by default (docs/physics.md, Rods).

    python -m benchmarks rod_energy [--seeds=1-9] [--cases=150]
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.bench_collision_ab import _option  # noqa: E402
from xpbd_addon.core import Model, Rod, step  # noqa: E402
from xpbd_addon.core.energy import stored_energy  # noqa: E402
from xpbd_addon.core.material import RopeMaterial, rope_parameters  # noqa: E402

DT = 1.0 / 24.0
G = 9.81
FRAMES = 72


def curl(points: int, turn: float) -> np.ndarray:
    """A curl of 1 m turning through ``turn`` [rad], drawn 20 cm out of its plane."""
    angle = np.linspace(0.0, turn, points)
    return np.stack([np.sin(angle) / turn, np.linspace(0.0, 0.2, points),
                     (1.0 - np.cos(angle)) / turn], axis=1)


def hung_curl(points: int, turn: float, bend_stiffness: float, density: float,
              twist_stiffness: float | None) -> Model:
    """A rod modelled as ``curl``, hung by its first point: Material stiffness of
    ``density`` [kg/m] and EI ``bend_stiffness`` [N m^2], GJ ``twist_stiffness`` [N m^2]
    (``core.Rod``: None the default, inf held), radius 1 cm, damping 0.1 /s."""
    x = curl(points, turn)
    edges = [(i, i + 1) for i in range(points - 1)]
    pinned = np.zeros(points, dtype=bool)
    pinned[0] = True
    inv_mass, compliance, bending = rope_parameters(
        x, edges, RopeMaterial(density, None, bend_stiffness), pinned=pinned)
    return Model(x, edges, inv_mass, compliance, bending_compliance=bending, radius=0.01,
                 damping=0.1, rod=Rod(twist_stiffness=twist_stiffness))


def energy(model: Model, state, mass: np.ndarray) -> float:
    """[J] kinetic + the twist's kinetic + stored + gravitational."""
    layout = model.rod_layout
    return (0.5 * (mass[:, None] * state.v**2).sum()
            + 0.5 * (layout.inertia * state.rod.twist_rate[layout.particles]**2).sum()
            + stored_energy(model, state.x, state.rod) + G * (mass * state.x[:, 2]).sum())


def one_case(rng: np.random.Generator) -> tuple[int, bool]:
    """(substeps, gained) of one random case, its draws in a fixed order."""
    points = int(rng.integers(12, 61))
    turn = rng.uniform(1, 8)
    bend_stiffness = 10 ** rng.uniform(-2, 0.7)
    density = 10 ** rng.uniform(-1.3, 0)
    substeps = int(rng.choice([3, 5, 10, 20]))
    twist_kind = rng.choice([0, 1, 2])
    twist = None if twist_kind == 0 else (0.05 * bend_stiffness if twist_kind == 1 else np.inf)
    model = hung_curl(points, turn, bend_stiffness, density, twist)
    inv_mass = model.particle_inv_mass
    state = model.state()
    state.v = rng.normal(0, rng.uniform(0, 2), state.x.shape)
    state.v[0] = 0.0
    mass = np.where(inv_mass > 0, 1.0 / np.where(inv_mass > 0, inv_mass, 1.0), 0.0)
    step(model, state, 1e-9, 1)  # the rod's frames
    start = top = energy(model, state, mass)
    for _ in range(FRAMES):
        step(model, state, DT, substeps)
        top = max(top, energy(model, state, mass))
    return substeps, top - start > 0.01 * max(abs(start), 1e-9)


def main() -> None:
    first, last = (int(s) for s in _option("seeds", "1-9").split("-"))
    cases = int(_option("cases", "150"))
    ran, gained = Counter(), Counter()
    began = time.perf_counter()
    for seed in range(first, last + 1):
        rng = np.random.default_rng(seed)
        for _ in range(cases):
            substeps, gain = one_case(rng)
            ran[substeps] += 1
            gained[substeps] += gain
    print(f"\nreleased curls, seeds {first}-{last}, {cases} cases each "
          f"({time.perf_counter() - began:.0f} s): cases whose energy rose over 1 %\n")
    print("| substeps | gained | cases |")
    print("|---|---|---|")
    for substeps in sorted(ran):
        print(f"| {substeps} | {gained[substeps]} | {ran[substeps]} |")


if __name__ == "__main__":
    main()
