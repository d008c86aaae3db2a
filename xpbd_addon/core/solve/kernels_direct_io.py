"""One substep of the direct chain solve with the copies between x, v and the lane buffer.

With contacts the rope's solve runs one substep per call, and the contacts act on the
(N, 3) arrays: each substep copies the particles the contacts moved into the lane buffer,
solves, and copies every particle back out. Done as three passes, each streams the whole
buffer (1.6 MB for 10k particles, more than a core's L2); here the three run block by block
(16 ropes: ~230 kB), so a block's buffer is copied in, solved and copied out while it is
still in the cache. Each particle gets exactly the arithmetic of the three passes: the same
bits.
"""

from __future__ import annotations

from ..jit import inline_kernel, kernel, optional_item
from ..layout.topology import PARTICLE_V, PARTICLE_X
from .kernels_direct import direct_block


@kernel
def direct_substep_io(buffer, edge_buffer, blocks, gravity, h, newton_iterations, strain_limit,
                      velocity_scale, lane_order, x, v, moved, every, awake, holds, fresh):
    """One substep of the direct solve (``kernels_direct._direct_blocks``), each block's
    particles first copied in from x, v (N, 3) [m], [m/s] (those flagged in ``moved`` (N,), or
    ``every`` one) and afterwards copied back out. ``blocks``, ``lane_order``: the lane
    layout's blocks and its particles in buffer order (``groups``). Ropes asleep
    (``kernels_sleep``) keep x, v: ``awake`` is (block flags (B,), particle flags (N,)); only
    the particles flagged are copied out, and the blocks not flagged are not solved. ``fresh`` (a
    frame's first substep): the solve first estimates the ropes' tension from x, v
    (``kernels_chain``), else it starts from the tension field as it is (the last substep's,
    or ``kernels_frame.put_tension``'s). ``holds``: as ``kernels_direct.direct_block``'s."""
    _substep_io(buffer, edge_buffer, blocks, gravity, h, newton_iterations, strain_limit,
                velocity_scale, 16, lane_order, (x, v), moved, every, awake, holds, fresh)


@kernel
def direct_substep_io_single(buffer, edge_buffer, blocks, gravity, h, newton_iterations,
                             strain_limit, velocity_scale, lane_order, x, v, moved, every,
                             awake, holds, fresh):
    """``direct_substep_io`` for blocks of one rope each (a lane count of 1)."""
    _substep_io(buffer, edge_buffer, blocks, gravity, h, newton_iterations, strain_limit,
                velocity_scale, 1, lane_order, (x, v), moved, every, awake, holds, fresh)


@inline_kernel
def _substep_io(buffer, edge_buffer, blocks, gravity, h, newton_iterations, strain_limit,
                velocity_scale, lanes, lane_order, state, moved, every, awake_flags, holds,
                fresh):
    """The body of both entry points; ``lanes`` a constant there (LLVM then vectorises the
    solve over the lanes, as ``kernels_direct._direct_blocks`` with 16: a runtime lane count made
    the frame 15 % slower). Inlined: compiled on its own, numba's LLVM step optimises and
    generates the whole solve below it once more for each level of calls (docs/benchmarks.md,
    first use)."""
    (block_particle_offset, block_edge_offset, block_length, block_leading,
     block_bending) = blocks
    lane_base, lane_particles, block_start = lane_order
    x, v = state  # (N, 3) [m], [m/s]
    awake_blocks, awake = awake_flags
    for b in range(block_length.shape[0]):
        first, last = block_start[b], block_start[b + 1]
        for k in range(first, last):
            i = lane_particles[k]
            if every or moved[i]:
                base = lane_base[k]
                for c in range(3):
                    buffer[base + (PARTICLE_X + c) * lanes] = x[i, c]
                    buffer[base + (PARTICLE_V + c) * lanes] = v[i, c]
        if awake_blocks[b] == 0:
            continue  # asleep (``kernels_sleep``): its ropes keep x, v
        direct_block(buffer, edge_buffer,
                      (block_particle_offset[b], block_edge_offset[b], block_length[b]),
                      optional_item(block_leading, b),
                      optional_item(block_bending, b),
                      (gravity[0], gravity[1], gravity[2]), h, 1, fresh, None, holds,
                      newton_iterations, strain_limit, velocity_scale, lanes)
        for k in range(first, last):
            i = lane_particles[k]
            if awake[i] == 0:
                continue
            base = lane_base[k]
            for c in range(3):
                x[i, c] = buffer[base + (PARTICLE_X + c) * lanes]
                v[i, c] = buffer[base + (PARTICLE_V + c) * lanes]


@kernel
def gather_moved(buffer, particle_base, particles, moved, x, v, lanes):
    """Copy x, v of the lane particles ``particles`` (K,) (buffer index of field 0:
    ``particle_base`` (K,)) flagged in ``moved`` into the lane buffer: after contacts only
    the particles they moved need to go back. In buffer order (``lane_order``), the copy
    streams through the buffer (a third faster than in particle order)."""
    for k in range(particles.shape[0]):
        i = particles[k]
        if moved[i]:
            base = particle_base[k]
            for c in range(3):
                buffer[base + (PARTICLE_X + c) * lanes] = x[i, c]
                buffer[base + (PARTICLE_V + c) * lanes] = v[i, c]


@kernel
def put_rows(buffer, particle_base, particles, values, field, lanes):
    """Write ``values`` (N, 3) of the lane particles ``particles`` (K,) (buffer index of field
    0: ``particle_base`` (K,)) into the lane buffer's three rows from ``field``
    (``topology``'s particle fields, e.g. ``PARTICLE_ACCELERATION``): the numpy scatter
    cost 0.3 ms at 10,000 particles, every substep of a frame with air."""
    for k in range(particles.shape[0]):
        i = particles[k]
        base = particle_base[k]
        for c in range(3):
            buffer[base + (field + c) * lanes] = values[i, c]
