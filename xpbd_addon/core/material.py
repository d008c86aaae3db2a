"""Materials given once, per unit length, so that a rope behaves the same at any resolution.

XPBD's compliance alpha is per constraint: resample a rope from 20 to 200 points and the
same alpha makes it ten times more stretchy (ten times as many springs in series). A material
instead gives the continuum quantities, and ``rope_parameters`` turns them into per-particle
masses and per-constraint compliances for the points at hand:

    mass m_i      = rho * l_i                 l_i: half the length of the segments at point i
    stretch alpha = L_e / EA                  so a rope under tension T stretches T / EA per m
    bending alpha = l_i / EI                  the discrete rod energy EI kappa^2 l_i / 2
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .validation import as_float_array, as_index_pairs, as_positive_float


@dataclass(frozen=True)
class RopeMaterial:
    """A rope material. ``stretch_stiffness`` None is inextensible; ``bend_stiffness`` None
    has no bending stiffness (a chain, a string)."""

    linear_density: float
    """Mass per length [kg/m]"""
    stretch_stiffness: float | None = None
    """Axial stiffness EA [N]: the tension that would double a length"""
    bend_stiffness: float | None = None
    """Bending stiffness EI [N m^2]"""


PRESETS: dict[str, RopeMaterial] = {
    # Rough real-world figures, for a start; EI of stranded ropes is far below a solid rod's.
    "string": RopeMaterial(linear_density=0.002, stretch_stiffness=300.0, bend_stiffness=None),
    "rope": RopeMaterial(linear_density=0.065, stretch_stiffness=3.0e4, bend_stiffness=2.0e-3),
    "steel cable": RopeMaterial(linear_density=0.15, stretch_stiffness=2.0e6, bend_stiffness=0.3),
    "chain": RopeMaterial(linear_density=1.4, stretch_stiffness=3.0e6, bend_stiffness=None),
}
"""Common materials: a 2 mm cotton string, a 10 mm polyester rope, a 6 mm steel wire rope,
an 8 mm steel link chain."""


def rope_parameters(positions, edges, material: RopeMaterial, *, pinned=None):
    """Per-particle inverse masses [1/kg], per-edge compliance [m/N] and per-particle bending
    compliance [1/(N m)] (or None) of ``material`` on the rest shape ``positions`` (N, 3) [m]
    with ``edges`` (M, 2). ``pinned``: optional boolean (N,) mask of pinned particles (inverse
    mass 0). Returns ``(inv_mass, compliance, bending_compliance)`` for ``Model``."""
    x = as_float_array(positions, "positions", (None, 3))
    e = as_index_pairs(edges, "edges", len(x))
    density = as_positive_float(material.linear_density, "linear_density")
    lengths = np.linalg.norm(x[e[:, 0]] - x[e[:, 1]], axis=1)
    share = np.zeros(len(x))
    np.add.at(share, e[:, 0], 0.5 * lengths)
    np.add.at(share, e[:, 1], 0.5 * lengths)
    # A point whose segments all have no length (modelled on its neighbour's spot) carries no
    # rope, but it is free: without a mass it would be held still as a pinned point is. It
    # gets the least share of the points that carry rope.
    used = np.zeros(len(x), dtype=bool)
    used[e.reshape(-1)] = True
    empty = used & (share == 0.0)
    if empty.any() and (share > 0.0).any():
        share[empty] = share[share > 0.0].min()
    mass = density * share
    inv_mass = np.divide(1.0, mass, out=np.zeros_like(mass), where=mass > 0.0)
    if pinned is not None:
        inv_mass[np.asarray(pinned, dtype=bool)] = 0.0
    if material.stretch_stiffness is None:
        compliance = np.zeros(len(e))
    else:
        compliance = lengths / as_positive_float(material.stretch_stiffness, "stretch_stiffness")
    bending = None
    if material.bend_stiffness is not None:
        # A segment between two pins is held rigid: it does not bend, so it adds nothing to the
        # bending length of its ends. Counting it would make a clamp (two pinned points) a
        # full-weight hinge, a first-order error (11 % too much droop at 20 points).
        flexible = np.ones(len(e), dtype=bool)
        if pinned is not None:
            held = np.asarray(pinned, dtype=bool)
            flexible = ~(held[e[:, 0]] & held[e[:, 1]])
        bend_share = np.zeros(len(x))
        np.add.at(bend_share, e[flexible, 0], 0.5 * lengths[flexible])
        np.add.at(bend_share, e[flexible, 1], 0.5 * lengths[flexible])
        bending = bend_share / as_positive_float(material.bend_stiffness, "bend_stiffness")
    return inv_mass, compliance, bending
