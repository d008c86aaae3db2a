"""The direct chain solve: each substep, every stretch constraint of a rope solved together.

A substep of a block of ropes (``direct_block``): predict; on a frame's first substep the
tension estimate (``kernels_chain.estimate_tension``); Newton steps of the rope's implicit
system with its geometric stiffness until each rope has converged (``kernels_chain.newton``,
stable at any point count and substep count), with the bending rows in the same system
where a rope bends (``kernels_joint``); the optional strain limit; velocities. One
Gauss-Seidel sweep per substep (``kernels``) instead leaves a residual growing with the
square of the point count (a stiff 100-point rope stretches 41 % at S = 10); here a
constraint under tension T settles at C = alpha T at any S.

The data layout is the lane layout of ``topology.LaneLayout`` (16 chains interleaved).
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from ..jit import inline_kernel, kernel, lane_flag, optional_item, parallel_kernel
from ..layout.lanes import (
    ESTRIDE,
    FA,
    FALPHA,
    FLAMBDA,
    FREST,
    FT,
    FTENSION,
    FV,
    FVO,
    FW,
    FX,
    FXO,
    FXP,
    FXT,
    ONE,
    PSTRIDE,
    TWO,
    ZERO,
)
from .kernels_chain import MAX_NEWTON_STEPS, NEWTON_TOLERANCE, estimate_tension, newton


@kernel
def _update_velocity(buffer, i, velocity_scale, lanes):
    """v <- (x - x_prev) * velocity_scale for a free particle (pins keep their velocity)."""
    L = np.uint64(lanes)
    L2 = L + L
    X = FX * L
    V = FV * L
    XP = FXP * L
    W = FW * L
    if buffer[i + W] > 0.0:
        buffer[i + V] = (buffer[i + X] - buffer[i + XP]) * velocity_scale
        buffer[i + V + L] = (buffer[i + X + L] - buffer[i + XP + L]) * velocity_scale
        buffer[i + V + L2] = (buffer[i + X + L2] - buffer[i + XP + L2]) * velocity_scale


@kernel
def _predict(buffer, i, g0, g1, g2, h, velocity_scale, settle, lanes):
    """With ``settle``, first the last substep's velocity (``_update_velocity``); then
    x_prev <- x; v <- v + h (g + a) (free only, a the particle's external acceleration
    ``PARTICLE_ACCELERATION``); x <- x + h v, also kept as the prediction x_pred
    (``kernels_chain``). Selects, no conditional stores: a masked store followed by a load of
    the same place stalls the vector loop (measured)."""
    L = np.uint64(lanes)
    L2 = L + L
    X = FX * L
    V = FV * L
    XP = FXP * L
    XT = FXT * L
    W = FW * L
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
    A = FA * L
    # g + 0.0 is g exactly: without external accelerations the bits are gravity's alone
    u = u + h * (g0 + buffer[i + A]) if free else u
    v = v + h * (g1 + buffer[i + A + L]) if free else v
    w = w + h * (g2 + buffer[i + A + L2]) if free else w
    buffer[i + XP] = x
    buffer[i + XP + L] = y
    buffer[i + XP + L2] = z
    buffer[i + V] = u
    buffer[i + V + L] = v
    buffer[i + V + L2] = w
    x = x + h * u
    y = y + h * v
    z = z + h * w
    buffer[i + X] = x
    buffer[i + X + L] = y
    buffer[i + X + L2] = z
    buffer[i + XT] = x
    buffer[i + XT + L] = y
    buffer[i + XT + L2] = z


@kernel
def _predict_second(buffer, i, g0, g1, g2, h, settle_scale, start, lanes):
    """The second-order (BDF2) predict of a substep after the first of a frame: the last
    substep's velocity v_n = (x - x_prev) settle_scale, then, with x_{n-1}, v_{n-1} the
    position and velocity a substep before (the frame's first substep: its start, ``start``),

        base = (4 x_n - x_{n-1}) / 3,   x_pred = base + h' (4 v_n - v_{n-1}) / 3 + h'^2 g

    (g: gravity plus the particle's external acceleration ``PARTICLE_ACCELERATION``)

    with h' = 2 h / 3; x_prev <- base, so that the velocity update (x - base) / h' is
    BDF2's. Pins keep moving in a straight line at their velocity."""
    L = np.uint64(lanes)
    X = FX * L
    V = FV * L
    XP = FXP * L
    XT = FXT * L
    XO = FXO * L
    VO = FVO * L
    W = FW * L
    A = FA * L
    reduced = h * (2.0 / 3.0)
    free = buffer[i + W] > 0.0
    for c in (ZERO, L, L + L):
        gravity = (g0 if c == ZERO else (g1 if c == L else g2)) + buffer[i + A + c]
        x = buffer[i + X + c]
        before = buffer[i + XP + c]
        v = (x - before) * settle_scale if free else buffer[i + V + c]
        # the frame's first substep began at x_prev with v - h g (its predict added h g)
        x_old = before if start else buffer[i + XO + c]
        v_old = buffer[i + V + c] - h * gravity if start else buffer[i + VO + c]
        base = (4.0 * x - x_old) * (1.0 / 3.0)
        predicted = (base + reduced * (4.0 * v - v_old) * (1.0 / 3.0)
                     + reduced * reduced * gravity)
        buffer[i + XO + c] = x
        buffer[i + VO + c] = v
        buffer[i + V + c] = v
        buffer[i + XP + c] = base if free else x
        x = predicted if free else x + h * v
        buffer[i + X + c] = x
        buffer[i + XT + c] = x


@kernel
def _scale_tension(edge_buffer, edge_offset, length, factor, lanes):
    """The tension estimate times ``factor``: lambda is a force times the step squared, and
    the second-order substeps' step is 2/3 of the first's."""
    L = np.uint64(lanes)
    ES = ESTRIDE * L
    TENSION = FTENSION * L
    for slot in range(length):
        e0 = edge_offset + np.uint64(slot) * ES
        for lane in range(L):
            edge_buffer[e0 + np.uint64(lane) + TENSION] *= factor


@kernel
def _limited(outer, inner, e, edge_buffer, strain_limit, inverse_h2, buffer, side, lanes):
    """Strain limiting (Provot 1995) of one segment of a part of a chain hanging off a pin.

    A safety net, off by default: the converged solve holds the lengths by itself. Walking
    away from the pin, as in follow-the-leader (Müller, Kim & Chentanez 2012), a segment
    longer than (L0 + alpha_tilde |lambda|) (1 + strain_limit), its rest length plus the
    compliant stretch its tension explains, is shortened by moving its outer end, which
    guarantees the bound in one O(n) pass. A zero-length segment (two coincident points) is
    left to the solve: its row is empty while its ends coincide (no direction), and pulling
    only the outer end back onto the inner one every substep made momentum, and energy, from
    nothing. Returns the outer end's new position (unchanged
    unless ``outer`` hangs on this ``side`` of the pins and is over-stretched; computed
    branch-free so that the lane loop vectorises).
    """
    L = np.uint64(lanes)
    L2 = L + L
    X = FX * L
    T = FT * L
    REST = FREST * L
    ALPHA = FALPHA * L
    LAMBDA = FLAMBDA * L
    dx = buffer[outer + X] - buffer[inner + X]
    dy = buffer[outer + X + L] - buffer[inner + X + L]
    dz = buffer[outer + X + L2] - buffer[inner + X + L2]
    length = math.sqrt(dx * dx + dy * dy + dz * dz)
    limit = (edge_buffer[e + REST]
             + edge_buffer[e + ALPHA] * inverse_h2 * abs(edge_buffer[e + LAMBDA])) * (
        1.0 + strain_limit)
    over = ((length > limit) & (buffer[outer + T] == side) & (strain_limit >= 0.0)
            & (edge_buffer[e + REST] > 0.0))
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
    PS = PSTRIDE * L
    ES = ESTRIDE * L
    X = FX * L
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
    PS = PSTRIDE * L
    ES = ESTRIDE * L
    X = FX * L
    for back in range(start + ONE):
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
def limit_chain(buffer, edge_buffer, particle_offset, edge_offset, edges, leading,
                 strain_limit, inverse_h2, lanes):
    """The strain limit of a block after its solve (off if ``strain_limit`` < 0): towards
    the chain start where ``leading`` says some chain has free points before its first pin,
    then towards the end (``leading`` None: no chain has, and that code is not compiled)."""
    if strain_limit < 0.0:
        return
    if leading is not None and leading:
        _limit_leading(buffer, edge_buffer, particle_offset, edge_offset, edges - ONE,
                       strain_limit, inverse_h2, lanes)
    _limit_trailing(buffer, edge_buffer, particle_offset, edge_offset, ZERO, edges,
                    strain_limit, inverse_h2, lanes)


@kernel
def direct_block(buffer, edge_buffer, block, leading, bending, gravity, h, substeps, fresh,
                  second_order, holds, newton_iterations, strain_limit, velocity_scale, lanes):
    """All substeps of one block of LANES chains (``block``: its particle and edge offsets in
    the lane buffers and its length in particle slots): predict; with ``fresh`` (x, v are a
    frame's start) the tension estimate first; Newton steps of the stretch solve (at least
    ``newton_iterations``, then until converged, ``kernels_chain.newton``); bending; strain
    limiting (off if ``strain_limit`` < 0). The velocity update of a substep is fused with the
    next substep's predict (the positions are final by then); the last one ends the call.

    ``second_order`` (a whole frame, ``fresh``): the substeps after the first are BDF2
    (``_predict_second``), solved with the step h' = 2 h / 3 (alpha~ = alpha / h'^2): far less
    numerical damping of slow swings, the same stability. None: first order, and the BDF2
    code is not compiled. ``bending`` None: no chain of the block bends, and the bending code
    is not compiled (``jit.optional_item``). ``holds`` None: no contact is held in the solve,
    and that code is not compiled; else the contacts held on the segments join it
    (``kernels_held``). ``gravity`` (g0, g1, g2) [m/s^2], one tuple of the three values."""
    g0, g1, g2 = gravity
    particle_offset, edge_offset, length = block
    L = np.uint64(lanes)
    PS = PSTRIDE * L
    inverse_h2 = 1.0 / (h * h)
    inverse_h2_second = 2.25 * inverse_h2
    second_scale = 1.5 * velocity_scale
    edges = length - ONE
    for substep in range(substeps):
        # ``second_order`` None (the calls of one substep, frames with contacts): the BDF2
        # branch is pruned when the kernel is compiled, as ``bending`` below
        second = False
        if second_order is not None:
            second = second_order and substep > 0
            if second and substep == 1:
                for slot in range(length):
                    base = particle_offset + np.uint64(slot) * PS
                    for lane in range(L):
                        _predict_second(buffer, base + np.uint64(lane), g0, g1, g2, h,
                                        velocity_scale, lane_flag(True, lanes), lanes)
            elif second:
                for slot in range(length):
                    base = particle_offset + np.uint64(slot) * PS
                    for lane in range(L):
                        _predict_second(buffer, base + np.uint64(lane), g0, g1, g2, h,
                                        second_scale, lane_flag(False, lanes), lanes)
        if not second:
            for slot in range(length):
                base = particle_offset + np.uint64(slot) * PS
                for lane in range(L):
                    _predict(buffer, base + np.uint64(lane), g0, g1, g2, h, velocity_scale,
                             substep > 0, lanes)
        if length < TWO:
            continue
        step_inverse_h2 = inverse_h2_second if second else inverse_h2
        if fresh and substep == 0:
            estimate_tension(buffer, edge_buffer, particle_offset, edge_offset, length,
                             inverse_h2, lanes)
        if second and substep == 1:
            _scale_tension(edge_buffer, edge_offset, length, 4.0 / 9.0, lanes)
        # ``bending`` is None where no rope of the call bends: the joint solve's code is
        # pruned when the kernel is compiled (``kernels_joint``)
        if bending is not None and bending:
            newton(buffer, edge_buffer, particle_offset, edge_offset, length, step_inverse_h2,
                   newton_iterations, MAX_NEWTON_STEPS, NEWTON_TOLERANCE,
                   lane_flag(True, lanes), holds, lane_flag(True, lanes), lanes)
        else:
            newton(buffer, edge_buffer, particle_offset, edge_offset, length, step_inverse_h2,
                   newton_iterations, MAX_NEWTON_STEPS, NEWTON_TOLERANCE,
                   lane_flag(True, lanes), holds, None, lanes)
        limit_chain(buffer, edge_buffer, particle_offset, edge_offset, edges, leading,
                     strain_limit, step_inverse_h2, lanes)
    last_scale = velocity_scale
    if second_order is not None and second_order and substeps > 1:
        last_scale = second_scale
    for slot in range(length):
        base = particle_offset + np.uint64(slot) * PS
        for lane in range(L):
            _update_velocity(buffer, base + np.uint64(lane), last_scale, lanes)


@inline_kernel
def _direct_blocks(buffer, edge_buffer, blocks, gravity, h, substeps, fresh, second_order,
                   holds, newton_iterations, strain_limit, velocity_scale, lanes):
    (block_particle_offset, block_edge_offset, block_length, block_leading,
     block_bending) = blocks
    for b in range(block_length.shape[0]):
        direct_block(buffer, edge_buffer,
                      (block_particle_offset[b], block_edge_offset[b], block_length[b]),
                      optional_item(block_leading, b),
                      optional_item(block_bending, b),
                      (gravity[0], gravity[1], gravity[2]), h, substeps, fresh, second_order,
                      holds, newton_iterations, strain_limit, velocity_scale, lanes)


@kernel
def direct_substeps_single(buffer, edge_buffer, block_particle_offset, block_edge_offset,
                           block_length, block_leading, block_bending, gravity, h, substeps,
                           fresh, second_order, holds, newton_iterations, strain_limit,
                           velocity_scale):
    """``_direct_blocks`` for blocks of one rope each (a lane count of 1)."""
    _direct_blocks(buffer, edge_buffer,
                   (block_particle_offset, block_edge_offset, block_length, block_leading,
                    block_bending), gravity, h, substeps, fresh, second_order, holds,
                   newton_iterations, strain_limit, velocity_scale, 1)


@parallel_kernel
def direct_substeps_parallel(buffer, edge_buffer, block_particle_offset, block_edge_offset,
                             block_length, block_leading, block_bending, gravity, h, substeps,
                             fresh, second_order, holds, newton_iterations, strain_limit,
                             velocity_scale):
    """``_direct_blocks`` of 16 lanes with blocks spread over threads (same result for any
    count)."""
    for b in prange(block_length.shape[0]):
        direct_block(buffer, edge_buffer,
                      (block_particle_offset[b], block_edge_offset[b], block_length[b]),
                      optional_item(block_leading, b), optional_item(block_bending, b),
                      (gravity[0], gravity[1], gravity[2]), h, substeps, fresh, second_order,
                      holds, newton_iterations, strain_limit, velocity_scale, 16)
