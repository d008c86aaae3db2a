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
elimination needs no pivoting. For one edge this is the seed's update exactly, and a
constraint under tension T still settles at C = alpha T.

The data layout is the lane layout of ``topology.LaneLayout`` (16 chains interleaved), with
the edge slots carrying four scratch fields: the unit direction n and the Thomas factors.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from .topology import (
    EDGE_ACTIVE,
    EDGE_C_PRIME,
    EDGE_COMPLIANCE,
    EDGE_D_PRIME,
    EDGE_INVERSE_REST,
    EDGE_LAMBDA,
    EDGE_N,
    EDGE_REST,
    EDGE_STRIDE,
    LANES,
    PARTICLE_BEND_COMPLIANCE,
    PARTICLE_BEND_D_INVERSE,
    PARTICLE_BEND_L1,
    PARTICLE_BEND_L2,
    PARTICLE_BEND_Y,
    PARTICLE_STRIDE,
    PARTICLE_TETHER,
    PARTICLE_V,
    PARTICLE_W,
    PARTICLE_X,
    PARTICLE_X_PREV,
)

_L = np.uint64(LANES)
_L2 = np.uint64(2 * LANES)
_PS = np.uint64(PARTICLE_STRIDE * LANES)
_ES = np.uint64(EDGE_STRIDE * LANES)
_X = np.uint64(PARTICLE_X * LANES)
_V = np.uint64(PARTICLE_V * LANES)
_XP = np.uint64(PARTICLE_X_PREV * LANES)
_W = np.uint64(PARTICLE_W * LANES)
_T = np.uint64(PARTICLE_TETHER * LANES)
_BA = np.uint64(PARTICLE_BEND_COMPLIANCE * LANES)
_BL1 = np.uint64(PARTICLE_BEND_L1 * LANES)
_BL2 = np.uint64(PARTICLE_BEND_L2 * LANES)
_BD = np.uint64(PARTICLE_BEND_D_INVERSE * LANES)
_BY = np.uint64(PARTICLE_BEND_Y * LANES)
_IR = np.uint64(EDGE_INVERSE_REST * LANES)
_REST = np.uint64(EDGE_REST * LANES)
_ALPHA = np.uint64(EDGE_COMPLIANCE * LANES)
_ACTIVE = np.uint64(EDGE_ACTIVE * LANES)
_N = np.uint64(EDGE_N * LANES)
_CP = np.uint64(EDGE_C_PRIME * LANES)
_DP = np.uint64(EDGE_D_PRIME * LANES)
_LAMBDA = np.uint64(EDGE_LAMBDA * LANES)
_ONE = np.uint64(1)
_ZERO = np.uint64(0)
_TWO = np.uint64(2)

def kernel(function):
    """``njit`` as every kernel here is compiled: cached on disk, numpy error model (no
    per-division branch), GIL released."""
    return njit(cache=True, error_model="numpy", nogil=True)(function)


def parallel_kernel(function):
    """``kernel`` with ``prange`` loops spread over threads."""
    return njit(cache=True, error_model="numpy", nogil=True, parallel=True)(function)


@kernel
def _direction(buffer, edge_buffer, a, b, e):
    """Store the unit direction n_e = (x_a - x_b) / |x_a - x_b| of edge slot e (zero for a
    padding or zero-length edge, which decouples it) and return its constraint value C_e."""
    dx = buffer[a + _X] - buffer[b + _X]
    dy = buffer[a + _X + _L] - buffer[b + _X + _L]
    dz = buffer[a + _X + _L2] - buffer[b + _X + _L2]
    length = math.sqrt(dx * dx + dy * dy + dz * dz)
    active = edge_buffer[e + _ACTIVE]
    inverse = active / length if length > 0.0 else 0.0
    edge_buffer[e + _N] = dx * inverse
    edge_buffer[e + _N + _L] = dy * inverse
    edge_buffer[e + _N + _L2] = dz * inverse
    return (length - edge_buffer[e + _REST]) if inverse != 0.0 else 0.0


@kernel
def _coupling(edge_buffer, e, f, w_shared):
    """Off-diagonal entry -w (n_e . n_f) between edge slots e and f = e + 1."""
    return -w_shared * (
        edge_buffer[e + _N] * edge_buffer[f + _N]
        + edge_buffer[e + _N + _L] * edge_buffer[f + _N + _L]
        + edge_buffer[e + _N + _L2] * edge_buffer[f + _N + _L2]
    )


@kernel
def _predict(buffer, i, g0, g1, g2, h):
    """x_prev <- x; v <- v + h g (free only); x <- x + h v."""
    buffer[i + _XP] = buffer[i + _X]
    buffer[i + _XP + _L] = buffer[i + _X + _L]
    buffer[i + _XP + _L2] = buffer[i + _X + _L2]
    if buffer[i + _W] > 0.0:
        buffer[i + _V] += h * g0
        buffer[i + _V + _L] += h * g1
        buffer[i + _V + _L2] += h * g2
    buffer[i + _X] += h * buffer[i + _V]
    buffer[i + _X + _L] += h * buffer[i + _V + _L]
    buffer[i + _X + _L2] += h * buffer[i + _V + _L2]


@kernel
def _move(buffer, i, dx, dy, dz):
    """x <- x + w dx."""
    w = buffer[i + _W]
    buffer[i + _X] += w * dx
    buffer[i + _X + _L] += w * dy
    buffer[i + _X + _L2] += w * dz


@kernel
def _update_velocity(buffer, i, velocity_scale):
    """v <- (x - x_prev) * velocity_scale for a free particle (pins keep their velocity)."""
    if buffer[i + _W] > 0.0:
        buffer[i + _V] = (buffer[i + _X] - buffer[i + _XP]) * velocity_scale
        buffer[i + _V + _L] = (buffer[i + _X + _L] - buffer[i + _XP + _L]) * velocity_scale
        buffer[i + _V + _L2] = (buffer[i + _X + _L2] - buffer[i + _XP + _L2]) * velocity_scale


@kernel
def _solve_chain(buffer, edge_buffer, particle_offset, edge_offset, edges, inverse_h2):
    """One Newton step on the chain's stretch constraints: factor, solve, move the particles.
    lambda accumulates in the edge slots; the velocity pass resets it for the next substep."""
    # Forward elimination. Row e needs n_{e+1} for its upper entry, so directions are
    # computed one edge ahead; C_{e+1} waits in the D' field until row e + 1 uses it.
    for lane in range(_L):
        l = np.uint64(lane)
        c0 = _direction(buffer, edge_buffer, particle_offset + l, particle_offset + _PS + l,
                        edge_offset + l)
        edge_buffer[edge_offset + l + _DP] = c0
    for slot in range(edges):
        p = np.uint64(slot)
        a0 = particle_offset + p * _PS
        e0 = edge_offset + p * _ES
        for lane in range(_L):
            l = np.uint64(lane)
            e = e0 + l
            a = a0 + l
            b = a + _PS
            w_a = buffer[a + _W]
            w_b = buffer[b + _W]
            alpha_tilde = edge_buffer[e + _ALPHA] * inverse_h2
            rhs = -edge_buffer[e + _DP] - alpha_tilde * edge_buffer[e + _LAMBDA]
            # The spare edge slots before the first and after the last edge are inactive
            # (n = 0), so the first row sees no lower and the last no upper neighbour.
            f = e + _ES
            edge_buffer[f + _DP] = _direction(buffer, edge_buffer, b, b + _PS, f)
            upper = _coupling(edge_buffer, e, f, w_b)
            lower = _coupling(edge_buffer, e - _ES, e, w_a)
            pivot = (w_a + w_b) + alpha_tilde - lower * edge_buffer[e - _ES + _CP]
            inverse_pivot = 1.0 / pivot if pivot > 0.0 else 0.0
            edge_buffer[e + _CP] = upper * inverse_pivot
            edge_buffer[e + _DP] = (rhs - lower * edge_buffer[e - _ES + _DP]) * inverse_pivot
    # Back substitution from the free end, moving each particle as soon as both of its
    # multipliers are known: dx_p = w_p (n_p dlambda_p - n_{p-1} dlambda_{p-1}).
    for lane in range(_L):
        l = np.uint64(lane)
        e = edge_offset + (edges - _ONE) * _ES + l
        dlambda = edge_buffer[e + _DP]
        edge_buffer[e + _LAMBDA] += dlambda
        _move(buffer, particle_offset + edges * _PS + l, -edge_buffer[e + _N] * dlambda,
              -edge_buffer[e + _N + _L] * dlambda, -edge_buffer[e + _N + _L2] * dlambda)
    for back in range(edges - _ONE):
        p = edges - _TWO - np.uint64(back)
        e0 = edge_offset + p * _ES
        i0 = particle_offset + (p + _ONE) * _PS
        for lane in range(_L):
            l = np.uint64(lane)
            e = e0 + l
            f = e + _ES
            dlambda_next = edge_buffer[f + _DP]
            dlambda = edge_buffer[e + _DP] - edge_buffer[e + _CP] * dlambda_next
            edge_buffer[e + _DP] = dlambda
            edge_buffer[e + _LAMBDA] += dlambda
            _move(
                buffer, i0 + l,
                edge_buffer[f + _N] * dlambda_next - edge_buffer[e + _N] * dlambda,
                edge_buffer[f + _N + _L] * dlambda_next - edge_buffer[e + _N + _L] * dlambda,
                edge_buffer[f + _N + _L2] * dlambda_next - edge_buffer[e + _N + _L2] * dlambda,
            )
    for lane in range(_L):
        l = np.uint64(lane)
        e = edge_offset + l
        dlambda = edge_buffer[e + _DP]
        _move(buffer, particle_offset + l, edge_buffer[e + _N] * dlambda,
              edge_buffer[e + _N + _L] * dlambda, edge_buffer[e + _N + _L2] * dlambda)


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
def _bend_coefficients(edge_buffer, e):
    """(1/L_{p-1}, -(1/L_{p-1} + 1/L_p), 1/L_p) of the bending row at the particle slot whose
    outgoing edge slot is ``e``."""
    before = edge_buffer[e - _ES + _IR]
    after = edge_buffer[e + _IR]
    return before, -(before + after), after


@kernel
def _bend_factor(buffer, edge_buffer, particle_offset, edge_offset, length, inverse_h2):
    """LDL^T factors of B W B^T + alpha_tilde, row by row (rows without bending are identity).

    Row p couples with p - 1 through particles p - 1 and p, with p - 2 through p - 1:
        A_pp     = w_{p-1} c-_p^2 + w_p c0_p^2 + w_{p+1} c+_p^2 + alpha_tilde_p
        A_p,p-1  = w_{p-1} c0_{p-1} c-_p + w_p c+_{p-1} c0_p
        A_p,p-2  = w_{p-1} c+_{p-2} c-_p
    then l2_p = A_p,p-2 / d_{p-2}, l1_p = (A_p,p-1 - l2_p l1_{p-1} d_{p-2}) / d_{p-1},
    d_p = A_pp - l1_p^2 d_{p-1} - l2_p^2 d_{p-2}.
    """
    for slot in range(length):
        p = np.uint64(slot)
        i0 = particle_offset + p * _PS
        e0 = edge_offset + p * _ES
        for lane in range(_L):
            l = np.uint64(lane)
            i = i0 + l
            e = e0 + l
            active = 1.0 if buffer[i + _BA] >= 0.0 else 0.0
            active_1 = 1.0 if buffer[i - _PS + _BA] >= 0.0 else 0.0
            active_2 = 1.0 if buffer[i - _PS - _PS + _BA] >= 0.0 else 0.0
            cm, c0, cp = _bend_coefficients(edge_buffer, e)
            cm1, c01, cp1 = _bend_coefficients(edge_buffer, e - _ES)
            cp2 = edge_buffer[e - _ES - _ES + _IR]
            w_m = buffer[i - _PS + _W]
            w_0 = buffer[i + _W]
            w_p = buffer[i + _PS + _W]
            diagonal = active * (w_m * cm * cm + w_0 * c0 * c0 + w_p * cp * cp
                                 + buffer[i + _BA] * inverse_h2) + (1.0 - active)
            a1 = active * active_1 * (w_m * c01 * cm + w_0 * cp1 * c0)
            a2 = active * active_2 * (w_m * cp2 * cm)
            d1 = 1.0 / buffer[i - _PS + _BD] if buffer[i - _PS + _BD] != 0.0 else 0.0
            d2 = 1.0 / buffer[i - _PS - _PS + _BD] if buffer[i - _PS - _PS + _BD] != 0.0 else 0.0
            l2 = a2 * buffer[i - _PS - _PS + _BD]
            l1 = (a1 - l2 * buffer[i - _PS + _BL1] * d2) * buffer[i - _PS + _BD]
            pivot = diagonal - l1 * l1 * d1 - l2 * l2 * d2
            buffer[i + _BL1] = l1
            buffer[i + _BL2] = l2
            buffer[i + _BD] = 1.0 / pivot if pivot > 0.0 else 0.0


@kernel
def _bend_forward(buffer, i, k, active, cm, c0, cp, l1, l2):
    """Component k (0, L or 2L) of L y = -C at bending row i."""
    constraint = (cm * buffer[i - _PS + _X + k] + c0 * buffer[i + _X + k]
                  + cp * buffer[i + _PS + _X + k])
    buffer[i + _BY + k] = (-active * constraint - l1 * buffer[i - _PS + _BY + k]
                           - l2 * buffer[i - _PS - _PS + _BY + k])


@kernel
def _bend_backward(buffer, i, j, k, w_j, d_inverse, l1, l2, cp_p, c0_j, cm_jj):
    """Component k of dlambda_i = y_i / d_i - l1_j dlambda_j - l2_{j+1} dlambda_{j+1}, then the
    move of particle j = i + 1, all of whose three rows are solved by now."""
    dlambda = (buffer[i + _BY + k] * d_inverse - l1 * buffer[j + _BY + k]
               - l2 * buffer[j + _PS + _BY + k])
    buffer[i + _BY + k] = dlambda
    buffer[j + _X + k] += w_j * (cp_p * dlambda + c0_j * buffer[j + _BY + k]
                                 + cm_jj * buffer[j + _PS + _BY + k])


@kernel
def _bend_solve(buffer, edge_buffer, particle_offset, edge_offset, length):
    """One direct solve of all bending rows (factors from ``_bend_factor``), moving particles:
    dx_k = w_k (c+_{k-1} dlambda_{k-1} + c0_k dlambda_k + c-_{k+1} dlambda_{k+1})."""
    for slot in range(length):  # L y = -C
        p = np.uint64(slot)
        i0 = particle_offset + p * _PS
        e0 = edge_offset + p * _ES
        for lane in range(_L):
            l = np.uint64(lane)
            i = i0 + l
            e = e0 + l
            active = 1.0 if buffer[i + _BA] >= 0.0 else 0.0
            cm, c0, cp = _bend_coefficients(edge_buffer, e)
            l1 = buffer[i + _BL1]
            l2 = buffer[i + _BL2]
            _bend_forward(buffer, i, _ZERO, active, cm, c0, cp, l1, l2)
            _bend_forward(buffer, i, _L, active, cm, c0, cp, l1, l2)
            _bend_forward(buffer, i, _L2, active, cm, c0, cp, l1, l2)
    for back in range(length):  # D z = y, L^T dlambda = z, and move particle p + 1
        p = length - _ONE - np.uint64(back)
        i0 = particle_offset + p * _PS
        e0 = edge_offset + p * _ES
        for lane in range(_L):
            l = np.uint64(lane)
            i = i0 + l
            e = e0 + l
            j = i + _PS
            w_j = buffer[j + _W]
            cp_p = edge_buffer[e + _IR]
            c0_j = -(edge_buffer[e + _IR] + edge_buffer[e + _ES + _IR])
            cm_jj = edge_buffer[e + _ES + _IR]
            d_inverse = buffer[i + _BD]
            l1 = buffer[j + _BL1]
            l2 = buffer[j + _PS + _BL2]
            _bend_backward(buffer, i, j, _ZERO, w_j, d_inverse, l1, l2, cp_p, c0_j, cm_jj)
            _bend_backward(buffer, i, j, _L, w_j, d_inverse, l1, l2, cp_p, c0_j, cm_jj)
            _bend_backward(buffer, i, j, _L2, w_j, d_inverse, l1, l2, cp_p, c0_j, cm_jj)
    for lane in range(_L):  # particle 0 of each chain
        l = np.uint64(lane)
        i = particle_offset + l
        e = edge_offset + l
        c0_0 = -(edge_buffer[e - _ES + _IR] + edge_buffer[e + _IR])
        cm_1 = edge_buffer[e + _IR]
        w_0 = buffer[i + _W]
        buffer[i + _X] += w_0 * (c0_0 * buffer[i + _BY] + cm_1 * buffer[i + _PS + _BY])
        buffer[i + _X + _L] += w_0 * (c0_0 * buffer[i + _BY + _L]
                                      + cm_1 * buffer[i + _PS + _BY + _L])
        buffer[i + _X + _L2] += w_0 * (c0_0 * buffer[i + _BY + _L2]
                                       + cm_1 * buffer[i + _PS + _BY + _L2])


@kernel
def _limited(outer, inner, e, edge_buffer, strain_limit, inverse_h2, buffer, side):
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
    dx = buffer[outer + _X] - buffer[inner + _X]
    dy = buffer[outer + _X + _L] - buffer[inner + _X + _L]
    dz = buffer[outer + _X + _L2] - buffer[inner + _X + _L2]
    length = math.sqrt(dx * dx + dy * dy + dz * dz)
    limit = (edge_buffer[e + _REST]
             + edge_buffer[e + _ALPHA] * inverse_h2 * abs(edge_buffer[e + _LAMBDA])) * (
        1.0 + strain_limit)
    over = (length > limit) & (buffer[outer + _T] == side) & (strain_limit >= 0.0)
    scale = limit / length if over else 1.0
    x = buffer[inner + _X] + dx * scale if over else buffer[outer + _X]
    y = buffer[inner + _X + _L] + dy * scale if over else buffer[outer + _X + _L]
    z = buffer[inner + _X + _L2] + dz * scale if over else buffer[outer + _X + _L2]
    return x, y, z


@kernel
def _direct_block(buffer, edge_buffer, particle_offset, edge_offset, length, leading, bending,
                  g0, g1, g2, h, substeps, newton_iterations, strain_limit, velocity_scale):
    """All substeps of one block of LANES chains: predict; ``newton_iterations`` direct solves
    of the stretch constraints; strain limiting (``_limited``, off if ``strain_limit`` < 0),
    first towards the chain start where ``leading`` says some chain has free points before
    its first pin, then towards the end fused with the velocity update."""
    inverse_h2 = 1.0 / (h * h)
    edges = length - _ONE
    if bending:
        _bend_factor(buffer, edge_buffer, particle_offset, edge_offset, length, inverse_h2)
    for _ in range(substeps):
        for slot in range(length):
            base = particle_offset + np.uint64(slot) * _PS
            for lane in range(_L):
                _predict(buffer, base + np.uint64(lane), g0, g1, g2, h)
        if length < _TWO:
            for lane in range(_L):
                _update_velocity(buffer, particle_offset + np.uint64(lane), velocity_scale)
            continue
        for _ in range(newton_iterations):
            _solve_chain(buffer, edge_buffer, particle_offset, edge_offset, edges, inverse_h2)
        if bending:
            _bend_solve(buffer, edge_buffer, particle_offset, edge_offset, length)
        if leading and strain_limit >= 0.0:
            for back in range(edges):
                p = edges - _ONE - np.uint64(back)
                a0 = particle_offset + p * _PS
                e0 = edge_offset + p * _ES
                for lane in range(_L):
                    l = np.uint64(lane)
                    a = a0 + l
                    x, y, z = _limited(a, a + _PS, e0 + l, edge_buffer, strain_limit,
                                       inverse_h2, buffer, -1.0)
                    buffer[a + _X] = x
                    buffer[a + _X + _L] = y
                    buffer[a + _X + _L2] = z
        for slot in range(edges):
            p = np.uint64(slot)
            a0 = particle_offset + p * _PS
            e0 = edge_offset + p * _ES
            for lane in range(_L):
                l = np.uint64(lane)
                a = a0 + l
                b = a + _PS
                x, y, z = _limited(b, a, e0 + l, edge_buffer, strain_limit, inverse_h2, buffer,
                                   1.0)
                buffer[b + _X] = x
                buffer[b + _X + _L] = y
                buffer[b + _X + _L2] = z
                _update_velocity(buffer, a, velocity_scale)
                edge_buffer[e0 + l + _LAMBDA] = 0.0
        tail = particle_offset + edges * _PS
        for lane in range(_L):
            _update_velocity(buffer, tail + np.uint64(lane), velocity_scale)


@kernel
def direct_substeps(buffer, edge_buffer, block_particle_offset, block_edge_offset, block_length,
                    block_leading, block_bending, gravity, h, substeps, newton_iterations,
                    strain_limit,
                    velocity_scale):
    """``_direct_block`` over every block, one thread."""
    for b in range(block_length.shape[0]):
        _direct_block(buffer, edge_buffer, block_particle_offset[b], block_edge_offset[b],
                      block_length[b], block_leading[b], block_bending[b], gravity[0], gravity[1],
                      gravity[2], h,
                      substeps, newton_iterations, strain_limit, velocity_scale)


@parallel_kernel
def direct_substeps_parallel(buffer, edge_buffer, block_particle_offset, block_edge_offset,
                             block_length, block_leading, block_bending, gravity, h,
                             substeps,
                             newton_iterations,
                             strain_limit, velocity_scale):
    """``direct_substeps`` with blocks spread over threads (same result for any count)."""
    for b in prange(block_length.shape[0]):
        _direct_block(buffer, edge_buffer, block_particle_offset[b], block_edge_offset[b],
                      block_length[b], block_leading[b], block_bending[b], gravity[0], gravity[1],
                      gravity[2], h,
                      substeps, newton_iterations, strain_limit, velocity_scale)
