"""The direct chain solve: every distance constraint of a rope projected at once, per substep.

One Gauss-Seidel sweep per substep leaves a residual that grows with the square of the point
count (a stiff 100-point rope stretches 42 % at S = 10). Here each substep instead takes one
Newton step on the whole chain's XPBD system (Macklin et al. 2016 eq. 9, lambda reset):

    (J W J^T + alpha_tilde) dlambda = -C(x_pred),      dx = W J^T dlambda

J is the Jacobian of the M = n - 1 distance constraints, W the inverse masses, alpha_tilde =
alpha / h^2. Along a chain, constraint e touches particles e and e + 1 only, so the matrix is
tridiagonal: diagonal w_e + w_{e+1} + alpha_tilde_e, off-diagonal -w_{e+1} (n_e . n_{e+1}).
It is solved exactly with the Thomas algorithm, O(n) (Deul, Kugelstadt, Weiler & Bender,
"Direct Position-Based Solver for Stiff Rods", 2018, do the same for rods). The matrix is
symmetric positive definite (semi-definite only for rigid, fully pinned pairs, guarded), so
elimination needs no pivoting. For one edge this is plain XPBD's update exactly, and a
constraint under tension T still settles at C = alpha T.

The data layout is the lane layout of ``topology.LaneLayout`` (16 chains interleaved), with
the edge slots carrying scratch fields: the segment vector d and the Thomas factors (see
``topology``). The bending solve that follows the stretch solve is in ``kernels_bending``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from .jit import kernel, parallel_kernel
from .kernels_bending import _bend_factor, _bend_solve
from .kernels_lanes import (
    _ESTRIDE,
    _FACTIVE,
    _FALPHA,
    _FBY,
    _FCP,
    _FDP,
    _FLAMBDA,
    _FN,
    _FREST,
    _FT,
    _FV,
    _FW,
    _FX,
    _FXP,
    _ONE,
    _PSTRIDE,
    _TWO,
    _ZERO,
)


@kernel
def _update_velocity(buffer, i, velocity_scale, lanes):
    """v <- (x - x_prev) * velocity_scale for a free particle (pins keep their velocity)."""
    L = np.uint64(lanes)
    L2 = L + L
    X = _FX * L
    V = _FV * L
    XP = _FXP * L
    W = _FW * L
    if buffer[i + W] > 0.0:
        buffer[i + V] = (buffer[i + X] - buffer[i + XP]) * velocity_scale
        buffer[i + V + L] = (buffer[i + X + L] - buffer[i + XP + L]) * velocity_scale
        buffer[i + V + L2] = (buffer[i + X + L2] - buffer[i + XP + L2]) * velocity_scale


@kernel
def _predict(buffer, i, g0, g1, g2, h, velocity_scale, settle, lanes):
    """With ``settle``, first the last substep's velocity (``_update_velocity``); then
    x_prev <- x; v <- v + h g (free only); x <- x + h v. Selects, no conditional stores: a
    masked store followed by a load of the same place stalls the vector loop (measured)."""
    L = np.uint64(lanes)
    L2 = L + L
    X = _FX * L
    V = _FV * L
    XP = _FXP * L
    W = _FW * L
    free = buffer[i + W] > 0.0
    x = buffer[i + X]
    y = buffer[i + X + L]
    z = buffer[i + X + L2]
    u = buffer[i + V]
    v = buffer[i + V + L]
    w = buffer[i + V + L2]
    if settle:
        u = (x - buffer[i + XP]) * velocity_scale if free else u
        v = (y - buffer[i + XP + L]) * velocity_scale if free else v
        w = (z - buffer[i + XP + L2]) * velocity_scale if free else w
    u = u + h * g0 if free else u
    v = v + h * g1 if free else v
    w = w + h * g2 if free else w
    buffer[i + XP] = x
    buffer[i + XP + L] = y
    buffer[i + XP + L2] = z
    buffer[i + V] = u
    buffer[i + V + L] = v
    buffer[i + V + L2] = w
    buffer[i + X] = x + h * u
    buffer[i + X + L] = y + h * v
    buffer[i + X + L2] = z + h * w


@kernel
def _multiplier(edge_buffer, e, lanes):
    """lambda of edge slot e after a Newton step: the earlier steps' sum (the lambda field)
    plus this step's mu |d| (D' holds mu, the n field d; see ``_forward``)."""
    L = np.uint64(lanes)
    L2 = L + L
    N = _FN * L
    DP = _FDP * L
    LAMBDA = _FLAMBDA * L
    dx = edge_buffer[e + N]
    dy = edge_buffer[e + N + L]
    dz = edge_buffer[e + N + L2]
    return edge_buffer[e + LAMBDA] + edge_buffer[e + DP] * math.sqrt(dx * dx + dy * dy + dz * dz)


@kernel
def _edge_row(buffer, edge_buffer, a, e, inverse_h2, first, lanes):
    """The scaled row of edge slot e from particle slot a to a + PS (see ``_forward``): stores
    d_e = active (x_a - x_b), lambda (0 on the first step) and |d_e| (in slot a's bending
    scratch, for ``_may_exceed``; bending overwrites it later), returns (d_e, diagonal,
    right-hand side). A padding edge (active 0) or a zero-length one gets d = 0: an empty
    row, which moves nothing."""
    L = np.uint64(lanes)
    L2 = L + L
    PS = _PSTRIDE * L
    X = _FX * L
    W = _FW * L
    REST = _FREST * L
    ALPHA = _FALPHA * L
    ACTIVE = _FACTIVE * L
    N = _FN * L
    LAMBDA = _FLAMBDA * L
    LENGTH = _FBY * L
    b = a + PS
    multiplier = 0.0 if first else _multiplier(edge_buffer, e, lanes)
    edge_buffer[e + LAMBDA] = multiplier
    active = edge_buffer[e + ACTIVE]
    dx = (buffer[a + X] - buffer[b + X]) * active
    dy = (buffer[a + X + L] - buffer[b + X + L]) * active
    dz = (buffer[a + X + L2] - buffer[b + X + L2]) * active
    squared = dx * dx + dy * dy + dz * dz
    length = math.sqrt(squared)
    edge_buffer[e + N] = dx
    edge_buffer[e + N + L] = dy
    edge_buffer[e + N + L2] = dz
    buffer[a + LENGTH] = length
    alpha_tilde = edge_buffer[e + ALPHA] * inverse_h2
    rhs = -length * ((length - edge_buffer[e + REST]) + alpha_tilde * multiplier)
    diagonal = ((buffer[a + W] + buffer[b + W]) + alpha_tilde) * squared
    return dx, dy, dz, diagonal, rhs


@kernel
def _forward(buffer, edge_buffer, particle_offset, edge_offset, edges, inverse_h2, first,
             predict, settle, motion, lanes):
    """Thomas forward elimination of the chain's stretch system, scaled by the lengths.

    With d_e = x_e - x_{e+1} (unnormalised) and mu_e = dlambda_e / |d_e|, the system of the
    module docstring becomes D A D mu = D rhs, D = diag(|d_e|): diagonal
    (w_e + w_{e+1} + alpha_tilde_e) |d_e|^2, off-diagonal -w_{e+1} d_e . d_{e+1}, right-hand
    side -|d_e| (C_e + alpha_tilde_e lambda_e), and the move n_e dlambda_e = d_e mu_e. The same
    solution, without normalising the directions: one square root and one division per edge,
    as in the sweep. The matrix is symmetric, so row e's lower entry is row e - 1's upper one:
    row e computes it from d_{e-1} and d_e and finishes row e - 1's factor c'_{e-1} = upper /
    pivot (the C' field holds 1 / pivot until then). ``first``: the first Newton step of a
    substep (lambda 0); later steps first add the last step's mu |d| to lambda.

    With ``predict``, row e first predicts (``_predict``, ``settle`` and ``motion`` = (g0, g1,
    g2, h, velocity_scale)) the particle it reaches, so that the predict costs no pass of its
    own. ``predict`` is a literal at every call (one compiled variant each): as a run-time
    flag it cost the vector loop more than fusing saved."""
    g0, g1, g2, h, velocity_scale = motion
    L = np.uint64(lanes)
    L2 = L + L
    PS = _PSTRIDE * L
    ES = _ESTRIDE * L
    W = _FW * L
    N = _FN * L
    CP = _FCP * L
    DP = _FDP * L
    if predict:
        for lane in range(L):
            _predict(buffer, particle_offset + np.uint64(lane), g0, g1, g2, h, velocity_scale,
                     settle, lanes)
    for lane in range(L):
        l = np.uint64(lane)
        e = edge_offset + l
        if predict:
            _predict(buffer, particle_offset + PS + l, g0, g1, g2, h, velocity_scale, settle,
                     lanes)
        _, _, _, diagonal, rhs = _edge_row(buffer, edge_buffer, particle_offset + l, e,
                                           inverse_h2, first, lanes)
        inverse_pivot = 1.0 / diagonal if diagonal > 0.0 else 0.0
        edge_buffer[e + CP] = inverse_pivot
        edge_buffer[e + DP] = rhs * inverse_pivot
    for slot in range(edges - _ONE):
        p = np.uint64(slot) + _ONE
        a0 = particle_offset + p * PS
        e0 = edge_offset + p * ES
        for lane in range(L):
            l = np.uint64(lane)
            e = e0 + l
            a = a0 + l
            if predict:
                _predict(buffer, a + PS, g0, g1, g2, h, velocity_scale, settle, lanes)
            dx, dy, dz, diagonal, rhs = _edge_row(buffer, edge_buffer, a, e, inverse_h2, first,
                                                  lanes)
            d = e - ES
            lower = -buffer[a + W] * (edge_buffer[d + N] * dx + edge_buffer[d + N + L] * dy
                                      + edge_buffer[d + N + L2] * dz)
            c_before = lower * edge_buffer[d + CP]
            edge_buffer[d + CP] = c_before
            pivot = diagonal - lower * c_before
            inverse_pivot = 1.0 / pivot if pivot > 0.0 else 0.0
            edge_buffer[e + CP] = inverse_pivot
            edge_buffer[e + DP] = (rhs - lower * edge_buffer[d + DP]) * inverse_pivot


@kernel
def _move(buffer, i, dx, dy, dz, lanes):
    """x <- x + w dx."""
    L = np.uint64(lanes)
    L2 = L + L
    X = _FX * L
    W = _FW * L
    w = buffer[i + W]
    buffer[i + X] += w * dx
    buffer[i + X + L] += w * dy
    buffer[i + X + L2] += w * dz


@kernel
def _may_exceed(buffer, edge_buffer, a, e, mu, strain_limit, inverse_h2, lanes):
    """Whether the strain limit could move an end of edge slot e (from particle slot a, its
    Newton step mu just taken): ``_limited``'s test, with lambda from the |d| that
    ``_edge_row`` left, on squared lengths with a margin of 1e-6, so it is never false where
    that test is true (it only decides where the limiter runs)."""
    L = np.uint64(lanes)
    L2 = L + L
    PS = _PSTRIDE * L
    X = _FX * L
    T = _FT * L
    REST = _FREST * L
    ALPHA = _FALPHA * L
    LAMBDA = _FLAMBDA * L
    LENGTH = _FBY * L
    b = a + PS
    dx = buffer[b + X] - buffer[a + X]
    dy = buffer[b + X + L] - buffer[a + X + L]
    dz = buffer[b + X + L2] - buffer[a + X + L2]
    multiplier = edge_buffer[e + LAMBDA] + mu * buffer[a + LENGTH]
    limit = (edge_buffer[e + REST] + edge_buffer[e + ALPHA] * inverse_h2 * abs(multiplier)) * (
        1.0 + strain_limit)
    hanging = (buffer[b + T] == 1.0) | (buffer[a + T] == -1.0)
    return (dx * dx + dy * dy + dz * dz > limit * limit * 0.999999) & hanging


@kernel
def _solve_chain(buffer, edge_buffer, particle_offset, edge_offset, edges, inverse_h2, first,
                 predict, settle, motion, strain_limit, lanes):
    """One Newton step on the chain's stretch constraints (``_forward``, then back
    substitution from the free end, moving each particle as soon as both of its multipliers
    are known: dx_p = w_p (d_p mu_p - d_{p-1} mu_{p-1})). mu stays in the D' field,
    lambda is ``_multiplier``.

    Returns the lowest edge slot of any lane that ``_may_exceed`` the strain limit once the
    step is done (``edges`` if none, or if the limit is off): the limiter starts there, or is
    skipped. Per lane, the lowest such slot from p on is carried down the chain in the C'
    field of slot p (free once mu_p is known): a reduction across the lanes, or a running
    value kept elsewhere, stops the lane loop from vectorising (measured).
    """
    L = np.uint64(lanes)
    L2 = L + L
    PS = _PSTRIDE * L
    ES = _ESTRIDE * L
    N = _FN * L
    CP = _FCP * L
    DP = _FDP * L
    XP = _FXP * L
    _forward(buffer, edge_buffer, particle_offset, edge_offset, edges, inverse_h2, first, predict,
             settle, motion, lanes)
    last = edges - _ONE
    e0 = edge_offset + last * ES
    i0 = particle_offset + edges * PS
    none = float(edges)
    for lane in range(L):
        l = np.uint64(lane)
        e = e0 + l
        mu = edge_buffer[e + DP]
        _move(buffer, i0 + l, -edge_buffer[e + N] * mu, -edge_buffer[e + N + L] * mu,
              -edge_buffer[e + N + L2] * mu, lanes)
        edge_buffer[e + CP] = none
    # The row p runs down from last - 1 to 0. It is read back from memory each time (the
    # x_prev field, lane 0, of the spare slot before the block): computed from the loop
    # counter, LLVM sees a decreasing unsigned address and leaves the lane loop scalar
    # (measured).
    counter = particle_offset - PS + XP
    buffer[counter] = float(last)
    for _ in range(last):
        p = np.uint64(buffer[counter]) - _ONE
        buffer[counter] = float(p)
        e0 = edge_offset + p * ES
        i0 = particle_offset + (p + _ONE) * PS
        checked = float(p + _ONE)
        for lane in range(L):
            l = np.uint64(lane)
            e = e0 + l
            f = e + ES
            i = i0 + l
            mu_next = edge_buffer[f + DP]
            mu = edge_buffer[e + DP] - edge_buffer[e + CP] * mu_next
            edge_buffer[e + DP] = mu
            _move(buffer, i,
                  edge_buffer[f + N] * mu_next - edge_buffer[e + N] * mu,
                  edge_buffer[f + N + L] * mu_next - edge_buffer[e + N + L] * mu,
                  edge_buffer[f + N + L2] * mu_next - edge_buffer[e + N + L2] * mu, lanes)
            # edge p + 1 has both ends final now
            hit = _may_exceed(buffer, edge_buffer, i, f, mu_next, strain_limit, inverse_h2, lanes)
            edge_buffer[e + CP] = checked if hit else edge_buffer[f + CP]
    lowest = none
    for lane in range(L):
        l = np.uint64(lane)
        e = edge_offset + l
        mu = edge_buffer[e + DP]
        _move(buffer, particle_offset + l, edge_buffer[e + N] * mu, edge_buffer[e + N + L] * mu,
              edge_buffer[e + N + L2] * mu, lanes)
        hit = _may_exceed(buffer, edge_buffer, particle_offset + l, e, mu, strain_limit,
                          inverse_h2, lanes)
        lowest = min(lowest, 0.0 if hit else edge_buffer[e + CP])
    if strain_limit < 0.0:
        return edges
    return np.uint64(lowest)


# Bending: one linear vector constraint per interior point p of a chain,
#
#     C_p = (x_{p+1} - x_p) / L_p - (x_p - x_{p-1}) / L_{p-1}          (3 components)
#
# the change of the rest-length-scaled tangent, |C_p| ~ the turning angle. Its energy
# |C_p|^2 / (2 alpha_p) with alpha_p = l_p / EI (l_p = (L_{p-1} + L_p) / 2) is the discrete
# elastic-rod bending energy EI kappa^2 l_p / 2, so EI [N m^2] is a material constant and the
# rope bends the same at any resolution. Being linear in x, C has a constant Jacobian B (the
# coefficients 1/L_{p-1}, -(1/L_{p-1} + 1/L_p), 1/L_p), the same for x, y and z, so the system
# (B W B^T + alpha_tilde) dlambda = -C is one pentadiagonal matrix for the whole substep loop:
# factored once per frame (LDL^T), solved per substep for the three components at once.
# The straight line is the rest state (rest curvature is not kept).


@kernel
def _limited(outer, inner, e, edge_buffer, strain_limit, inverse_h2, buffer, side, lanes):
    """Strain limiting (Provot 1995) of one segment of a part of a chain hanging off a pin.

    A Newton step cannot follow segments that turn by a radian or more in one substep (the
    tip of a whipping rope; a 1000-point rope at 20 substeps); what it leaves is excess
    stretch. Walking away from the pin, as in follow-the-leader (Müller, Kim & Chentanez
    2012), a segment longer than (L0 + alpha_tilde |lambda|) (1 + strain_limit), its rest
    length plus the compliant stretch its tension explains, is shortened by moving its outer
    end, which guarantees the bound in one O(n) pass. Returns the outer end's new position
    (unchanged unless ``outer`` hangs on this ``side`` of the pins and is over-stretched;
    computed branch-free so that the lane loop vectorises).
    """
    L = np.uint64(lanes)
    L2 = L + L
    X = _FX * L
    T = _FT * L
    REST = _FREST * L
    ALPHA = _FALPHA * L
    dx = buffer[outer + X] - buffer[inner + X]
    dy = buffer[outer + X + L] - buffer[inner + X + L]
    dz = buffer[outer + X + L2] - buffer[inner + X + L2]
    length = math.sqrt(dx * dx + dy * dy + dz * dz)
    limit = (edge_buffer[e + REST]
             + edge_buffer[e + ALPHA] * inverse_h2 * abs(_multiplier(edge_buffer, e, lanes))) * (
        1.0 + strain_limit)
    over = (length > limit) & (buffer[outer + T] == side) & (strain_limit >= 0.0)
    scale = limit / length if over else 1.0
    x = buffer[inner + X] + dx * scale if over else buffer[outer + X]
    y = buffer[inner + X + L] + dy * scale if over else buffer[outer + X + L]
    z = buffer[inner + X + L2] + dz * scale if over else buffer[outer + X + L2]
    return x, y, z


@kernel
def _limit_trailing(buffer, edge_buffer, particle_offset, edge_offset, start, edges,
                    strain_limit, inverse_h2, lanes):
    """``_limited`` towards the chain end (moving the segment's far end) for edge slots
    ``start`` to the last: segments before the first that ``_may_exceed`` the limit are not
    moved by it (nothing before them moved either), so starting there changes nothing."""
    L = np.uint64(lanes)
    L2 = L + L
    PS = _PSTRIDE * L
    ES = _ESTRIDE * L
    X = _FX * L
    for slot in range(start, edges):
        p = np.uint64(slot)
        a0 = particle_offset + p * PS
        e0 = edge_offset + p * ES
        for lane in range(L):
            l = np.uint64(lane)
            a = a0 + l
            b = a + PS
            x, y, z = _limited(b, a, e0 + l, edge_buffer, strain_limit, inverse_h2, buffer, 1.0,
                               lanes)
            buffer[b + X] = x
            buffer[b + X + L] = y
            buffer[b + X + L2] = z


@kernel
def _limit_leading(buffer, edge_buffer, particle_offset, edge_offset, start, strain_limit,
                   inverse_h2, lanes):
    """``_limited`` towards the chain start, for free points before a chain's first pin, from
    edge slot ``start`` down to the first."""
    L = np.uint64(lanes)
    L2 = L + L
    PS = _PSTRIDE * L
    ES = _ESTRIDE * L
    X = _FX * L
    for back in range(start + _ONE):
        p = start - np.uint64(back)
        a0 = particle_offset + p * PS
        e0 = edge_offset + p * ES
        for lane in range(L):
            l = np.uint64(lane)
            a = a0 + l
            x, y, z = _limited(a, a + PS, e0 + l, edge_buffer, strain_limit, inverse_h2,
                               buffer, -1.0, lanes)
            buffer[a + X] = x
            buffer[a + X + L] = y
            buffer[a + X + L2] = z


@kernel
def _limit_chain(buffer, edge_buffer, particle_offset, edge_offset, edges, leading, lowest,
                 strain_limit, inverse_h2, lanes):
    """The strain limit of a block after its solve, unless no edge slot ``_may_exceed`` it
    (``lowest`` is ``edges``): towards the chain start where ``leading`` says some chain has
    free points before its first pin, then towards the end from edge slot ``lowest`` on."""
    if lowest >= edges:
        return
    if leading:
        _limit_leading(buffer, edge_buffer, particle_offset, edge_offset, edges - _ONE,
                       strain_limit, inverse_h2, lanes)
    _limit_trailing(buffer, edge_buffer, particle_offset, edge_offset, lowest, edges,
                    strain_limit, inverse_h2, lanes)


@kernel
def _direct_block(buffer, edge_buffer, particle_offset, edge_offset, length, leading, bending,
                  g0, g1, g2, h, substeps, newton_iterations, strain_limit, velocity_scale, lanes):
    """All substeps of one block of LANES chains: predict; ``newton_iterations`` direct solves
    of the stretch constraints; bending; strain limiting (``_limit_chain``, off if
    ``strain_limit`` < 0). The velocity update of a substep is fused with the next substep's
    predict (the positions are final by then); the last one ends the call."""
    L = np.uint64(lanes)
    PS = _PSTRIDE * L
    inverse_h2 = 1.0 / (h * h)
    edges = length - _ONE
    motion = (g0, g1, g2, h, velocity_scale)
    if bending:
        _bend_factor(buffer, edge_buffer, particle_offset, edge_offset, length, inverse_h2, lanes)
    for substep in range(substeps):
        if length < _TWO:
            for lane in range(L):
                _predict(buffer, particle_offset + np.uint64(lane), g0, g1, g2, h,
                         velocity_scale, substep > 0, lanes)
            continue
        # the first Newton step predicts on the way (``predict`` a literal, see ``_forward``)
        lowest = _solve_chain(buffer, edge_buffer, particle_offset, edge_offset, edges,
                              inverse_h2, True, True, substep > 0, motion, strain_limit, lanes)
        for _ in range(newton_iterations - 1):
            lowest = _solve_chain(buffer, edge_buffer, particle_offset, edge_offset, edges,
                                  inverse_h2, False, False, False, motion, strain_limit, lanes)
        if bending:
            _bend_solve(buffer, edge_buffer, particle_offset, edge_offset, length, lanes)
            if strain_limit >= 0.0:  # bending moved the particles after the check
                lowest = _ZERO
        _limit_chain(buffer, edge_buffer, particle_offset, edge_offset, edges, leading, lowest,
                     strain_limit, inverse_h2, lanes)
    for slot in range(length):
        base = particle_offset + np.uint64(slot) * PS
        for lane in range(L):
            _update_velocity(buffer, base + np.uint64(lane), velocity_scale, lanes)


@kernel
def _direct_blocks(buffer, edge_buffer, block_particle_offset, block_edge_offset, block_length,
                   block_leading, block_bending, gravity, h, substeps, newton_iterations,
                   strain_limit, velocity_scale, lanes):
    for b in range(block_length.shape[0]):
        _direct_block(buffer, edge_buffer, block_particle_offset[b], block_edge_offset[b],
                      block_length[b], block_leading[b], block_bending[b], gravity[0],
                      gravity[1], gravity[2], h, substeps, newton_iterations, strain_limit,
                      velocity_scale, lanes)


@kernel
def direct_substeps(buffer, edge_buffer, block_particle_offset, block_edge_offset, block_length,
                    block_leading, block_bending, gravity, h, substeps, newton_iterations,
                    strain_limit, velocity_scale):
    """``_direct_block`` over every block of 16 lanes, one thread."""
    _direct_blocks(buffer, edge_buffer, block_particle_offset, block_edge_offset, block_length,
                   block_leading, block_bending, gravity, h, substeps, newton_iterations,
                   strain_limit, velocity_scale, 16)


@kernel
def direct_substeps_single(buffer, edge_buffer, block_particle_offset, block_edge_offset,
                           block_length, block_leading, block_bending, gravity, h, substeps,
                           newton_iterations, strain_limit, velocity_scale):
    """``direct_substeps`` for blocks of one rope each (a lane count of 1)."""
    _direct_blocks(buffer, edge_buffer, block_particle_offset, block_edge_offset, block_length,
                   block_leading, block_bending, gravity, h, substeps, newton_iterations,
                   strain_limit, velocity_scale, 1)


@parallel_kernel
def direct_substeps_parallel(buffer, edge_buffer, block_particle_offset, block_edge_offset,
                             block_length, block_leading, block_bending, gravity, h, substeps,
                             newton_iterations, strain_limit, velocity_scale):
    """``direct_substeps`` with blocks spread over threads (same result for any count)."""
    for b in prange(block_length.shape[0]):
        _direct_block(buffer, edge_buffer, block_particle_offset[b], block_edge_offset[b],
                      block_length[b], block_leading[b], block_bending[b], gravity[0],
                      gravity[1], gravity[2], h, substeps, newton_iterations, strain_limit,
                      velocity_scale, 16)
