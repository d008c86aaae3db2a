"""numba kernels of sleeping: ropes at rest skip the rest of a frame.

A frame with contacts runs its first substep for every rope. A rope whose every particle
moved at most ``limit`` [m] in that substep (``sleep_speed`` x h) and ends it no faster than
``sleep_speed`` [m/s] is still: its forces balance (gravity, the contacts' push and friction,
its tension), so the other substeps would move it by as little again. It sleeps for the rest
of the frame: the contacts skip it, its particles are not copied out of the lane buffer
after the solve (a block of 16 ropes is solved while one of them is awake; a block asleep
as a whole is not solved), and it keeps the first substep's x, v. A still rope stays awake
while a rope-rope candidate pair links it to an awake one (``wake_linked``) or a collider
candidate of its particles moves in the frame (``wake_near_moving``), and wakes when the
frame finds such a pair or candidate later.

The decision is a function of the frame's start state alone (x, v and the scene), so a frame
computed from a cached state is the same as one played in order.
"""

from __future__ import annotations

from numba import prange

from ..jit import kernel, optional_item, parallel_kernel
from ..layout.topology import PARTICLE_V, PARTICLE_X
from .kernels_direct import direct_block


@kernel
def still_ropes(x, x_start, v, limit, speed, particle_rope, awake):
    """Flags in ``awake`` (R,) the ropes with a particle farther than ``limit`` [m] from where
    it started the substep (x_start, (N, 3) [m]) or faster than ``speed`` [m/s] (v); clears
    the others. ``particle_rope`` (N,): each particle's rope, -1 outside the lanes (never
    asleep). Returns how many ropes are still."""
    awake[:] = 0
    limit2 = limit * limit
    speed2 = speed * speed
    for i in range(x.shape[0]):
        rope = particle_rope[i]
        if rope < 0 or awake[rope] != 0:
            continue
        d2 = ((x[i, 0] - x_start[i, 0]) ** 2 + (x[i, 1] - x_start[i, 1]) ** 2
              + (x[i, 2] - x_start[i, 2]) ** 2)
        s2 = v[i, 0] ** 2 + v[i, 1] ** 2 + v[i, 2] ** 2
        if not (d2 <= limit2 and s2 <= speed2):  # (NaN wakes)
            awake[rope] = 1
    still = 0
    for rope in range(awake.shape[0]):
        still += 1 if awake[rope] == 0 else 0
    return still


@kernel
def lane_scatter_awake(buffer, particle_base, particles, x, v, lanes, awake):
    """Copy x, v back from the lane buffer for the particles flagged in ``awake`` (N,) only:
    the solve of a block with an awake rope (the threaded direct solve and the Gauss-Seidel lanes
    solve every block) changes its sleeping ropes' lanes too, which must keep x, v. Their
    lanes are copied in again when they wake (``awake_particles`` flags them moved). (The
    same loop as the copy out of ``kernels_direct_io._substep_io``, which keeps it inline:
    there the lane count is a constant of the entry point.)"""
    for k in range(particles.shape[0]):
        i = particles[k]
        if awake[i] == 0:
            continue
        base = particle_base[k]
        for c in range(3):
            x[i, c] = buffer[base + (PARTICLE_X + c) * lanes]
            v[i, c] = buffer[base + (PARTICLE_V + c) * lanes]


@parallel_kernel
def direct_substep_awake_parallel(buffer, edge_buffer, block_particle_offset,
                                  block_edge_offset, block_length, block_leading,
                                  block_bending, gravity, h, fresh, newton_iterations,
                                  strain_limit, velocity_scale, awake_blocks):
    """One substep of ``kernels_direct.direct_substeps_parallel`` (``fresh``: the frame's
    first) for the blocks flagged in
    ``awake_blocks`` (B,) only: a block whose ropes all sleep is not solved (the one-thread
    ``kernels_direct_io`` entry points skip it the same way)."""
    for b in prange(block_length.shape[0]):
        if awake_blocks[b] == 0:
            continue
        direct_block(buffer, edge_buffer, block_particle_offset[b], block_edge_offset[b],
                      block_length[b], optional_item(block_leading, b),
                      optional_item(block_bending, b),
                      (gravity[0], gravity[1], gravity[2]), h, 1, fresh, None, newton_iterations,
                      strain_limit,
                      velocity_scale, 16)
