"""The stable stiff chain solve: a Newton step on a rope's implicit-Euler system, with the
geometric stiffness of its tension, solved exactly in O(n) per substep.

Why not just the constraint directions. XPBD's update (Macklin et al. 2016, eq. 9 with the
constraint Hessian dropped) moves particles along the segment directions of the *predicted*
positions. Transverse to the rope that is an explicit method: a rope under tension T with
segments of length l and point masses m carries waves at up to omega^2 = 4 T / (m l), and an
explicit step is stable only while h^2 omega^2 <= 4/3. A 2 m, 200-point rope hanging at
S = 10 (24 fps) is ten times past that at its top: its zigzag modes grow each substep and the
rope thrashes, and converging the projection (re-linearising at each iterate) does not help,
because the transverse error of the first step is never corrected. Adding the derivative of
the constraint directions makes the transverse response implicit (Andrews, Teichmann & Kry,
"Geometric Stiffness for Real-time Constrained Multibody Dynamics", 2017).

The system. For the chain x_0 .. x_{n-1} with distance constraints C_e = |x_e - x_{e+1}| -
L_e, unit directions n_e = (x_e - x_{e+1}) / |...|, and multipliers lambda_e (negative under
tension; the constraint force is J^T lambda / h^2), each substep solves

    [ M + G   -J^T  ] [ dx      ]   [ -(M (x - x_pred) - J^T lambda) ]
    [ J     alpha~  ] [ dlambda ] = [ -(C + alpha~ lambda)          ]

with alpha~ = alpha / h^2 and G = sum_e g_e (P_e on the 2x2 block [[1, -1], [-1, 1]]) the
geometric stiffness, P_e = I - n_e n_e^T, g_e = max(-lambda_e, 0) / |x_e - x_{e+1}| (its
tension over its length; compression gets none, a buckling rope is not held straight). G is
built from the tension of the substep before (the first substep of a frame estimates it with
one solve at G = 0, so a frame depends on the state x, v alone and a cached frame resumes
exactly), and the first Newton step starts at lambda = 0 as in XPBD. Without G this is
exactly plain XPBD's update (Macklin et al. 2016), and for one edge the familiar formula.

How it is solved. Ordered (x_0), (lambda_0, x_1), (lambda_1, x_2), ... the matrix is block
tridiagonal with 4x4 blocks, and block i + 1 couples to block i only through x_i. Block
elimination then carries one symmetric 3x3 matrix K_i per node, the x-part of the inverse of
the eliminated block, and a 3-vector y_i (the x-part of the eliminated right-hand side):

    B   = m_i I + g_{i-1} P_{i-1} + g_i P_i - g_{i-1}^2 P K_{i-1} P          (P = P_{i-1})
    q   = n_{i-1} - g_{i-1} P K_{i-1} n_{i-1},   p = -alpha~_{i-1} - n^T K_{i-1} n
    u   = B^-1 q,   den = q.u - p > 0,   K_i = B^-1 - u u^T / den
    b'  = b_i + g_{i-1} P y_{i-1},   c' = c_{i-1} + n.y_{i-1}
    lambda*_{i-1} = (u.b' - c') / den,   y_i = B^-1 b' - u lambda*_{i-1}

and the back substitution, from the chain end: w = n_i dlambda_i + g_i P_i dx_{i+1},
dx_i = y_i + K_i w, dlambda_{i-1} = lambda*_{i-1} + u.w / den. Pinned particles have K = 0,
y = 0. den > 0 holds even at alpha = 0 (where p = 0 next to a pin), so no pivoting is needed:
rigid ropes pinned at both ends included. About 300 flops per particle and step.

Newton steps repeat per rope until every segment's residual |C + alpha~ lambda| is below
``tolerance`` times its rest length (usually after one step; a whip's tip or a single substep
per frame needs a few more), rebuilding G from the current lambda; ropes that have converged
stop moving while the others of their block go on, so a rope's motion never depends on the
ropes that share its block.

Contacts between ropes held in the solve (``kernels_held``: a penalty on the segment at the
contact point, Hessian H) add s^2 H and (1 - s)^2 H to the B of the segment's two nodes and
s (1 - s) H to the block between them: the recurrences take M = g P - s (1 - s) H where they
have g P. Compiled only where ``holds`` is not None.

Lane layout as in ``kernels_direct`` (16 chains interleaved, ``topology`` fields).
"""

from __future__ import annotations

import math

import numpy as np

from ..jit import inline_kernel, kernel, lane_flag
from ..layout.lanes import (
    ESTRIDE,
    FACTIVE,
    FALPHA,
    FG,
    FIR,
    FK,
    FLAMBDA,
    FLSTAR,
    FN,
    FRESIDUAL,
    FREST,
    FRMAX,
    FTENSION,
    FU,
    FW,
    FX,
    FXP,
    FXT,
    FY,
    ONE,
    PSTRIDE,
)
from .kernels_held import held_coupling, held_node, held_row

NEWTON_TOLERANCE = 1e-3
"""A rope's Newton steps in a substep stop once every segment's residual |C + alpha~ lambda|
is below this fraction of its rest length (0.1 %)."""

MAX_NEWTON_STEPS = 16
"""The most Newton steps a substep takes (a rope released at S = 1 needs up to ~9)."""


@inline_kernel
def _edge_row(buffer, edge_buffer, i, e, inverse_h2, first, use_tension, lanes):
    """The row of edge slot e (particle slots i and i + PS) at the current positions: stores
    the unit direction n, g = max(-t, 0) / |d| (t the tension estimate on the first step of
    a substep, else lambda; 0 without ``use_tension``) and c = C + alpha~ lambda; lambda is
    reset to 0 on the first step. Padding and zero-length edges get n = 0, g = 0, c = 0:
    an empty row that moves nothing."""
    L = np.uint64(lanes)
    L2 = L + L
    PS = PSTRIDE * L
    X = FX * L
    N = FN * L
    REST = FREST * L
    ALPHA = FALPHA * L
    ACTIVE = FACTIVE * L
    LAMBDA = FLAMBDA * L
    TENSION = FTENSION * L
    G = FG * L
    RESIDUAL = FRESIDUAL * L
    j = i + PS
    active = edge_buffer[e + ACTIVE]
    dx = (buffer[i + X] - buffer[j + X]) * active
    dy = (buffer[i + X + L] - buffer[j + X + L]) * active
    dz = (buffer[i + X + L2] - buffer[j + X + L2]) * active
    length = math.sqrt(dx * dx + dy * dy + dz * dz)
    inverse_length = 1.0 / length if length > 0.0 else 0.0
    # loads outside the selects: a load under a run-time condition keeps the loop scalar
    stored = edge_buffer[e + LAMBDA]
    estimated = edge_buffer[e + TENSION]
    multiplier = 0.0 if first else stored
    edge_buffer[e + LAMBDA] = multiplier
    tension = estimated if first else multiplier
    # selects, not max(): numba's max() keeps the lane loop scalar (measured)
    g = -tension * inverse_length if use_tension & (tension < 0.0) else 0.0
    edge_buffer[e + N] = dx * inverse_length
    edge_buffer[e + N + L] = dy * inverse_length
    edge_buffer[e + N + L2] = dz * inverse_length
    edge_buffer[e + G] = g
    residual = (length - edge_buffer[e + REST]) if length > 0.0 else 0.0
    edge_buffer[e + RESIDUAL] = residual + edge_buffer[e + ALPHA] * inverse_h2 * multiplier


@inline_kernel
def _eliminate(buffer, edge_buffer, i, e, inverse_h2, holds, lanes):
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
    X = FX * L
    XT = FXT * L
    W = FW * L
    K = FK * L
    Y = FY * L
    U = FU * L
    N = FN * L
    G = FG * L
    ALPHA = FALPHA * L
    LAMBDA = FLAMBDA * L
    RESIDUAL = FRESIDUAL * L
    LSTAR = FLSTAR * L
    f = e - ES
    h = i - PS
    w = buffer[i + W]
    free = w > 0.0
    mass = 1.0 / w if free else 0.0
    # the arriving edge (a) and the leaving one (b)
    a0 = edge_buffer[f + N]
    a1 = edge_buffer[f + N + L]
    a2 = edge_buffer[f + N + L2]
    ga = edge_buffer[f + G]
    la = edge_buffer[f + LAMBDA]
    b0 = edge_buffer[e + N]
    b1 = edge_buffer[e + N + L]
    b2 = edge_buffer[e + N + L2]
    gb = edge_buffer[e + G]
    lb = edge_buffer[e + LAMBDA]
    # right-hand side -(m (x - x_pred) - J^T lambda), with J_{a,i} = -n_a, J_{b,i} = n_b
    r0 = -mass * (buffer[i + X] - buffer[i + XT]) - a0 * la + b0 * lb
    r1 = -mass * (buffer[i + X + L] - buffer[i + XT + L]) - a1 * la + b1 * lb
    r2 = -mass * (buffer[i + X + L2] - buffer[i + XT + L2]) - a2 * la + b2 * lb
    # B = m I + g_a P_a + g_b P_b
    s = ga + gb + mass
    m00 = s - ga * a0 * a0 - gb * b0 * b0
    m01 = -ga * a0 * a1 - gb * b0 * b1
    m02 = -ga * a0 * a2 - gb * b0 * b2
    m11 = s - ga * a1 * a1 - gb * b1 * b1
    m12 = -ga * a1 * a2 - gb * b1 * b2
    m22 = s - ga * a2 * a2 - gb * b2 * b2
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
    # B^-1 by cofactors (B is symmetric positive definite for a free particle)
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


@kernel
def _forward(buffer, edge_buffer, particle_offset, edge_offset, length, inverse_h2, first,
             use_tension, holds, lanes):
    """Rows and forward elimination of a block's chains, node by node (module docstring);
    with the contacts held on their segments unless ``holds`` is None (``kernels_held``)."""
    L = np.uint64(lanes)
    PS = PSTRIDE * L
    ES = ESTRIDE * L
    for slot in range(length):
        p = np.uint64(slot)
        a0 = particle_offset + p * PS
        e0 = edge_offset + p * ES
        for lane in range(L):
            l = np.uint64(lane)
            _edge_row(buffer, edge_buffer, a0 + l, e0 + l, inverse_h2, first, use_tension, lanes)
            if holds is not None:
                held_row(buffer, edge_buffer, a0 + l, e0 + l, lanes)
            _eliminate(buffer, edge_buffer, a0 + l, e0 + l, inverse_h2, holds, lanes)


@inline_kernel
def _back_node(buffer, edge_buffer, i, e, inverse_h2, go, estimate, holds, lanes):
    """Back substitution at particle slot i: dx_i and dlambda of the arriving edge (kept in
    the y and lambda* fields for node i - 1). With ``estimate``, only the arriving edge's
    tension (its dlambda from lambda = 0) is stored. Otherwise x and lambda take the step
    where ``go`` (the lane still iterates; selects, so the lane loop stays vectorised), and
    the residual of the leaving edge, whose ends are both final now, joins the lane's running
    maximum."""
    L = np.uint64(lanes)
    L2 = L + L
    L3 = L2 + L
    L4 = L2 + L2
    L5 = L4 + L
    PS = PSTRIDE * L
    ES = ESTRIDE * L
    X = FX * L
    K = FK * L
    Y = FY * L
    U = FU * L
    N = FN * L
    G = FG * L
    REST = FREST * L
    ALPHA = FALPHA * L
    ACTIVE = FACTIVE * L
    INVERSE_REST = FIR * L
    LAMBDA = FLAMBDA * L
    TENSION = FTENSION * L
    LSTAR = FLSTAR * L
    RMAX = FRMAX * L
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
    buffer[i + Y] = x0
    buffer[i + Y + L] = x1
    buffer[i + Y + L2] = x2
    edge_buffer[f + LSTAR] = arriving
    if estimate:
        edge_buffer[f + TENSION] = arriving
        return
    p0 = buffer[i + X] + x0 if go else buffer[i + X]
    p1 = buffer[i + X + L] + x1 if go else buffer[i + X + L]
    p2 = buffer[i + X + L2] + x2 if go else buffer[i + X + L2]
    buffer[i + X] = p0
    buffer[i + X + L] = p1
    buffer[i + X + L2] = p2
    multiplier = edge_buffer[f + LAMBDA]
    edge_buffer[f + LAMBDA] = multiplier + arriving if go else multiplier
    # the leaving edge is final: its residual |C + alpha~ lambda| / L
    active = edge_buffer[e + ACTIVE]
    ex = (p0 - buffer[j + X]) * active
    ey = (p1 - buffer[j + X + L]) * active
    ez = (p2 - buffer[j + X + L2]) * active
    length = math.sqrt(ex * ex + ey * ey + ez * ez)
    residual = abs(length - edge_buffer[e + REST] + edge_buffer[e + ALPHA] * inverse_h2
                   * edge_buffer[e + LAMBDA]) * edge_buffer[e + INVERSE_REST]
    below = buffer[j + RMAX]
    buffer[i + RMAX] = residual if residual > below else below


@kernel
def _back(buffer, edge_buffer, particle_offset, edge_offset, length, inverse_h2, going,
          estimate, holds, lanes):
    """Back substitution from the chain end (``_back_node``), moving the lanes whose flag in
    ``going`` (L,) is set (an array of its own: flags in the buffer keep the lane loop scalar,
    for the alias checks they need), or only estimating the tension. The slot is read back
    from memory each time (the x_prev field, lane 0, of the spare slot before the block):
    computed from the loop counter, LLVM sees a decreasing unsigned address and leaves the
    lane loop scalar (measured)."""
    L = np.uint64(lanes)
    PS = PSTRIDE * L
    ES = ESTRIDE * L
    XP = FXP * L
    counter = particle_offset - PS + XP
    buffer[counter] = float(length)
    for _ in range(length):
        p = np.uint64(buffer[counter]) - ONE
        buffer[counter] = float(p)
        a0 = particle_offset + p * PS
        e0 = edge_offset + p * ES
        for lane in range(L):
            l = np.uint64(lane)
            _back_node(buffer, edge_buffer, a0 + l, e0 + l, inverse_h2, going[l] > 0.0,
                       estimate, holds, lanes)


@kernel
def estimate_tension(buffer, edge_buffer, particle_offset, edge_offset, length, inverse_h2,
                     lanes):
    """The tension field (lambda of a step from lambda = 0 without geometric stiffness, at
    the predicted positions) that the first Newton step of a frame builds G from. Moves
    nothing."""
    _forward(buffer, edge_buffer, particle_offset, edge_offset, length, inverse_h2,
             lane_flag(True, lanes), lane_flag(False, lanes), None, lanes)
    _back(buffer, edge_buffer, particle_offset, edge_offset, length, inverse_h2,
          np.ones(lanes), lane_flag(True, lanes), None, lanes)


@kernel
def newton(buffer, edge_buffer, particle_offset, edge_offset, length, inverse_h2,
           min_steps, max_steps, tolerance, dynamic, holds, lanes):
    """Newton steps on a block's chains from the predicted positions (x_pred in the XT
    field, lambda from 0) until each lane's largest residual |C + alpha~ lambda| / L is below
    ``tolerance`` (at least ``min_steps``, at most ``max_steps``); a lane that has converged
    keeps its x and lambda while the others go on. ``dynamic``: the substep's own solve,
    with the geometric stiffness, whose converged lambda becomes the tension estimate of the
    next substep; without it a plain projection of the current positions (the re-solve after
    the contacts, ``kernels_resolve``). ``holds``: None, or the contacts held on their
    segments join the solve (``kernels_held``). Returns the steps taken."""
    L = np.uint64(lanes)
    PS = PSTRIDE * L
    ES = ESTRIDE * L
    RMAX = FRMAX * L
    LAMBDA = FLAMBDA * L
    TENSION = FTENSION * L
    end = particle_offset + length * PS + RMAX
    for lane in range(L):
        buffer[end + np.uint64(lane)] = 0.0
    going = np.ones(lanes)  # 1.0 while the lane iterates
    steps = 0
    for step in range(max_steps):
        # ``first``, ``dynamic`` and ``_back``'s ``estimate`` literals: one compiled variant
        # each (as run-time flags the lane loop stays scalar); one lane has no lane loop,
        # and one variant (``jit.lane_flag``: less to compile on first use)
        if step == 0 and dynamic:
            _forward(buffer, edge_buffer, particle_offset, edge_offset, length, inverse_h2,
                     lane_flag(True, lanes), lane_flag(True, lanes), holds, lanes)
        elif step == 0:
            _forward(buffer, edge_buffer, particle_offset, edge_offset, length, inverse_h2,
                     lane_flag(True, lanes), lane_flag(False, lanes), holds, lanes)
        elif dynamic:
            _forward(buffer, edge_buffer, particle_offset, edge_offset, length, inverse_h2,
                     lane_flag(False, lanes), lane_flag(True, lanes), holds, lanes)
        else:
            _forward(buffer, edge_buffer, particle_offset, edge_offset, length, inverse_h2,
                     lane_flag(False, lanes), lane_flag(False, lanes), holds, lanes)
        _back(buffer, edge_buffer, particle_offset, edge_offset, length, inverse_h2, going,
              lane_flag(False, lanes), holds, lanes)
        steps += 1
        any_going = False
        for lane in range(L):
            l = np.uint64(lane)
            still = (buffer[particle_offset + RMAX + l] > tolerance) | (steps < min_steps)
            still = still & (going[l] > 0.0)
            going[l] = 1.0 if still else 0.0
            any_going = any_going | still
        if not any_going:
            break
    if dynamic:
        for slot in range(length):
            e0 = edge_offset + np.uint64(slot) * ES
            for lane in range(L):
                e = e0 + np.uint64(lane)
                edge_buffer[e + TENSION] = edge_buffer[e + LAMBDA]
    return steps
