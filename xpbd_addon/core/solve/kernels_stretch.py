"""The stretch solve's recurrences at one node: the forward elimination (``eliminate``) and
the back substitution's step (``back_step``) that ``kernels_chain`` derives in its module
docstring, for chains without bending rows (with them: ``kernels_joint``). Lane layout as
``kernels_direct``.
"""

from __future__ import annotations

import numpy as np

from ..jit import inline_kernel
from ..layout.lanes import (
    ESTRIDE,
    FALPHA,
    FG,
    FK,
    FLAMBDA,
    FLSTAR,
    FN,
    FRESIDUAL,
    FU,
    FW,
    FX,
    FXT,
    FY,
    PSTRIDE,
)
from .kernels_held import held_coupling, held_node


@inline_kernel
def node_edges(edge_buffer, f, e, lanes):
    """The arriving (f) and leaving (e) edge slots' rows at a node: (n_a, g_a, lambda_a,
    n_b, g_b, lambda_b)."""
    L = np.uint64(lanes)
    L2 = L + L
    N = FN * L
    G = FG * L
    LAMBDA = FLAMBDA * L
    return (edge_buffer[f + N], edge_buffer[f + N + L], edge_buffer[f + N + L2],
            edge_buffer[f + G], edge_buffer[f + LAMBDA], edge_buffer[e + N],
            edge_buffer[e + N + L], edge_buffer[e + N + L2], edge_buffer[e + G],
            edge_buffer[e + LAMBDA])


@inline_kernel
def node_system(buffer, edge_buffer, i, e, lanes):
    """Node i's own rows (edge slot e leaves it, e - ES arrives): (free; B = m I + g_a P_a +
    g_b P_b, 6 entries; the right-hand side -(m (x - x_pred) - J^T lambda), J_{a,i} = -n_a,
    J_{b,i} = n_b; n_a, g_a, n_b, g_b)."""
    L = np.uint64(lanes)
    L2 = L + L
    X = FX * L
    XT = FXT * L
    W = FW * L
    w = buffer[i + W]
    free = w > 0.0
    mass = 1.0 / w if free else 0.0
    a0, a1, a2, ga, la, b0, b1, b2, gb, lb = node_edges(edge_buffer, e - ESTRIDE * L, e, lanes)
    r0 = -mass * (buffer[i + X] - buffer[i + XT]) - a0 * la + b0 * lb
    r1 = -mass * (buffer[i + X + L] - buffer[i + XT + L]) - a1 * la + b1 * lb
    r2 = -mass * (buffer[i + X + L2] - buffer[i + XT + L2]) - a2 * la + b2 * lb
    s = ga + gb + mass
    m00 = s - ga * a0 * a0 - gb * b0 * b0
    m01 = -ga * a0 * a1 - gb * b0 * b1
    m02 = -ga * a0 * a2 - gb * b0 * b2
    m11 = s - ga * a1 * a1 - gb * b1 * b1
    m12 = -ga * a1 * a2 - gb * b1 * b2
    m22 = s - ga * a2 * a2 - gb * b2 * b2
    return (free, m00, m01, m02, m11, m12, m22, r0, r1, r2, a0, a1, a2, ga, b0, b1, b2,
            gb)


@inline_kernel
def pivot_inverse(m00, m01, m02, m11, m12, m22, q0, q1, q2, p, free):
    """The node's pivot [[p, q^T], [q, B]] inverted through B: (B^-1 by cofactors, 6
    entries; u = B^-1 q; 1 / den, den = q.u - p). B is symmetric positive definite for a
    free particle; a pinned one (not ``free``) gets B^-1 = 0, and den <= 0 gets 1 / den = 0:
    rows that move nothing."""
    c00 = m11 * m22 - m12 * m12
    c01 = m02 * m12 - m01 * m22
    c02 = m01 * m12 - m02 * m11
    det = m00 * c00 + m01 * c01 + m02 * c02
    inverse_det = 1.0 / det if free & (det > 0.0) else 0.0
    i00 = c00 * inverse_det
    i01 = c01 * inverse_det
    i02 = c02 * inverse_det
    i11 = (m00 * m22 - m02 * m02) * inverse_det
    i12 = (m01 * m02 - m00 * m12) * inverse_det
    i22 = (m00 * m11 - m01 * m01) * inverse_det
    u0 = i00 * q0 + i01 * q1 + i02 * q2
    u1 = i01 * q0 + i11 * q1 + i12 * q2
    u2 = i02 * q0 + i12 * q1 + i22 * q2
    den = q0 * u0 + q1 * u1 + q2 * u2 - p
    inverse_den = 1.0 / den if den > 0.0 else 0.0
    return i00, i01, i02, i11, i12, i22, u0, u1, u2, inverse_den


@inline_kernel
def eliminate(buffer, edge_buffer, i, e, inverse_h2, holds, lanes):
    """Forward elimination at particle slot i (edge slot e leaves it, e - ES arrives): from
    the K, y that node i - 1 left, stores K_i, y_i, u / den at i and lambda* of the arriving
    edge (the recurrences of the module docstring). Pinned and padding particles (w = 0)
    get K = 0, y = 0. ``holds``: as ``newton``'s (the module docstring's M)."""
    L = np.uint64(lanes)
    L2 = L + L
    L3 = L2 + L
    L4 = L2 + L2
    L5 = L4 + L
    PS = PSTRIDE * L
    ES = ESTRIDE * L
    K = FK * L
    Y = FY * L
    U = FU * L
    ALPHA = FALPHA * L
    RESIDUAL = FRESIDUAL * L
    LSTAR = FLSTAR * L
    f = e - ES
    h = i - PS
    (free, m00, m01, m02, m11, m12, m22, r0, r1, r2, a0, a1, a2, ga, b0, b1, b2,
     gb) = node_system(buffer, edge_buffer, i, e, lanes)
    # what node i - 1 hands over: K (symmetric, 6 entries) and y
    k00 = buffer[h + K]
    k01 = buffer[h + K + L]
    k02 = buffer[h + K + L2]
    k11 = buffer[h + K + L3]
    k12 = buffer[h + K + L4]
    k22 = buffer[h + K + L5]
    y0 = buffer[h + Y]
    y1 = buffer[h + Y + L]
    y2 = buffer[h + Y + L2]
    t0 = k00 * a0 + k01 * a1 + k02 * a2
    t1 = k01 * a0 + k11 * a1 + k12 * a2
    t2 = k02 * a0 + k12 * a1 + k22 * a2
    nt = a0 * t0 + a1 * t1 + a2 * t2
    ny = a0 * y0 + a1 * y1 + a2 * y2
    gg = ga * ga
    # B -= g_a^2 P K P, with P K P = K - t n^T - n t^T + (n.t) n n^T
    m00 -= gg * (k00 - 2.0 * a0 * t0 + nt * a0 * a0)
    m01 -= gg * (k01 - a0 * t1 - a1 * t0 + nt * a0 * a1)
    m02 -= gg * (k02 - a0 * t2 - a2 * t0 + nt * a0 * a2)
    m11 -= gg * (k11 - 2.0 * a1 * t1 + nt * a1 * a1)
    m12 -= gg * (k12 - a1 * t2 - a2 * t1 + nt * a1 * a2)
    m22 -= gg * (k22 - 2.0 * a2 * t2 + nt * a2 * a2)
    q0 = a0 - ga * (t0 - nt * a0)
    q1 = a1 - ga * (t1 - nt * a1)
    q2 = a2 - ga * (t2 - nt * a2)
    r0 += ga * (y0 - ny * a0)
    r1 += ga * (y1 - ny * a1)
    r2 += ga * (y2 - ny * a2)
    if holds is not None:
        # the holds at node i, and the coupling M = g_a P - S, S = s (1 - s) H_f: B -= M K M
        # = g_a^2 P K P - g_a (P U + U^T P) + S U (U = K S), q += S t, r -= S y; all terms
        # 0 where no hold acts, so such a rope moves bit for bit as without the holds
        b00, b01, b02, b11, b12, b22, d0, d1, d2 = held_node(edge_buffer, f, e, lanes)
        s00, s01, s02, s11, s12, s22 = held_coupling(edge_buffer, f, lanes)
        u00 = k00 * s00 + k01 * s01 + k02 * s02
        u01 = k00 * s01 + k01 * s11 + k02 * s12
        u02 = k00 * s02 + k01 * s12 + k02 * s22
        u10 = k01 * s00 + k11 * s01 + k12 * s02
        u11 = k01 * s01 + k11 * s11 + k12 * s12
        u12 = k01 * s02 + k11 * s12 + k12 * s22
        u20 = k02 * s00 + k12 * s01 + k22 * s02
        u21 = k02 * s01 + k12 * s11 + k22 * s12
        u22 = k02 * s02 + k12 * s12 + k22 * s22
        v0 = a0 * u00 + a1 * u10 + a2 * u20  # a^T U, then P U = U - a (a^T U)
        v1 = a0 * u01 + a1 * u11 + a2 * u21
        v2 = a0 * u02 + a1 * u12 + a2 * u22
        m00 += b00 + ga * 2.0 * (u00 - a0 * v0) - (s00 * u00 + s01 * u10 + s02 * u20)
        m01 += b01 + ga * (u01 - a0 * v1 + u10 - a1 * v0) - (s00 * u01 + s01 * u11 + s02 * u21)
        m02 += b02 + ga * (u02 - a0 * v2 + u20 - a2 * v0) - (s00 * u02 + s01 * u12 + s02 * u22)
        m11 += b11 + ga * 2.0 * (u11 - a1 * v1) - (s01 * u01 + s11 * u11 + s12 * u21)
        m12 += b12 + ga * (u12 - a1 * v2 + u21 - a2 * v1) - (s01 * u02 + s11 * u12 + s12 * u22)
        m22 += b22 + ga * 2.0 * (u22 - a2 * v2) - (s02 * u02 + s12 * u12 + s22 * u22)
        q0 += s00 * t0 + s01 * t1 + s02 * t2
        q1 += s01 * t0 + s11 * t1 + s12 * t2
        q2 += s02 * t0 + s12 * t1 + s22 * t2
        r0 -= d0 + s00 * y0 + s01 * y1 + s02 * y2
        r1 -= d1 + s01 * y0 + s11 * y1 + s12 * y2
        r2 -= d2 + s02 * y0 + s12 * y1 + s22 * y2
    p = -edge_buffer[f + ALPHA] * inverse_h2 - nt
    c = edge_buffer[f + RESIDUAL] + ny
    i00, i01, i02, i11, i12, i22, u0, u1, u2, inverse_den = pivot_inverse(
        m00, m01, m02, m11, m12, m22, q0, q1, q2, p, free)
    v0 = u0 * inverse_den
    v1 = u1 * inverse_den
    v2 = u2 * inverse_den
    lambda_star = v0 * r0 + v1 * r1 + v2 * r2 - c * inverse_den
    buffer[i + K] = i00 - u0 * v0
    buffer[i + K + L] = i01 - u0 * v1
    buffer[i + K + L2] = i02 - u0 * v2
    buffer[i + K + L3] = i11 - u1 * v1
    buffer[i + K + L4] = i12 - u1 * v2
    buffer[i + K + L5] = i22 - u2 * v2
    buffer[i + Y] = i00 * r0 + i01 * r1 + i02 * r2 - u0 * lambda_star
    buffer[i + Y + L] = i01 * r0 + i11 * r1 + i12 * r2 - u1 * lambda_star
    buffer[i + Y + L2] = i02 * r0 + i12 * r1 + i22 * r2 - u2 * lambda_star
    buffer[i + U] = v0
    buffer[i + U + L] = v1
    buffer[i + U + L2] = v2
    edge_buffer[f + LSTAR] = lambda_star


@inline_kernel
def back_step(buffer, edge_buffer, i, e, holds, lanes):
    """Node i's step of the back substitution: (dx_i, dlambda of the arriving edge)."""
    L = np.uint64(lanes)
    L2 = L + L
    L3 = L2 + L
    L4 = L2 + L2
    L5 = L4 + L
    PS = PSTRIDE * L
    ES = ESTRIDE * L
    K = FK * L
    Y = FY * L
    U = FU * L
    N = FN * L
    G = FG * L
    LSTAR = FLSTAR * L
    j = i + PS
    f = e - ES
    n0 = edge_buffer[e + N]
    n1 = edge_buffer[e + N + L]
    n2 = edge_buffer[e + N + L2]
    g = edge_buffer[e + G]
    dl = edge_buffer[e + LSTAR]  # dlambda of the leaving edge (set by node i + 1)
    d0 = buffer[j + Y]  # dx of node i + 1 (its y field holds it by now)
    d1 = buffer[j + Y + L]
    d2 = buffer[j + Y + L2]
    nd = n0 * d0 + n1 * d1 + n2 * d2
    w0 = n0 * dl + g * (d0 - nd * n0)
    w1 = n1 * dl + g * (d1 - nd * n1)
    w2 = n2 * dl + g * (d2 - nd * n2)
    if holds is not None:  # M = g P - s (1 - s) H (``_eliminate``)
        s00, s01, s02, s11, s12, s22 = held_coupling(edge_buffer, e, lanes)
        w0 -= s00 * d0 + s01 * d1 + s02 * d2
        w1 -= s01 * d0 + s11 * d1 + s12 * d2
        w2 -= s02 * d0 + s12 * d1 + s22 * d2
    k00 = buffer[i + K]
    k01 = buffer[i + K + L]
    k02 = buffer[i + K + L2]
    k11 = buffer[i + K + L3]
    k12 = buffer[i + K + L4]
    k22 = buffer[i + K + L5]
    x0 = buffer[i + Y] + k00 * w0 + k01 * w1 + k02 * w2
    x1 = buffer[i + Y + L] + k01 * w0 + k11 * w1 + k12 * w2
    x2 = buffer[i + Y + L2] + k02 * w0 + k12 * w1 + k22 * w2
    arriving = edge_buffer[f + LSTAR] + (buffer[i + U] * w0 + buffer[i + U + L] * w1
                                         + buffer[i + U + L2] * w2)
    return x0, x1, x2, arriving
