"""numba kernels of sleeping: ropes at rest skip whole frames (``core.sleep``).

At a frame's start the ropes quiet for long enough may sleep (``ready_ropes``), but those
whose pins move (``wake_pinned``) and those the contacts link to awake ropes
(``contacts.kernels_wake``); the sleeping ones stop (``stop``: v = 0) and are not solved (a
block of 16 ropes is solved while one of them is awake, its sleeping ropes' lanes are not
copied out: ``lane_scatter_awake``, ``kernels_direct_io``; a block asleep as a whole is not
solved). At its end every awake rope is measured (``measure_still``).
"""

from __future__ import annotations

import numpy as np
from numba import prange

from ..jit import kernel, optional_item, parallel_kernel
from ..layout.topology import PARTICLE_V, PARTICLE_X
from .kernels_direct import direct_block


@kernel
def ready_ropes(still, time, speed, wake, particle_rope, awake, moving):
    """Flags in ``awake`` (R,) the ropes with a particle quiet for less than ``time`` [s]
    (``still`` (N,) [s], ``sleep.Rest``), and in ``moving`` (R,) those whose last frame's
    speed (``speed`` (N,) [m/s]) was above ``wake`` [m/s] (they wake sleeping ropes they
    touch); clears the others. ``particle_rope`` (N,): each particle's rope, -1 outside the
    lanes (never asleep). Returns how many ropes may sleep."""
    awake[:] = 0
    moving[:] = 0
    for i in range(still.shape[0]):
        rope = particle_rope[i]
        if rope < 0:
            continue
        if not still[i] >= time:  # (NaN wakes)
            awake[rope] = 1
        if not speed[i] <= wake:
            moving[rope] = 1
    ready = 0
    for rope in range(awake.shape[0]):
        ready += 1 if awake[rope] == 0 else 0
    return ready


@kernel
def wake_pinned(pinned, x, targets, particle_rope, awake, moving):
    """Flags in ``awake`` and ``moving`` (R,) the ropes with a pinned particle (``pinned``
    (P,)) whose target this frame (``targets`` (P, 3) [m]) is not where it is (x (N, 3)
    [m]): a pin that moves wakes its rope, and what it touches. Returns how many of the
    ropes ready to sleep woke."""
    woke = 0
    for k in range(pinned.shape[0]):
        i = pinned[k]
        rope = particle_rope[i]
        if rope < 0:
            continue
        if x[i, 0] != targets[k, 0] or x[i, 1] != targets[k, 1] or x[i, 2] != targets[k, 2]:
            woke += 1 if awake[rope] == 0 else 0
            awake[rope] = 1
            moving[rope] = 1
    return woke


@kernel
def stop(v, particle_rope, awake):
    """The velocities v (N, 3) [m/s] of the particles of sleeping ropes (not flagged in
    ``awake`` (R,)) set to 0: a rope asleep is at rest."""
    for i in range(v.shape[0]):
        rope = particle_rope[i]
        if rope >= 0 and awake[rope] == 0:
            v[i, 0] = 0.0
            v[i, 1] = 0.0
            v[i, 2] = 0.0


@kernel
def measure_still(x, x_start, limit, still_limit, still_weight, dt, particle_rope, awake, still,
                  still_out, speed_out, asleep_out):
    """The frame's measure: an awake rope (flagged in ``awake`` (R,)) whose every particle
    ends within ``limit`` [m] (``sleep_speed`` x dt) of where it started (x, x_start (N, 3)
    [m]) was quiet: its quiet time grows by ``dt`` [s] (``still_weight`` x dt within
    ``still_limit`` [m]: still), else it starts again from 0.
    Sleeping ropes keep theirs. From ``still`` (N,) [s] into ``still_out`` (N,); each
    particle's own speed over the frame (its move / dt [m/s], 0 asleep) into ``speed_out``
    (N,): where a rope moves, not only whether (``contacts.kernels_wake``); each particle's
    rope asleep (1) or not (0) into ``asleep_out`` (N,) uint8."""
    largest = np.zeros(awake.shape[0])
    for i in range(x.shape[0]):
        rope = particle_rope[i]
        if rope < 0 or awake[rope] == 0 or largest[rope] != largest[rope]:
            continue  # (a NaN stays: it moves)
        d2 = ((x[i, 0] - x_start[i, 0]) ** 2 + (x[i, 1] - x_start[i, 1]) ** 2
              + (x[i, 2] - x_start[i, 2]) ** 2)
        if not d2 <= largest[rope]:
            largest[rope] = d2
    limit2 = limit * limit
    still2 = still_limit * still_limit
    for i in range(x.shape[0]):
        rope = particle_rope[i]
        if rope < 0:
            still_out[i] = 0.0
            speed_out[i] = 0.0
            asleep_out[i] = 0
        elif awake[rope] == 0:
            still_out[i] = still[i]
            speed_out[i] = 0.0
            asleep_out[i] = 1
        else:
            if largest[rope] <= still2:
                still_out[i] = still[i] + still_weight * dt
            elif largest[rope] <= limit2:
                still_out[i] = still[i] + dt
            else:
                still_out[i] = 0.0
            speed_out[i] = np.sqrt((x[i, 0] - x_start[i, 0]) ** 2 + (x[i, 1] - x_start[i, 1]) ** 2
                                   + (x[i, 2] - x_start[i, 2]) ** 2) / dt
            asleep_out[i] = 0


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
                                  strain_limit, velocity_scale, awake_blocks, holds):
    """One substep of ``kernels_direct.direct_substeps_parallel`` (``fresh``: the frame's
    first) for the blocks flagged in
    ``awake_blocks`` (B,) only: a block whose ropes all sleep is not solved (the one-thread
    ``kernels_direct_io`` entry points skip it the same way). ``holds``: as
    ``kernels_direct.direct_block``'s."""
    for b in prange(block_length.shape[0]):
        if awake_blocks[b] == 0:
            continue
        direct_block(buffer, edge_buffer,
                      (block_particle_offset[b], block_edge_offset[b], block_length[b]),
                      optional_item(block_leading, b),
                      optional_item(block_bending, b),
                      (gravity[0], gravity[1], gravity[2]), h, 1, fresh, None, holds,
                      newton_iterations, strain_limit, velocity_scale, 16)
