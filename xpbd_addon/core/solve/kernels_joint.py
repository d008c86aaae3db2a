"""Bending and stretch in one system: the chain solve's block elimination with bending rows.

Why. Solved one after the other, the stretch solve and then the bending rows' own solve
(which knew nothing of the segments' lengths), a stiff rope held at both ends with slack was
pulled 10 % short, towards its chord, and a stiff curl shortened while it uncurled: the
bending row C_p = e_p / L_p - e_a / L_a - b_p is linear in x and can be met by shortening
segments (docs/physics.md, Bending). Here both are one Newton step on one energy.

The rows. Each interior point p of a chain carries a linear vector constraint

    C_p = (x_{p+1} - x_p) / L_p - (x_p - x_{p-1}) / L_{p-1} - b_p          (3 components)

the change of the rest-length-scaled tangent (|C_p| ~ the turning angle) less its target b_p
(0, straight, for a rope; a rod's rest bend, ``core.rod``). Its energy |C_p|^2 / (2 alpha_p)
with alpha_p = l_p / EI [1/(N m)] (l_p the mean of the two segments' lengths) is the discrete
elastic-rod bending energy EI kappa^2 l_p / 2, so EI [N m^2] is a material constant and the
rope bends the same at any resolution.

The system. The bending energy sum_p |C_p|^2 / (2 alpha_p) joins the chain solve's implicit
system (``kernels_chain``) in its x-rows, scaled like them by h^2: with
beta_p = h^2 / alpha_p [kg m^2] and the rows' coefficients c_{p,k} (1/L_{p-1},
-(1/L_{p-1} + 1/L_p), 1/L_p at k = p - 1, p, p + 1)

    (M + G + H_b) dx - J^T dlambda = -(M (x - x_pred) + grad_b - J^T lambda)
    H_b = sum_p beta_p c_p^T c_p (x) I,   grad_b = sum_p c_{p,k} beta_p C_p(x)

C is linear in x, so its Hessian is exact and constant. H_b couples x_k with x_{k+1} and
x_{k+2}: the chain's matrix, block tridiagonal in the blocks Z_i = (lambda_{i-1}, x_i), gains
a second off-diagonal. Block elimination in the order Z_0, Z_1, ... then carries a front: the
fill of the eliminated blocks on (lambda_{i-1}, x_i, x_{i+1}), a symmetric 7x7 F_i and its
right-hand side f_i. At node i, with P the pivot (Z_i's own block plus F_i's), C the coupling
of the unknowns still ahead (lambda_i, x_{i+1}, x_{i+2}) to Z_i,

    z_i = P^-1 (b_Z + f_Z),   F_{i+1} = F_i[x_{i+1}] - C P^-1 C^T,   f_{i+1} = f_i[x_{i+1}] - C z_i

and back from the chain end Z_i = z_i - P^-1 C^T (dlambda_i, dx_{i+1}, dx_{i+2}). P^-1 comes
from the 3x3 B^-1 as in ``kernels_chain`` (u = B^-1 q, den = q.u - p, K = B^-1 - u u^T / den),
so den > 0 holds as there and no pivoting is needed, pins and alpha = 0 included. Without
bending rows (beta = 0) every term here reduces to ``kernels_stretch.eliminate``'s. About
twice the stretch solve's arithmetic per node; only ropes that bend take it.

A row's compliance has a floor, RIGID_BEND: h^2 / alpha must stay finite in the x-rows (a
bending compliance of 0 acts as EI = 1 / RIGID_BEND, a steel bar 3 cm thick; ``energy``
counts what that stores).

Fields (``topology.PARTICLE_FIELDS``): BEND_WEIGHT (beta_p), BEND_FORCE (beta_p C_p), and,
kept for the back substitution, JOINT_PHI (F_i's lambda_{i-1}, x_{i+1} part), JOINT_Q (the
coupling of x_{i+1} to x_i), JOINT_DEN (1 / den), and JOINT_FRONT, the front itself, written
at node i - 1 and read at node i.
"""

from __future__ import annotations

import numpy as np

from ..jit import inline_kernel, kernel
from ..layout.lanes import (
    ESTRIDE,
    FALPHA,
    FBA,
    FBF,
    FBT,
    FBW,
    FIR,
    FJD,
    FJF,
    FJP,
    FJQ,
    FK,
    FLSTAR,
    FN,
    FRESIDUAL,
    FREST,
    FU,
    FX,
    FY,
    PSTRIDE,
)
from .kernels_held import held_coupling, held_node
from .kernels_stretch import node_system, pivot_inverse

RIGID_BEND = 1.0e-4
"""The least bending compliance per length, alpha_p / l_p [1/(N m^2)]: EI at most 10^4 N m^2."""

# the front's entries, over (lambda, x: 3, y: 3) = (lambda_{i-1}, x_i, x_{i+1}) at node i,
# unsigned as the fields in ``lanes`` (an int64 times the uint64 lane count is a float64 in
# numba, and a float index kept the lane loop scalar: measured, 3.4x slower)
_LL = np.uint64(0)  # lambda lambda
_LX = tuple(np.uint64(1 + k) for k in range(3))  # lambda x
_LY = tuple(np.uint64(4 + k) for k in range(3))  # lambda y
_XX = tuple(np.uint64(7 + k) for k in range(6))  # x x (symmetric: 00 01 02 11 12 22)
_YX = tuple(np.uint64(13 + k) for k in range(9))  # y x (row y_j, column x_k at 3 j + k)
_YY = tuple(np.uint64(22 + k) for k in range(6))  # y y (symmetric)
_FL = np.uint64(28)  # right-hand side: lambda, x (3), y (3)
_FX = tuple(np.uint64(29 + k) for k in range(3))
_FY = tuple(np.uint64(32 + k) for k in range(3))


@kernel
def bend_rows(buffer, edge_buffer, particle_offset, edge_offset, length, inverse_h2, lanes):
    """beta_p = h^2 / alpha_p (0 without a row) and beta_p C_p at the current positions, for
    the block's slots and the spare slot on either side (the elimination reads one ahead);
    the first slot's front is zeroed (nothing eliminated before it)."""
    L = np.uint64(lanes)
    L2 = L + L
    PS = PSTRIDE * L
    ES = ESTRIDE * L
    X = FX * L
    BA = FBA * L
    BW = FBW * L
    BF = FBF * L
    BT = FBT * L
    IR = FIR * L
    REST = FREST * L
    JF = FJF * L
    for k in range(35):
        for lane in range(L):
            buffer[particle_offset + JF + np.uint64(k) * L + np.uint64(lane)] = 0.0
    for slot in range(length + 2):
        p = np.uint64(slot)
        i0 = particle_offset + p * PS - PS
        e0 = edge_offset + p * ES - ES
        for lane in range(L):
            l = np.uint64(lane)
            i = i0 + l
            e = e0 + l
            compliance = buffer[i + BA]
            floor = RIGID_BEND * 0.5 * (edge_buffer[e - ES + REST] + edge_buffer[e + REST])
            alpha = compliance if compliance > floor else floor
            weight = 1.0 / (alpha * inverse_h2) if (compliance >= 0.0) & (alpha > 0.0) else 0.0
            before = edge_buffer[e - ES + IR]
            after = edge_buffer[e + IR]
            middle = -(before + after)
            buffer[i + BW] = weight
            buffer[i + BF] = weight * (before * buffer[i - PS + X] + middle * buffer[i + X]
                                       + after * buffer[i + PS + X] - buffer[i + BT])
            buffer[i + BF + L] = weight * (
                before * buffer[i - PS + X + L] + middle * buffer[i + X + L]
                + after * buffer[i + PS + X + L] - buffer[i + BT + L])
            buffer[i + BF + L2] = weight * (
                before * buffer[i - PS + X + L2] + middle * buffer[i + X + L2]
                + after * buffer[i + PS + X + L2] - buffer[i + BT + L2])


@inline_kernel
def _bend_terms(buffer, edge_buffer, i, e, lanes):
    """Node i's bending: (h_ii, h_{i,i+1}, h_{i,i+2}) of H_b and grad_b (3)."""
    L = np.uint64(lanes)
    L2 = L + L
    PS = PSTRIDE * L
    ES = ESTRIDE * L
    BW = FBW * L
    BF = FBF * L
    IR = FIR * L
    ira = edge_buffer[e - ES + IR]
    irb = edge_buffer[e + IR]
    irc = edge_buffer[e + ES + IR]
    before = buffer[i - PS + BW]
    here = buffer[i + BW]
    after = buffer[i + PS + BW]
    middle = ira + irb
    h_ii = before * ira * ira + here * middle * middle + after * irb * irb
    h_next = -(here * middle * irb + after * irb * (irb + irc))
    h_far = after * irb * irc
    g0 = ira * buffer[i - PS + BF] - middle * buffer[i + BF] + irb * buffer[i + PS + BF]
    g1 = (ira * buffer[i - PS + BF + L] - middle * buffer[i + BF + L]
          + irb * buffer[i + PS + BF + L])
    g2 = (ira * buffer[i - PS + BF + L2] - middle * buffer[i + BF + L2]
          + irb * buffer[i + PS + BF + L2])
    return h_ii, h_next, h_far, g0, g1, g2


@inline_kernel
def joint_eliminate(buffer, edge_buffer, i, e, inverse_h2, holds, lanes):
    """Forward elimination of Z_i = (lambda_{i-1}, x_i) at particle slot i (edge slot e leaves
    it, e - ES arrives), reading node i's front and writing node i + 1's (module docstring).
    Stores z_i (the Y field and the arriving edge's LAMBDA_STAR), u / den, K, 1 / den and the
    coupling (JOINT_PHI, JOINT_Q) for the back substitution."""
    L = np.uint64(lanes)
    L2 = L + L
    L3 = L2 + L
    L4 = L2 + L2
    L5 = L4 + L
    K = FK * L
    Y = FY * L
    U = FU * L
    ALPHA = FALPHA * L
    RESIDUAL = FRESIDUAL * L
    LSTAR = FLSTAR * L
    JP = FJP * L
    JQ = FJQ * L
    JD = FJD * L
    ES = ESTRIDE * L
    f = e - ES
    # the fronts in the particle slots (JOINT_FRONT), read here, written one slot on: a
    # constant stride apart in one array, so the lane loop vectorises (a front in an array
    # of its own kept it scalar: the alias checks it needed)
    rd = i + FJF * L
    wr = rd + PSTRIDE * L
    (free, m00, m01, m02, m11, m12, m22, r0, r1, r2, a0, a1, a2, ga, b0, b1, b2,
     gb) = node_system(buffer, edge_buffer, i, e, lanes)
    h_ii, h_next, h_far, bg0, bg1, bg2 = _bend_terms(buffer, edge_buffer, i, e, lanes)
    # the pivot: p, q = n_a + F_lx, B = m I + g_a P_a + g_b P_b + h_ii I + F_xx (+ holds)
    p = -edge_buffer[f + ALPHA] * inverse_h2 + buffer[rd + _LL * L]
    q0 = a0 + buffer[rd + _LX[0] * L]
    q1 = a1 + buffer[rd + _LX[1] * L]
    q2 = a2 + buffer[rd + _LX[2] * L]
    m00 += h_ii + buffer[rd + _XX[0] * L]
    m01 += buffer[rd + _XX[1] * L]
    m02 += buffer[rd + _XX[2] * L]
    m11 += h_ii + buffer[rd + _XX[3] * L]
    m12 += buffer[rd + _XX[4] * L]
    m22 += h_ii + buffer[rd + _XX[5] * L]
    # the right-hand side: -(m (x - x_pred) + grad_b - J^T lambda) and C + alpha~ lambda
    r0 += buffer[rd + _FX[0] * L] - bg0
    r1 += buffer[rd + _FX[1] * L] - bg1
    r2 += buffer[rd + _FX[2] * L] - bg2
    c = edge_buffer[f + RESIDUAL] + buffer[rd + _FL * L]
    # the coupling of x_{i+1} to x_i: Q = F_yx - g_b P_b + h_{i,i+1} I (+ the hold's S)
    q00 = buffer[rd + _YX[0] * L] - gb * (1.0 - b0 * b0) + h_next
    q01 = buffer[rd + _YX[1] * L] + gb * b0 * b1
    q02 = buffer[rd + _YX[2] * L] + gb * b0 * b2
    q10 = buffer[rd + _YX[3] * L] + gb * b1 * b0
    q11 = buffer[rd + _YX[4] * L] - gb * (1.0 - b1 * b1) + h_next
    q12 = buffer[rd + _YX[5] * L] + gb * b1 * b2
    q20 = buffer[rd + _YX[6] * L] + gb * b2 * b0
    q21 = buffer[rd + _YX[7] * L] + gb * b2 * b1
    q22 = buffer[rd + _YX[8] * L] - gb * (1.0 - b2 * b2) + h_next
    if holds is not None:
        n00, n01, n02, n11, n12, n22, d0, d1, d2 = held_node(edge_buffer, f, e, lanes)
        s00, s01, s02, s11, s12, s22 = held_coupling(edge_buffer, e, lanes)
        m00 += n00
        m01 += n01
        m02 += n02
        m11 += n11
        m12 += n12
        m22 += n22
        r0 -= d0
        r1 -= d1
        r2 -= d2
        q00 += s00
        q01 += s01
        q02 += s02
        q10 += s01
        q11 += s11
        q12 += s12
        q20 += s02
        q21 += s12
        q22 += s22
    phi0 = buffer[rd + _LY[0] * L]
    phi1 = buffer[rd + _LY[1] * L]
    phi2 = buffer[rd + _LY[2] * L]
    # P^-1 = [[-1/den, v^T], [v, K]], v = u / den, K = B^-1 - u v^T
    i00, i01, i02, i11, i12, i22, u0, u1, u2, inverse_den = pivot_inverse(
        m00, m01, m02, m11, m12, m22, q0, q1, q2, p, free)
    v0 = u0 * inverse_den
    v1 = u1 * inverse_den
    v2 = u2 * inverse_den
    k00 = i00 - u0 * v0
    k01 = i01 - u0 * v1
    k02 = i02 - u0 * v2
    k11 = i11 - u1 * v1
    k12 = i12 - u1 * v2
    k22 = i22 - u2 * v2
    # z = P^-1 (c, r)
    z_lambda = v0 * r0 + v1 * r1 + v2 * r2 - c * inverse_den
    z0 = v0 * c + k00 * r0 + k01 * r1 + k02 * r2
    z1 = v1 * c + k01 * r0 + k11 * r1 + k12 * r2
    z2 = v2 * c + k02 * r0 + k12 * r1 + k22 * r2
    buffer[i + K] = k00
    buffer[i + K + L] = k01
    buffer[i + K + L2] = k02
    buffer[i + K + L3] = k11
    buffer[i + K + L4] = k12
    buffer[i + K + L5] = k22
    buffer[i + Y] = z0
    buffer[i + Y + L] = z1
    buffer[i + Y + L2] = z2
    buffer[i + U] = v0
    buffer[i + U + L] = v1
    buffer[i + U + L2] = v2
    buffer[i + JD] = inverse_den
    buffer[i + JP] = phi0
    buffer[i + JP + L] = phi1
    buffer[i + JP + L2] = phi2
    buffer[i + JQ] = q00
    buffer[i + JQ + L] = q01
    buffer[i + JQ + L2] = q02
    buffer[i + JQ + L3] = q10
    buffer[i + JQ + L4] = q11
    buffer[i + JQ + L5] = q12
    buffer[i + JQ + L5 + L] = q20
    buffer[i + JQ + L5 + L2] = q21
    buffer[i + JQ + L5 + L3] = q22
    edge_buffer[f + LSTAR] = z_lambda
    # the next front, over (lambda_i, x_{i+1}, x_{i+2}): F_yy of this one less C P^-1 C^T
    kb0 = k00 * b0 + k01 * b1 + k02 * b2  # K n_b
    kb1 = k01 * b0 + k11 * b1 + k12 * b2
    kb2 = k02 * b0 + k12 * b1 + k22 * b2
    vb = v0 * b0 + v1 * b1 + v2 * b2
    buffer[wr + _LL * L] = -(b0 * kb0 + b1 * kb1 + b2 * kb2)
    # lambda_i with x_{i+1, k}: n_b . (v phi_k + K Q_k) = vb phi_k + (K n_b) . Q_k
    buffer[wr + _LX[0] * L] = vb * phi0 + kb0 * q00 + kb1 * q01 + kb2 * q02
    buffer[wr + _LX[1] * L] = vb * phi1 + kb0 * q10 + kb1 * q11 + kb2 * q12
    buffer[wr + _LX[2] * L] = vb * phi2 + kb0 * q20 + kb1 * q21 + kb2 * q22
    buffer[wr + _LY[0] * L] = h_far * kb0
    buffer[wr + _LY[1] * L] = h_far * kb1
    buffer[wr + _LY[2] * L] = h_far * kb2
    # X_k = P^-1 (phi_k, Q_k): its lambda part and x part, for the columns x_{i+1, k}
    xl0 = v0 * q00 + v1 * q01 + v2 * q02 - inverse_den * phi0
    xl1 = v0 * q10 + v1 * q11 + v2 * q12 - inverse_den * phi1
    xl2 = v0 * q20 + v1 * q21 + v2 * q22 - inverse_den * phi2
    x00 = v0 * phi0 + k00 * q00 + k01 * q01 + k02 * q02  # x part of X_0
    x01 = v1 * phi0 + k01 * q00 + k11 * q01 + k12 * q02
    x02 = v2 * phi0 + k02 * q00 + k12 * q01 + k22 * q02
    x10 = v0 * phi1 + k00 * q10 + k01 * q11 + k02 * q12  # X_1
    x11 = v1 * phi1 + k01 * q10 + k11 * q11 + k12 * q12
    x12 = v2 * phi1 + k02 * q10 + k12 * q11 + k22 * q12
    x20 = v0 * phi2 + k00 * q20 + k01 * q21 + k02 * q22  # X_2
    x21 = v1 * phi2 + k01 * q20 + k11 * q21 + k12 * q22
    x22 = v2 * phi2 + k02 * q20 + k12 * q21 + k22 * q22
    # x_{i+1} with x_{i+1}: F_yy - (phi_j X_lambda,k + Q_j . X_x,k)
    buffer[wr + _XX[0] * L] = buffer[rd + _YY[0] * L] - (phi0 * xl0 + q00 * x00 + q01 * x01
                                                 + q02 * x02)
    buffer[wr + _XX[1] * L] = buffer[rd + _YY[1] * L] - (phi0 * xl1 + q00 * x10
                                                             + q01 * x11 + q02 * x12)
    buffer[wr + _XX[2] * L] = buffer[rd + _YY[2] * L] - (phi0 * xl2 + q00 * x20
                                                             + q01 * x21 + q02 * x22)
    buffer[wr + _XX[3] * L] = buffer[rd + _YY[3] * L] - (phi1 * xl1 + q10 * x10
                                                             + q11 * x11 + q12 * x12)
    buffer[wr + _XX[4] * L] = buffer[rd + _YY[4] * L] - (phi1 * xl2 + q10 * x20
                                                             + q11 * x21 + q12 * x22)
    buffer[wr + _XX[5] * L] = buffer[rd + _YY[5] * L] - (phi2 * xl2 + q20 * x20
                                                             + q21 * x21 + q22 * x22)
    # x_{i+2, j} with x_{i+1, k}: -h_far (phi_k v_j + Q_k . K[:, j])
    kq00 = k00 * q00 + k01 * q01 + k02 * q02  # (K Q_k)_j at [k][j]
    kq01 = k01 * q00 + k11 * q01 + k12 * q02
    kq02 = k02 * q00 + k12 * q01 + k22 * q02
    kq10 = k00 * q10 + k01 * q11 + k02 * q12
    kq11 = k01 * q10 + k11 * q11 + k12 * q12
    kq12 = k02 * q10 + k12 * q11 + k22 * q12
    kq20 = k00 * q20 + k01 * q21 + k02 * q22
    kq21 = k01 * q20 + k11 * q21 + k12 * q22
    kq22 = k02 * q20 + k12 * q21 + k22 * q22
    buffer[wr + _YX[0] * L] = -h_far * (phi0 * v0 + kq00)
    buffer[wr + _YX[1] * L] = -h_far * (phi1 * v0 + kq10)
    buffer[wr + _YX[2] * L] = -h_far * (phi2 * v0 + kq20)
    buffer[wr + _YX[3] * L] = -h_far * (phi0 * v1 + kq01)
    buffer[wr + _YX[4] * L] = -h_far * (phi1 * v1 + kq11)
    buffer[wr + _YX[5] * L] = -h_far * (phi2 * v1 + kq21)
    buffer[wr + _YX[6] * L] = -h_far * (phi0 * v2 + kq02)
    buffer[wr + _YX[7] * L] = -h_far * (phi1 * v2 + kq12)
    buffer[wr + _YX[8] * L] = -h_far * (phi2 * v2 + kq22)
    hh = h_far * h_far
    buffer[wr + _YY[0] * L] = -hh * k00
    buffer[wr + _YY[1] * L] = -hh * k01
    buffer[wr + _YY[2] * L] = -hh * k02
    buffer[wr + _YY[3] * L] = -hh * k11
    buffer[wr + _YY[4] * L] = -hh * k12
    buffer[wr + _YY[5] * L] = -hh * k22
    buffer[wr + _FL * L] = b0 * z0 + b1 * z1 + b2 * z2
    buffer[wr + _FX[0] * L] = buffer[rd + _FY[0] * L] - (phi0 * z_lambda + q00 * z0 + q01 * z1
                                                 + q02 * z2)
    buffer[wr + _FX[1] * L] = buffer[rd + _FY[1] * L] - (phi1 * z_lambda + q10 * z0
                                                             + q11 * z1 + q12 * z2)
    buffer[wr + _FX[2] * L] = buffer[rd + _FY[2] * L] - (phi2 * z_lambda + q20 * z0
                                                             + q21 * z1 + q22 * z2)
    buffer[wr + _FY[0] * L] = -h_far * z0
    buffer[wr + _FY[1] * L] = -h_far * z1
    buffer[wr + _FY[2] * L] = -h_far * z2


@inline_kernel
def joint_back(buffer, edge_buffer, i, e, lanes):
    """Back substitution at particle slot i: Z_i = z_i - P^-1 C^T (dlambda_i, dx_{i+1},
    dx_{i+2}), with w = -n_b dlambda_i + Q^T dx_{i+1} + h_{i,i+2} dx_{i+2} and s = phi.dx_{i+1}:
    dx_i = z_x - (v s + K w), dlambda_{i-1} = z_lambda - (v.w - s / den). Returns
    (dx_i, dlambda_{i-1})."""
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
    LSTAR = FLSTAR * L
    JP = FJP * L
    JQ = FJQ * L
    JD = FJD * L
    BW = FBW * L
    IR = FIR * L
    j = i + PS
    k = j + PS
    f = e - ES
    dl = edge_buffer[e + LSTAR]
    d0 = buffer[j + Y]
    d1 = buffer[j + Y + L]
    d2 = buffer[j + Y + L2]
    h_far = buffer[j + BW] * edge_buffer[e + IR] * edge_buffer[e + ES + IR]
    w0 = (-edge_buffer[e + N] * dl + buffer[i + JQ] * d0 + buffer[i + JQ + L3] * d1
          + buffer[i + JQ + L5 + L] * d2 + h_far * buffer[k + Y])
    w1 = (-edge_buffer[e + N + L] * dl + buffer[i + JQ + L] * d0 + buffer[i + JQ + L4] * d1
          + buffer[i + JQ + L5 + L2] * d2 + h_far * buffer[k + Y + L])
    w2 = (-edge_buffer[e + N + L2] * dl + buffer[i + JQ + L2] * d0 + buffer[i + JQ + L5] * d1
          + buffer[i + JQ + L5 + L3] * d2 + h_far * buffer[k + Y + L2])
    s = buffer[i + JP] * d0 + buffer[i + JP + L] * d1 + buffer[i + JP + L2] * d2
    v0 = buffer[i + U]
    v1 = buffer[i + U + L]
    v2 = buffer[i + U + L2]
    k00 = buffer[i + K]
    k01 = buffer[i + K + L]
    k02 = buffer[i + K + L2]
    k11 = buffer[i + K + L3]
    k12 = buffer[i + K + L4]
    k22 = buffer[i + K + L5]
    x0 = buffer[i + Y] - (v0 * s + k00 * w0 + k01 * w1 + k02 * w2)
    x1 = buffer[i + Y + L] - (v1 * s + k01 * w0 + k11 * w1 + k12 * w2)
    x2 = buffer[i + Y + L2] - (v2 * s + k02 * w0 + k12 * w1 + k22 * w2)
    arriving = edge_buffer[f + LSTAR] - (v0 * w0 + v1 * w1 + v2 * w2 - s * buffer[i + JD])
    return x0, x1, x2, arriving
