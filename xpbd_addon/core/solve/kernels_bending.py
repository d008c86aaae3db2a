"""Bending of the direct chain solve: one linear vector constraint per interior point,

    C_p = (x_{p+1} - x_p) / L_p - (x_p - x_{p-1}) / L_{p-1} - b_p,   compliance alpha_b = l_p / EI,

(b_p the row's target: 0, straight, for a rope; a rod's rest bend, ``core.rod``) solved
exactly after the stretch solve of each substep. Its Jacobian is constant, so the
pentadiagonal system (J W J^T + alpha_b / h^2) is LDL^T-factored once per frame
(``bend_factor``) and solved each substep (``bend_solve``); see docs/physics.md. Lane
layout as ``kernels_direct``.
"""

from __future__ import annotations

import numpy as np

from ..jit import kernel
from ..layout.lanes import (
    ESTRIDE,
    FBA,
    FBD,
    FBL1,
    FBL2,
    FBT,
    FBY,
    FIR,
    FW,
    FX,
    ONE,
    PSTRIDE,
    ZERO,
)


@kernel
def _bend_coefficients(edge_buffer, e, lanes):
    """(1/L_{p-1}, -(1/L_{p-1} + 1/L_p), 1/L_p) of the bending row at the particle slot whose
    outgoing edge slot is ``e``."""
    L = np.uint64(lanes)
    ES = ESTRIDE * L
    IR = FIR * L
    before = edge_buffer[e - ES + IR]
    after = edge_buffer[e + IR]
    return before, -(before + after), after


@kernel
def bend_factor(buffer, edge_buffer, particle_offset, edge_offset, length, inverse_h2, lanes):
    """LDL^T factors of B W B^T + alpha_tilde, row by row (rows without bending are identity).

    Row p couples with p - 1 through particles p - 1 and p, with p - 2 through p - 1:
        A_pp     = w_{p-1} c-_p^2 + w_p c0_p^2 + w_{p+1} c+_p^2 + alpha_tilde_p
        A_p,p-1  = w_{p-1} c0_{p-1} c-_p + w_p c+_{p-1} c0_p
        A_p,p-2  = w_{p-1} c+_{p-2} c-_p
    then l2_p = A_p,p-2 / d_{p-2}, l1_p = (A_p,p-1 - l2_p l1_{p-1} d_{p-2}) / d_{p-1},
    d_p = A_pp - l1_p^2 d_{p-1} - l2_p^2 d_{p-2}.
    """
    L = np.uint64(lanes)
    PS = PSTRIDE * L
    ES = ESTRIDE * L
    W = FW * L
    BA = FBA * L
    BL1 = FBL1 * L
    BL2 = FBL2 * L
    BD = FBD * L
    IR = FIR * L
    for slot in range(length):
        p = np.uint64(slot)
        i0 = particle_offset + p * PS
        e0 = edge_offset + p * ES
        for lane in range(L):
            l = np.uint64(lane)
            i = i0 + l
            e = e0 + l
            active = 1.0 if buffer[i + BA] >= 0.0 else 0.0
            active_1 = 1.0 if buffer[i - PS + BA] >= 0.0 else 0.0
            active_2 = 1.0 if buffer[i - PS - PS + BA] >= 0.0 else 0.0
            cm, c0, cp = _bend_coefficients(edge_buffer, e, lanes)
            cm1, c01, cp1 = _bend_coefficients(edge_buffer, e - ES, lanes)
            cp2 = edge_buffer[e - ES - ES + IR]
            w_m = buffer[i - PS + W]
            w_0 = buffer[i + W]
            w_p = buffer[i + PS + W]
            diagonal = active * (w_m * cm * cm + w_0 * c0 * c0 + w_p * cp * cp
                                 + buffer[i + BA] * inverse_h2) + (1.0 - active)
            a1 = active * active_1 * (w_m * c01 * cm + w_0 * cp1 * c0)
            a2 = active * active_2 * (w_m * cp2 * cm)
            d1 = 1.0 / buffer[i - PS + BD] if buffer[i - PS + BD] != 0.0 else 0.0
            d2 = 1.0 / buffer[i - PS - PS + BD] if buffer[i - PS - PS + BD] != 0.0 else 0.0
            l2 = a2 * buffer[i - PS - PS + BD]
            l1 = (a1 - l2 * buffer[i - PS + BL1] * d2) * buffer[i - PS + BD]
            pivot = diagonal - l1 * l1 * d1 - l2 * l2 * d2
            buffer[i + BL1] = l1
            buffer[i + BL2] = l2
            buffer[i + BD] = 1.0 / pivot if pivot > 0.0 else 0.0


@kernel
def _bend_forward(buffer, i, k, active, cm, c0, cp, l1, l2, lanes):
    """Component k (0, L or 2L) of L y = -C at bending row i (C less the row's target b_p:
    0 for a rope, the rest bend for a rod)."""
    L = np.uint64(lanes)
    PS = PSTRIDE * L
    X = FX * L
    BY = FBY * L
    BT = FBT * L
    constraint = (cm * buffer[i - PS + X + k] + c0 * buffer[i + X + k]
                  + cp * buffer[i + PS + X + k]) - buffer[i + BT + k]
    buffer[i + BY + k] = (-active * constraint - l1 * buffer[i - PS + BY + k]
                           - l2 * buffer[i - PS - PS + BY + k])


@kernel
def _bend_backward(buffer, i, j, k, w_j, d_inverse, l1, l2, cp_p, c0_j, cm_jj, lanes):
    """Component k of dlambda_i = y_i / d_i - l1_j dlambda_j - l2_{j+1} dlambda_{j+1}, then the
    move of particle j = i + 1, all of whose three rows are solved by now."""
    L = np.uint64(lanes)
    PS = PSTRIDE * L
    X = FX * L
    BY = FBY * L
    dlambda = (buffer[i + BY + k] * d_inverse - l1 * buffer[j + BY + k]
               - l2 * buffer[j + PS + BY + k])
    buffer[i + BY + k] = dlambda
    buffer[j + X + k] += w_j * (cp_p * dlambda + c0_j * buffer[j + BY + k]
                                 + cm_jj * buffer[j + PS + BY + k])


@kernel
def bend_solve(buffer, edge_buffer, particle_offset, edge_offset, length, lanes):
    """One direct solve of all bending rows (factors from ``bend_factor``), moving particles:
    dx_k = w_k (c+_{k-1} dlambda_{k-1} + c0_k dlambda_k + c-_{k+1} dlambda_{k+1})."""
    L = np.uint64(lanes)
    L2 = L + L
    PS = PSTRIDE * L
    ES = ESTRIDE * L
    X = FX * L
    W = FW * L
    BA = FBA * L
    BL1 = FBL1 * L
    BL2 = FBL2 * L
    BD = FBD * L
    BY = FBY * L
    IR = FIR * L
    for slot in range(length):  # L y = -C
        p = np.uint64(slot)
        i0 = particle_offset + p * PS
        e0 = edge_offset + p * ES
        for lane in range(L):
            l = np.uint64(lane)
            i = i0 + l
            e = e0 + l
            active = 1.0 if buffer[i + BA] >= 0.0 else 0.0
            cm, c0, cp = _bend_coefficients(edge_buffer, e, lanes)
            l1 = buffer[i + BL1]
            l2 = buffer[i + BL2]
            _bend_forward(buffer, i, ZERO, active, cm, c0, cp, l1, l2, lanes)
            _bend_forward(buffer, i, L, active, cm, c0, cp, l1, l2, lanes)
            _bend_forward(buffer, i, L2, active, cm, c0, cp, l1, l2, lanes)
    for back in range(length):  # D z = y, L^T dlambda = z, and move particle p + 1
        p = length - ONE - np.uint64(back)
        i0 = particle_offset + p * PS
        e0 = edge_offset + p * ES
        for lane in range(L):
            l = np.uint64(lane)
            i = i0 + l
            e = e0 + l
            j = i + PS
            w_j = buffer[j + W]
            cp_p = edge_buffer[e + IR]
            c0_j = -(edge_buffer[e + IR] + edge_buffer[e + ES + IR])
            cm_jj = edge_buffer[e + ES + IR]
            d_inverse = buffer[i + BD]
            l1 = buffer[j + BL1]
            l2 = buffer[j + PS + BL2]
            _bend_backward(buffer, i, j, ZERO, w_j, d_inverse, l1, l2, cp_p, c0_j, cm_jj, lanes)
            _bend_backward(buffer, i, j, L, w_j, d_inverse, l1, l2, cp_p, c0_j, cm_jj, lanes)
            _bend_backward(buffer, i, j, L2, w_j, d_inverse, l1, l2, cp_p, c0_j, cm_jj, lanes)
    for lane in range(L):  # particle 0 of each chain
        l = np.uint64(lane)
        i = particle_offset + l
        e = edge_offset + l
        c0_0 = -(edge_buffer[e - ES + IR] + edge_buffer[e + IR])
        cm_1 = edge_buffer[e + IR]
        w_0 = buffer[i + W]
        buffer[i + X] += w_0 * (c0_0 * buffer[i + BY] + cm_1 * buffer[i + PS + BY])
        buffer[i + X + L] += w_0 * (c0_0 * buffer[i + BY + L]
                                      + cm_1 * buffer[i + PS + BY + L])
        buffer[i + X + L2] += w_0 * (c0_0 * buffer[i + BY + L2]
                                       + cm_1 * buffer[i + PS + BY + L2])
