"""The rope's constraints once more after the contacts of a substep.

Contacts (friction most of all) act after the substep's own solve and could drag particles
far beyond what the rope's stretch constraints allow: a box at 5 m/s with mu 0.5 carried a
pinned rope along at 4x its length, one segment at 12x. ``direct_resolve`` solves the
stretch constraints (the direct chain solve of ``kernels_direct``) and the strain limit
again from where the contacts left the particles, without predicting, and adds the move to
v (v += dx velocity_scale, the contacts' own velocity rule, so a gentle push-out stays
gentle). The solver then runs the contacts once more without friction
(``contacts.FrameContacts.project``): what the rope's constraints undid of the friction
stays undone, what they pulled into a collider is pushed out.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from .kernels_direct import (
    _ESTRIDE,
    _FALPHA,
    _FCP,
    _FDP,
    _FLAMBDA,
    _FN,
    _FV,
    _FW,
    _FX,
    _FXP,
    _ONE,
    _PSTRIDE,
    _TWO,
    _coupling,
    _direction,
    _limited,
    _move,
    kernel,
    parallel_kernel,
)


@kernel
def _chain(buffer, edge_buffer, particle_offset, edge_offset, edges, inverse_h2, lanes):
    """One Newton step on the chain's stretch constraints (``kernels_direct``'s chain solve,
    kept here without its predict so that the two can evolve apart): factor, solve, move."""
    L = np.uint64(lanes)
    L2 = L + L
    PS = _PSTRIDE * L
    ES = _ESTRIDE * L
    W = _FW * L
    ALPHA = _FALPHA * L
    N = _FN * L
    CP = _FCP * L
    DP = _FDP * L
    LAMBDA = _FLAMBDA * L
    # Forward elimination. Row e needs n_{e+1} for its upper entry, so directions are
    # computed one edge ahead; C_{e+1} waits in the D' field until row e + 1 uses it.
    for lane in range(L):
        l = np.uint64(lane)
        c0 = _direction(buffer, edge_buffer, particle_offset + l, particle_offset + PS + l,
                        edge_offset + l, lanes)
        edge_buffer[edge_offset + l + DP] = c0
    for slot in range(edges):
        p = np.uint64(slot)
        a0 = particle_offset + p * PS
        e0 = edge_offset + p * ES
        for lane in range(L):
            l = np.uint64(lane)
            e = e0 + l
            a = a0 + l
            b = a + PS
            w_a = buffer[a + W]
            w_b = buffer[b + W]
            alpha_tilde = edge_buffer[e + ALPHA] * inverse_h2
            rhs = -edge_buffer[e + DP] - alpha_tilde * edge_buffer[e + LAMBDA]
            # The spare edge slots before the first and after the last edge are inactive
            # (n = 0), so the first row sees no lower and the last no upper neighbour.
            f = e + ES
            edge_buffer[f + DP] = _direction(buffer, edge_buffer, b, b + PS, f, lanes)
            upper = _coupling(edge_buffer, e, f, w_b, lanes)
            lower = _coupling(edge_buffer, e - ES, e, w_a, lanes)
            pivot = (w_a + w_b) + alpha_tilde - lower * edge_buffer[e - ES + CP]
            inverse_pivot = 1.0 / pivot if pivot > 0.0 else 0.0
            edge_buffer[e + CP] = upper * inverse_pivot
            edge_buffer[e + DP] = (rhs - lower * edge_buffer[e - ES + DP]) * inverse_pivot
    # Back substitution from the free end, moving each particle as soon as both of its
    # multipliers are known: dx_p = w_p (n_p dlambda_p - n_{p-1} dlambda_{p-1}).
    for lane in range(L):
        l = np.uint64(lane)
        e = edge_offset + (edges - _ONE) * ES + l
        dlambda = edge_buffer[e + DP]
        edge_buffer[e + LAMBDA] += dlambda
        _move(buffer, particle_offset + edges * PS + l, -edge_buffer[e + N] * dlambda,
              -edge_buffer[e + N + L] * dlambda, -edge_buffer[e + N + L2] * dlambda, lanes)
    for back in range(edges - _ONE):
        p = edges - _TWO - np.uint64(back)
        e0 = edge_offset + p * ES
        i0 = particle_offset + (p + _ONE) * PS
        for lane in range(L):
            l = np.uint64(lane)
            e = e0 + l
            f = e + ES
            dlambda_next = edge_buffer[f + DP]
            dlambda = edge_buffer[e + DP] - edge_buffer[e + CP] * dlambda_next
            edge_buffer[e + DP] = dlambda
            edge_buffer[e + LAMBDA] += dlambda
            _move(
                buffer, i0 + l,
                edge_buffer[f + N] * dlambda_next - edge_buffer[e + N] * dlambda,
                edge_buffer[f + N + L] * dlambda_next - edge_buffer[e + N + L] * dlambda,
                edge_buffer[f + N + L2] * dlambda_next - edge_buffer[e + N + L2] * dlambda, lanes
            )
    for lane in range(L):
        l = np.uint64(lane)
        e = edge_offset + l
        dlambda = edge_buffer[e + DP]
        _move(buffer, particle_offset + l, edge_buffer[e + N] * dlambda,
              edge_buffer[e + N + L] * dlambda, edge_buffer[e + N + L2] * dlambda, lanes)


@kernel
def _resolve_block(buffer, edge_buffer, particle_offset, edge_offset, length, leading,
                   h, newton_iterations, strain_limit, velocity_scale, lanes):
    """Stretch solve and strain limit of one block, no predict; v += (x_new - x) s for the
    free particles. The x_prev field is the scratch for x (the next predict rewrites it)."""
    L = np.uint64(lanes)
    L2 = L + L
    PS = _PSTRIDE * L
    ES = _ESTRIDE * L
    X = _FX * L
    V = _FV * L
    XP = _FXP * L
    W = _FW * L
    LAMBDA = _FLAMBDA * L
    if length < _TWO:
        return
    inverse_h2 = 1.0 / (h * h)
    edges = length - _ONE
    for slot in range(length):
        base = particle_offset + np.uint64(slot) * PS
        for lane in range(L):
            i = base + np.uint64(lane)
            buffer[i + XP] = buffer[i + X]
            buffer[i + XP + L] = buffer[i + X + L]
            buffer[i + XP + L2] = buffer[i + X + L2]
    for _ in range(newton_iterations):
        _chain(buffer, edge_buffer, particle_offset, edge_offset, edges, inverse_h2, lanes)
    if leading and strain_limit >= 0.0:
        for back in range(edges):
            p = edges - _ONE - np.uint64(back)
            a0 = particle_offset + p * PS
            e0 = edge_offset + p * ES
            for lane in range(L):
                l = np.uint64(lane)
                a = a0 + l
                x, y, z = _limited(a, a + PS, e0 + l, edge_buffer, strain_limit,
                                   inverse_h2, buffer, -1.0, lanes)
                buffer[a + X] = x
                buffer[a + X + L] = y
                buffer[a + X + L2] = z
    for slot in range(edges):
        p = np.uint64(slot)
        a0 = particle_offset + p * PS
        e0 = edge_offset + p * ES
        for lane in range(L):
            l = np.uint64(lane)
            a = a0 + l
            b = a + PS
            x, y, z = _limited(b, a, e0 + l, edge_buffer, strain_limit, inverse_h2, buffer,
                               1.0, lanes)
            buffer[b + X] = x
            buffer[b + X + L] = y
            buffer[b + X + L2] = z
            edge_buffer[e0 + l + LAMBDA] = 0.0
    for slot in range(length):
        base = particle_offset + np.uint64(slot) * PS
        for lane in range(L):
            i = base + np.uint64(lane)
            if buffer[i + W] > 0.0:
                buffer[i + V] += (buffer[i + X] - buffer[i + XP]) * velocity_scale
                buffer[i + V + L] += (buffer[i + X + L] - buffer[i + XP + L]) * velocity_scale
                buffer[i + V + L2] += ((buffer[i + X + L2] - buffer[i + XP + L2])
                                       * velocity_scale)


@kernel
def _resolve_blocks(buffer, edge_buffer, block_particle_offset, block_edge_offset, block_length,
                    block_leading, h, newton_iterations, strain_limit, velocity_scale, lanes):
    for b in range(block_length.shape[0]):
        _resolve_block(buffer, edge_buffer, block_particle_offset[b], block_edge_offset[b],
                       block_length[b], block_leading[b], h, newton_iterations, strain_limit,
                       velocity_scale, lanes)


@kernel
def direct_resolve(buffer, edge_buffer, block_particle_offset, block_edge_offset, block_length,
                   block_leading, h, newton_iterations, strain_limit, velocity_scale):
    """``_resolve_block`` over every block of 16 lanes, one thread."""
    _resolve_blocks(buffer, edge_buffer, block_particle_offset, block_edge_offset, block_length,
                    block_leading, h, newton_iterations, strain_limit, velocity_scale, 16)


@kernel
def direct_resolve_single(buffer, edge_buffer, block_particle_offset, block_edge_offset,
                          block_length, block_leading, h, newton_iterations, strain_limit,
                          velocity_scale):
    """``direct_resolve`` for blocks of one rope each (a lane count of 1)."""
    _resolve_blocks(buffer, edge_buffer, block_particle_offset, block_edge_offset, block_length,
                    block_leading, h, newton_iterations, strain_limit, velocity_scale, 1)


@parallel_kernel
def direct_resolve_parallel(buffer, edge_buffer, block_particle_offset, block_edge_offset,
                            block_length, block_leading, h, newton_iterations, strain_limit,
                            velocity_scale):
    """``direct_resolve`` with blocks spread over threads (same result for any count)."""
    for b in prange(block_length.shape[0]):
        _resolve_block(buffer, edge_buffer, block_particle_offset[b], block_edge_offset[b],
                       block_length[b], block_leading[b], h, newton_iterations, strain_limit,
                       velocity_scale, 16)


@kernel
def moved_beyond(x, before, moved, distance):
    """Whether a particle flagged in ``moved`` is farther than ``distance`` from ``before``."""
    limit = distance * distance
    for i in range(x.shape[0]):
        if moved[i]:
            d2 = ((x[i, 0] - before[i, 0]) ** 2 + (x[i, 1] - before[i, 1]) ** 2
                  + (x[i, 2] - before[i, 2]) ** 2)
            if d2 > limit:
                return True
    return False
