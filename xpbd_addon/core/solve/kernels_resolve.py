"""The rope's constraints once more after the contacts of a substep.

Contacts (friction most of all) act after the substep's own solve and could drag particles
far beyond what the rope's stretch constraints allow: a box at 5 m/s with mu 0.5 carried a
pinned rope along at 4x its length, one segment at 12x. ``direct_resolve`` solves the
stretch constraints (the direct chain solve of ``kernels_direct``) and the strain limit
again from where the contacts left the particles, without predicting, and adds the move to
v (v += dx velocity_scale, the contacts' own velocity rule, so a gentle push-out stays
gentle). The solver then runs the contacts once more without friction
(``contacts.FrameContacts.project``): what the rope's constraints undid of the friction
stays undone, what they pulled into a collider is pushed out. Only the ropes in which the
contacts changed a segment's length by more than the solver's threshold are solved again:
their blocks of 16 lanes are, and the block's other ropes keep their x, v
(``ropes_stretched_beyond``, ``scatter_ropes``), so a rope moves the same whichever ropes
share its block.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from ..jit import inline_kernel, kernel, lane_flag, optional_item, parallel_kernel
from ..layout.lanes import FV, FW, FX, FXP, FXT, ONE, PSTRIDE, TWO, ZERO
from ..layout.topology import PARTICLE_V as _V
from ..layout.topology import PARTICLE_X as _X
from .kernels_chain import MAX_NEWTON_STEPS, NEWTON_TOLERANCE, newton
from .kernels_direct import limit_chain


@kernel
def _resolve_block(buffer, edge_buffer, particle_offset, edge_offset, length, leading,
                   h, newton_iterations, strain_limit, velocity_scale, holds, lanes):
    """Stretch solve and strain limit of one block, no predict; v += (x_new - x) s for the
    free particles. The x_prev field is the scratch for x (the next predict rewrites it),
    and x is the solve's starting point x_pred; the geometric stiffness is the substep's
    tension, which the re-solve leaves as it is."""
    L = np.uint64(lanes)
    L2 = L + L
    PS = PSTRIDE * L
    X = FX * L
    V = FV * L
    XP = FXP * L
    XT = FXT * L
    W = FW * L
    if length < TWO:
        return
    inverse_h2 = 1.0 / (h * h)
    edges = length - ONE
    for slot in range(length):
        base = particle_offset + np.uint64(slot) * PS
        for lane in range(L):
            i = base + np.uint64(lane)
            for c in (ZERO, L, L2):
                buffer[i + XP + c] = buffer[i + X + c]
                buffer[i + XT + c] = buffer[i + X + c]
    newton(buffer, edge_buffer, particle_offset, edge_offset, length, inverse_h2,
           newton_iterations, MAX_NEWTON_STEPS, NEWTON_TOLERANCE, lane_flag(False, lanes),
           holds, None, lanes)
    limit_chain(buffer, edge_buffer, particle_offset, edge_offset, edges, leading,
                 strain_limit, inverse_h2, lanes)
    for slot in range(length):
        base = particle_offset + np.uint64(slot) * PS
        for lane in range(L):
            i = base + np.uint64(lane)
            if buffer[i + W] > 0.0:
                buffer[i + V] += (buffer[i + X] - buffer[i + XP]) * velocity_scale
                buffer[i + V + L] += (buffer[i + X + L] - buffer[i + XP + L]) * velocity_scale
                buffer[i + V + L2] += ((buffer[i + X + L2] - buffer[i + XP + L2])
                                       * velocity_scale)


@inline_kernel
def _resolve_blocks(buffer, edge_buffer, block_particle_offset, block_edge_offset, block_length,
                    block_leading, h, newton_iterations, strain_limit, velocity_scale, lanes,
                    active, holds):
    for b in range(block_length.shape[0]):
        if active[b] == 0:
            continue
        _resolve_block(buffer, edge_buffer, block_particle_offset[b], block_edge_offset[b],
                       block_length[b], optional_item(block_leading, b),
                       h, newton_iterations, strain_limit,
                       velocity_scale, holds, lanes)


@kernel
def direct_resolve(buffer, edge_buffer, block_particle_offset, block_edge_offset, block_length,
                   block_leading, h, newton_iterations, strain_limit, velocity_scale, active,
                   holds):
    """``_resolve_block`` over the blocks of 16 lanes flagged in ``active`` (B,), one
    thread; ``holds`` as ``kernels_direct.direct_block``'s."""
    _resolve_blocks(buffer, edge_buffer, block_particle_offset, block_edge_offset, block_length,
                    block_leading, h, newton_iterations, strain_limit, velocity_scale, 16,
                    active, holds)


@kernel
def direct_resolve_single(buffer, edge_buffer, block_particle_offset, block_edge_offset,
                          block_length, block_leading, h, newton_iterations, strain_limit,
                          velocity_scale, active, holds):
    """``direct_resolve`` for blocks of one rope each (a lane count of 1)."""
    _resolve_blocks(buffer, edge_buffer, block_particle_offset, block_edge_offset, block_length,
                    block_leading, h, newton_iterations, strain_limit, velocity_scale, 1,
                    active, holds)


@parallel_kernel
def direct_resolve_parallel(buffer, edge_buffer, block_particle_offset, block_edge_offset,
                            block_length, block_leading, h, newton_iterations, strain_limit,
                            velocity_scale, active, holds):
    """``direct_resolve`` with blocks spread over threads (same result for any count)."""
    for b in prange(block_length.shape[0]):
        if active[b] == 0:
            continue
        _resolve_block(buffer, edge_buffer, block_particle_offset[b], block_edge_offset[b],
                       block_length[b], optional_item(block_leading, b),
                       h, newton_iterations, strain_limit,
                       velocity_scale, holds, 16)


@kernel
def ropes_stretched_beyond(x, before, moved, strain, incident_start, incident, edges,
                           rest_length, particle_rope, rope_block, active_ropes, active):
    """Flags in ``active_ropes`` (R,) the ropes in which the contacts stretched or compressed
    a segment at a particle flagged in ``moved`` by more than ``strain`` x its rest length
    (``rest_length`` (M,) [m]), from ``before`` (N, 3) [m], where the rope's solve left it,
    to x; and in ``active`` (B,) their blocks. ``incident_start``, ``incident``: particle
    i's segments are incident[incident_start[i]:incident_start[i + 1]]; ``particle_rope``
    (N,): its rope, -1 outside the lanes; ``rope_block`` (R,). Returns how many ropes. Only
    they are solved again: what the re-solve undoes is the change of length, and contacts
    that lift a rope evenly (a resting rope's, undoing g h^2) change none.

    The test compares squared lengths, |d^2 - d0^2| > 2 strain l^2 (l the rest length): that
    is |d - d0| > strain l (d + d0) / (2 l) up to the segment's own stretch, no root."""
    active_ropes[:] = 0
    active[:] = 0
    count = 0
    for i in range(x.shape[0]):
        if not moved[i]:
            continue
        rope = particle_rope[i]
        if rope < 0 or active_ropes[rope] != 0:
            continue
        for k in range(incident_start[i], incident_start[i + 1]):
            e = incident[k]
            j = edges[e, 0] + edges[e, 1] - i
            after2 = ((x[i, 0] - x[j, 0]) ** 2 + (x[i, 1] - x[j, 1]) ** 2
                      + (x[i, 2] - x[j, 2]) ** 2)
            before2 = ((before[i, 0] - before[j, 0]) ** 2 + (before[i, 1] - before[j, 1]) ** 2
                       + (before[i, 2] - before[j, 2]) ** 2)
            if abs(after2 - before2) > 2.0 * strain * rest_length[e] * rest_length[e]:
                active_ropes[rope] = 1
                active[rope_block[rope]] = 1
                count += 1
                break
    return count


@kernel
def scatter_ropes(buffer, lane_base, lane_particles, block_start, active, particle_rope,
                  active_ropes, lanes, x, v, moves, awake):
    """x, v (N, 3) of the particles of the ``active_ropes`` back from the lane buffer after
    the re-solve of their ``active`` blocks (the lane order of ``solver._lane_order``, sorted
    by buffer index; block b's particles are rows block_start[b]:block_start[b + 1]), and
    how far [m] it moved each (from x before) into ``moves`` (N,), 0 for every other
    particle. The block's other ropes were solved again in the buffer too but keep x, v
    (the re-solve is for the ropes the contacts moved, whatever shares their block): their
    x, v go back into the buffer instead. The ropes asleep (``awake`` (N,) 0,
    ``kernels_sleep``) keep x, v too; their buffer is refreshed when they wake."""
    moves[:] = 0.0
    for b in range(active.shape[0]):
        if active[b] == 0:
            continue
        for k in range(block_start[b], block_start[b + 1]):
            i = lane_particles[k]
            base = lane_base[k]
            if awake[i] == 0:
                continue
            if active_ropes[particle_rope[i]] == 0:
                for c in range(3):
                    buffer[base + (_X + c) * lanes] = x[i, c]
                    buffer[base + (_V + c) * lanes] = v[i, c]
                continue
            d2 = 0.0
            for c in range(3):
                position = buffer[base + (_X + c) * lanes]
                d = position - x[i, c]
                d2 += d * d
                x[i, c] = position
                v[i, c] = buffer[base + (_V + c) * lanes]
            moves[i] = np.sqrt(d2)
