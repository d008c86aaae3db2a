"""The energy a rope stores in its constraints, for checks that count every energy.

A rope's total energy is kinetic + gravitational + what its compliant constraints store:

    stretch   E_s = sum over segments with alpha > 0 of (|x_i - x_j| - l)^2 / (2 alpha)
    bending   E_b = sum over interior chain points with alpha_b > 0 of |C_p|^2 / (2 alpha_b),
              C_p = (x_{p+1} - x_p) / L_p - (x_p - x_{p-1}) / L_{p-1}

(alpha [m/N], alpha_b [1/(N m)], as ``Model``; the XPBD potential U = C^2 / (2 alpha) of
Macklin et al. 2016). A rope modelled as a curl stores bending energy at its first frame,
since bending pulls towards straight; released, it turns that energy into motion. A check
that counted only kinetic and gravitational energy took that for energy from nowhere.
Stretch constraints with zero compliance store none (they hold C = 0); a bending row of
zero compliance is solved as stiff as the solve allows (``kernels_joint.RIGID_BEND``: EI
10^4 N m^2) and stores what that stiffness does: a rigid rope modelled curled, whose rows
pull it straight, releases it. A rod (``core.rod``) bends
against its rest shape, C_p less its target b_p, and stores k_p (phi_p - tau_p)^2 / 2 in its
twist.
"""

from __future__ import annotations

import numpy as np

from .model import Model
from .rod import RodState, fresh_state, rod_energies
from .solve.kernels_joint import RIGID_BEND


def stretch_energy(model: Model, x: np.ndarray) -> float:
    """E_s [J] of positions ``x`` (N, 3) [m]: the compliant segments' stretch."""
    alpha = model.edge_compliance
    soft = alpha > 0.0
    if not soft.any():
        return 0.0
    edges = model.edge_index[soft]
    length = np.linalg.norm(x[edges[:, 0]] - x[edges[:, 1]], axis=1)
    stretch = length - model.edge_rest_length[soft]
    return float(0.5 * (stretch * stretch / alpha[soft]).sum())


def bending_energy(model: Model, x: np.ndarray) -> float:
    """E_b [J] of positions ``x`` (N, 3) [m], at the points that have a bending row in the
    solve: interior points of the chains the lane solve runs, none at a zero-length
    segment (``layout.plan``)."""
    compliance = model.particle_bend_compliance
    if compliance is None or model.plan.lanes is None:
        return 0.0
    chains, chain_edges = model.decomposition.chains, model.decomposition.chain_edges
    rest = model.edge_rest_length
    total = 0.0
    for chain, edges in zip(chains, chain_edges, strict=True):
        if len(chain) < 3:
            continue
        lengths = rest[edges]
        points = chain[1:-1]
        # a compliance of 0 (rigid) is solved as the solve's floor, and stores as it does
        alpha = np.maximum(compliance[points],
                           RIGID_BEND * 0.5 * (lengths[:-1] + lengths[1:]))
        rows = (lengths[:-1] > 0.0) & (lengths[1:] > 0.0) & (alpha > 0.0)
        if not rows.any():
            continue
        before = (x[chain[1:-1]] - x[chain[:-2]])[rows] / lengths[:-1][rows, None]
        after = (x[chain[2:]] - x[chain[1:-1]])[rows] / lengths[1:][rows, None]
        c = after - before
        total += float(0.5 * ((c * c).sum(axis=1) / alpha[rows]).sum())
    return total


def stored_energy(model: Model, x: np.ndarray, rod: RodState | None = None) -> float:
    """E_s + E_b [J]: what the rope's constraints store at positions ``x`` (N, 3) [m]. For a
    Model with a rod, its bending against its rest shape and its twist (``rod.rod_energies``)
    with the frames of ``rod`` (the State's; its rest frames if None)."""
    layout = model.rod_layout
    if layout is None or model.plan.lanes is None:
        return stretch_energy(model, x) + bending_energy(model, x)
    frames = rod if rod is not None else fresh_state(layout, model.particle_rest_x, x)
    bending, twist = rod_energies(layout, frames, x)
    return stretch_energy(model, x) + bending + twist
