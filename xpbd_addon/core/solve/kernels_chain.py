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
rigid ropes pinned at both ends included. About 300 flops per particle and step. The
recurrences' code is ``kernels_stretch``; with bending rows in the system, ``kernels_joint``.

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
    FLAMBDA,
    FLSTAR,
    FN,
    FRESIDUAL,
    FREST,
    FRMAX,
    FTENSION,
    FX,
    FXP,
    FY,
    ONE,
    PSTRIDE,
)
from .kernels_held import held_row
from .kernels_joint import bend_rows, joint_back, joint_eliminate
from .kernels_stretch import back_step, eliminate

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


@kernel
def _forward(buffer, edge_buffer, particle_offset, edge_offset, length, inverse_h2, first,
             use_tension, holds, bends, lanes):
    """Rows and forward elimination of a block's chains, node by node (module docstring);
    with the contacts held on their segments unless ``holds`` is None (``kernels_held``);
    with the bending rows in the same system unless ``bends`` is None (``kernels_joint``:
    that code is compiled only for blocks of ropes that bend)."""
    L = np.uint64(lanes)
    PS = PSTRIDE * L
    ES = ESTRIDE * L
    if bends is not None:
        bend_rows(buffer, edge_buffer, particle_offset, edge_offset, length, inverse_h2, lanes)
    for slot in range(length):
        p = np.uint64(slot)
        a0 = particle_offset + p * PS
        e0 = edge_offset + p * ES
        for lane in range(L):
            l = np.uint64(lane)
            _edge_row(buffer, edge_buffer, a0 + l, e0 + l, inverse_h2, first, use_tension, lanes)
            if holds is not None:
                held_row(buffer, edge_buffer, a0 + l, e0 + l, lanes)
            if bends is None:
                eliminate(buffer, edge_buffer, a0 + l, e0 + l, inverse_h2, holds, lanes)
            else:
                joint_eliminate(buffer, edge_buffer, a0 + l, e0 + l, inverse_h2, holds, lanes)


@inline_kernel
def _back_node(buffer, edge_buffer, i, e, inverse_h2, go, estimate, holds, bends, lanes):
    """Back substitution at particle slot i: dx_i and dlambda of the arriving edge (kept in
    the y and lambda* fields for node i - 1; ``kernels_joint.joint_back`` where the bending
    rows are in the system). With ``estimate``, only the arriving edge's tension (its dlambda
    from lambda = 0) is stored. Otherwise x and lambda take the step where ``go`` (the lane
    still iterates; selects, so the lane loop stays vectorised), and the residual of the
    leaving edge, whose ends are both final now, joins the lane's running maximum."""
    L = np.uint64(lanes)
    L2 = L + L
    PS = PSTRIDE * L
    ES = ESTRIDE * L
    X = FX * L
    Y = FY * L
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
    if bends is None:
        x0, x1, x2, arriving = back_step(buffer, edge_buffer, i, e, holds, lanes)
    else:
        x0, x1, x2, arriving = joint_back(buffer, edge_buffer, i, e, lanes)
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
    # a zero-length segment (two points modelled on one spot) is measured against its
    # neighbours' length: its constraint is singular where it holds, Newton closes it
    # slowly, and measured against nothing it stopped no lane (its points drifted apart)
    scale = edge_buffer[e + INVERSE_REST]
    scale = scale if scale > 0.0 else (edge_buffer[e - ES + INVERSE_REST]
                                       + edge_buffer[e + ES + INVERSE_REST])
    residual = abs(length - edge_buffer[e + REST] + edge_buffer[e + ALPHA] * inverse_h2
                   * edge_buffer[e + LAMBDA]) * scale
    below = buffer[j + RMAX]
    buffer[i + RMAX] = residual if residual > below else below


@kernel
def _back(buffer, edge_buffer, particle_offset, edge_offset, length, inverse_h2, going,
          estimate, holds, bends, lanes):
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
                       estimate, holds, bends, lanes)


@kernel
def estimate_tension(buffer, edge_buffer, particle_offset, edge_offset, length, inverse_h2,
                     lanes):
    """The tension field (lambda of a step from lambda = 0 without geometric stiffness, at
    the predicted positions) that the first Newton step of a frame builds G from. Moves
    nothing."""
    _forward(buffer, edge_buffer, particle_offset, edge_offset, length, inverse_h2,
             lane_flag(True, lanes), lane_flag(False, lanes), None, None, lanes)
    _back(buffer, edge_buffer, particle_offset, edge_offset, length, inverse_h2,
          np.ones(lanes), lane_flag(True, lanes), None, None, lanes)


@kernel
def newton(buffer, edge_buffer, particle_offset, edge_offset, length, inverse_h2,
           min_steps, max_steps, tolerance, dynamic, holds, bends, lanes):
    """Newton steps on a block's chains from the predicted positions (x_pred in the XT
    field, lambda from 0) until each lane's largest residual |C + alpha~ lambda| / L is below
    ``tolerance`` (at least ``min_steps``, at most ``max_steps``); a lane that has converged
    keeps its x and lambda while the others go on. ``dynamic``: the substep's own solve,
    with the geometric stiffness, whose converged lambda becomes the tension estimate of the
    next substep; without it a plain projection of the current positions (the re-solve after
    the contacts, ``kernels_resolve``). ``holds``: None, or the contacts held on their
    segments join the solve (``kernels_held``). ``bends``: None, or the bending rows are solved
in the same system (``kernels_joint``). Returns the steps taken."""
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
                     lane_flag(True, lanes), lane_flag(True, lanes), holds, bends, lanes)
        elif step == 0:
            _forward(buffer, edge_buffer, particle_offset, edge_offset, length, inverse_h2,
                     lane_flag(True, lanes), lane_flag(False, lanes), holds, bends, lanes)
        elif dynamic:
            _forward(buffer, edge_buffer, particle_offset, edge_offset, length, inverse_h2,
                     lane_flag(False, lanes), lane_flag(True, lanes), holds, bends, lanes)
        else:
            _forward(buffer, edge_buffer, particle_offset, edge_offset, length, inverse_h2,
                     lane_flag(False, lanes), lane_flag(False, lanes), holds, bends, lanes)
        _back(buffer, edge_buffer, particle_offset, edge_offset, length, inverse_h2, going,
              lane_flag(False, lanes), holds, bends, lanes)
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
