"""A whole frame of the lane solvers with the copies between x, v and the lane buffer fused in,
and the finiteness check of ``step``'s inputs.

Without contacts ``step`` used to copy every chain particle's x, v into the lane buffer
(``kernels.lane_gather``), solve all blocks, and copy them back: three
passes, each streaming the whole buffer (2.7 MB for 10k particles, more than a core's L2),
which cost more than a substep of the sweep at 10k particles. Here each block (16 ropes) is
copied in, solved and copied out while it is still in the cache. Every particle gets exactly
the arithmetic of the three passes (the same solver functions, the copies are copies): the
same bits.

``lane_base``, ``lane_particles``, ``block_start`` are the plan's lane order
(``model._LaneBuffers``): the lane particles and the buffer index of their field 0, sorted by
it; block b's particles are rows block_start[b]:block_start[b + 1].
"""

from __future__ import annotations

import math

from numba import prange

from ..jit import inline_kernel, kernel, optional_item, parallel_kernel
from ..layout.topology import EDGE_TENSION, LANES, PARTICLE_V, PARTICLE_X
from .kernels import lane_block
from .kernels_direct import direct_block


@kernel
def first_nonfinite(values):
    """Index of the first NaN or inf in the flat float64 array ``values``, -1 if none. The
    first pass only counts (a branch-free loop that vectorises, 20 kB per microsecond or so);
    the second, which finds the index, runs on bad input only."""
    bad = 0
    for k in range(values.shape[0]):
        bad += not math.isfinite(values[k])
    if bad == 0:
        return -1
    for k in range(values.shape[0]):
        if not math.isfinite(values[k]):
            return k
    return -1


@kernel
def _copy_in(buffer, lane_base, lane_particles, first, last, x, v, lanes):
    for k in range(first, last):
        i = lane_particles[k]
        base = lane_base[k]
        for c in range(3):
            buffer[base + (PARTICLE_X + c) * lanes] = x[i, c]
            buffer[base + (PARTICLE_V + c) * lanes] = v[i, c]


@kernel
def _copy_out(buffer, lane_base, lane_particles, first, last, x, v, lanes):
    for k in range(first, last):
        i = lane_particles[k]
        base = lane_base[k]
        for c in range(3):
            x[i, c] = buffer[base + (PARTICLE_X + c) * lanes]
            v[i, c] = buffer[base + (PARTICLE_V + c) * lanes]


@kernel
def _sweep_block_io(buffer, edge_buffer, block_particle_offset, block_edge_offset, block_length,
                    gravity, h, substeps, velocity_scale, lane_base, lane_particles,
                    block_start, x, v, b):
    first, last = block_start[b], block_start[b + 1]
    _copy_in(buffer, lane_base, lane_particles, first, last, x, v, LANES)
    lane_block(buffer, edge_buffer, block_particle_offset[b], block_edge_offset[b],
                block_length[b], gravity[0], gravity[1], gravity[2], h, substeps,
                velocity_scale)
    _copy_out(buffer, lane_base, lane_particles, first, last, x, v, LANES)


@kernel
def sweep_frame(buffer, edge_buffer, block_particle_offset, block_edge_offset, block_length,
                gravity, h, substeps, velocity_scale, lane_base, lane_particles, block_start,
                x, v):
    """``kernels.lane_substeps`` between the copies of x, v (N, 3) [m], [m/s] into the lanes
    and back, block by block (one thread)."""
    for b in range(block_length.shape[0]):
        _sweep_block_io(buffer, edge_buffer, block_particle_offset, block_edge_offset,
                        block_length, gravity, h, substeps, velocity_scale, lane_base,
                        lane_particles, block_start, x, v, b)


@parallel_kernel
def sweep_frame_parallel(buffer, edge_buffer, block_particle_offset, block_edge_offset,
                         block_length, gravity, h, substeps, velocity_scale, lane_base,
                         lane_particles, block_start, x, v):
    """``sweep_frame`` with blocks spread over threads (blocks share no particle)."""
    for b in prange(block_length.shape[0]):
        _sweep_block_io(buffer, edge_buffer, block_particle_offset, block_edge_offset,
                        block_length, gravity, h, substeps, velocity_scale, lane_base,
                        lane_particles, block_start, x, v, b)


@inline_kernel
def _direct_block_io(buffer, edge_buffer, blocks, gravity, h, substeps, second_order,
                     newton_iterations, strain_limit, velocity_scale, lane_order, x, v, b,
                     fresh, lanes):
    """Block ``b``: x, v copied in, ``kernels_direct.direct_block`` (a frame's start: with
    ``fresh`` the tension estimate from x, v, else the tension ``put_tension`` wrote), copied
    out. ``lanes`` is a literal at every call, as in ``kernels_direct``, so LLVM can fold
    it."""
    (block_particle_offset, block_edge_offset, block_length, block_leading,
     block_bending) = blocks
    lane_base, lane_particles, block_start = lane_order
    first, last = block_start[b], block_start[b + 1]
    _copy_in(buffer, lane_base, lane_particles, first, last, x, v, lanes)
    direct_block(buffer, edge_buffer,
                  (block_particle_offset[b], block_edge_offset[b], block_length[b]),
                  optional_item(block_leading, b),
                  optional_item(block_bending, b), (gravity[0], gravity[1], gravity[2]), h,
                  substeps, fresh, second_order, None, newton_iterations, strain_limit,
                  velocity_scale, lanes)
    _copy_out(buffer, lane_base, lane_particles, first, last, x, v, lanes)


@kernel
def direct_frame(buffer, edge_buffer, blocks, gravity, h, substeps, second_order,
                 newton_iterations, strain_limit, velocity_scale, lane_order, x, v, fresh):
    """The direct solve (``kernels_direct._direct_blocks``) between the copies of x, v, block
    by block (16 lanes, one thread); ``blocks`` and ``lane_order`` as ``groups`` declares
    them; ``fresh`` as ``direct_block``'s."""
    (block_particle_offset, block_edge_offset, block_length, block_leading,
     block_bending) = blocks
    for b in range(block_length.shape[0]):
        _direct_block_io(buffer, edge_buffer, blocks, gravity, h, substeps, second_order,
                         newton_iterations, strain_limit, velocity_scale, lane_order, x, v, b,
                         fresh, 16)


@kernel
def direct_frame_single(buffer, edge_buffer, blocks, gravity, h, substeps, second_order,
                        newton_iterations, strain_limit, velocity_scale, lane_order, x, v,
                        fresh):
    """``direct_frame`` for blocks of one rope each (a lane count of 1)."""
    (block_particle_offset, block_edge_offset, block_length, block_leading,
     block_bending) = blocks
    for b in range(block_length.shape[0]):
        _direct_block_io(buffer, edge_buffer, blocks, gravity, h, substeps, second_order,
                         newton_iterations, strain_limit, velocity_scale, lane_order, x, v, b,
                         fresh, 1)


@parallel_kernel
def direct_frame_parallel(buffer, edge_buffer, blocks, gravity, h, substeps, second_order,
                          newton_iterations, strain_limit, velocity_scale, lane_order, x, v,
                          fresh):
    """``direct_frame`` with blocks spread over threads (blocks share no particle)."""
    (block_particle_offset, block_edge_offset, block_length, block_leading,
     block_bending) = blocks
    for b in prange(block_length.shape[0]):
        _direct_block_io(buffer, edge_buffer, blocks, gravity, h, substeps, second_order,
                         newton_iterations, strain_limit, velocity_scale, lane_order, x, v, b,
                         fresh, 16)


@kernel
def put_tension(edge_buffer, edge_base, edge_ids, lanes, tension, step):
    """The direct solve's tension field (``EDGE_TENSION``, lambda = -T h^2 of XPBD) of every
    lane edge from ``tension`` (M,) [N] per input edge, for a substep of ``step`` [s]: the
    geometric stiffness of a frame's first Newton step is built from it instead of the
    estimate from x, v (``kernels_chain.estimate_tension``). Writes nothing and returns False
    if some lane edge's tension is not finite."""
    for k in range(edge_ids.shape[0]):
        if not math.isfinite(tension[edge_ids[k]]):
            return False
    scale = -step * step
    for k in range(edge_ids.shape[0]):
        edge_buffer[edge_base[k] + EDGE_TENSION * lanes] = tension[edge_ids[k]] * scale
    return True


@kernel
def take_tension(edge_buffer, edge_base, edge_ids, lanes, step, out):
    """Each lane edge's tension T = -lambda / h^2 [N] into ``out`` (M,) per input edge, from
    the converged lambda of the last substep (of ``step`` [s]) in ``EDGE_TENSION``."""
    square = step * step
    for k in range(edge_ids.shape[0]):
        out[edge_ids[k]] = -edge_buffer[edge_base[k] + EDGE_TENSION * lanes] / square


@kernel
def pin_start(x, v, pinned, targets, dt, velocity):
    """The pinned particles' velocity over the frame, (target - x) / dt [m/s], into
    ``velocity`` (P, 3) and v (N, 3): what ``step`` did with fancy indexing, the same
    arithmetic in one call (five numpy indexings cost more than a 12-point frame's solve)."""
    for k in range(pinned.shape[0]):
        p = pinned[k]
        for c in range(3):
            velocity[k, c] = (targets[k, c] - x[p, c]) / dt
            v[p, c] = velocity[k, c]


@kernel
def pin_finish(x, v, pinned, targets, velocity):
    """The pinned particles exactly on their targets with the frame's velocity."""
    for k in range(pinned.shape[0]):
        p = pinned[k]
        for c in range(3):
            x[p, c] = targets[k, c]
            v[p, c] = velocity[k, c]
