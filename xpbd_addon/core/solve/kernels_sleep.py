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

import numpy as np
from numba import prange

from ..jit import kernel, optional_item, parallel_kernel
from ..layout.topology import PARTICLE_V, PARTICLE_X
from .kernels_direct import _direct_block


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
def wake_linked(pairs, edges, particle_rope, awake):
    """Wake (flag in ``awake`` (R,)) every rope linked to an awake one by a candidate pair of
    segments (``pairs`` (K, 2), ``edges`` (M, 2)), through any chain of pairs: their contacts
    could move it. A particle outside the lanes (rope -1) is always awake. Returns how many
    ropes woke. One pass over the pairs joins the ropes they link (union-find), so the cost
    stays O(K) however long the chains of pairs."""
    count = awake.shape[0]
    parent = np.arange(count)
    hot = awake.copy()  # at each root: whether its group holds an awake rope
    for k in range(pairs.shape[0]):
        first = -1
        outside = False
        for side in range(2):
            for end in range(2):
                rope = particle_rope[edges[pairs[k, side], end]]
                if rope < 0:
                    outside = True
                    continue
                root = _root(parent, rope)
                if first < 0:
                    first = root
                elif root != first:
                    parent[root] = first
                    if hot[root] != 0:
                        hot[first] = 1
        if outside and first >= 0:
            hot[first] = 1
    woke = 0
    for rope in range(count):
        if awake[rope] == 0 and hot[_root(parent, rope)] != 0:
            awake[rope] = 1
            woke += 1
    return woke


@kernel
def links_asleep_to_awake(pairs, edges, particle_rope, awake):
    """Whether some pair of ``pairs`` (K, 2) has a segment end on a rope asleep and one on
    a rope awake (or outside the lanes): only then can new pairs wake anything."""
    for k in range(pairs.shape[0]):
        any_awake = False
        any_asleep = False
        for side in range(2):
            for end in range(2):
                rope = particle_rope[edges[pairs[k, side], end]]
                if rope < 0 or awake[rope] != 0:
                    any_awake = True
                else:
                    any_asleep = True
        if any_awake and any_asleep:
            return True
    return False


@kernel
def _root(parent, i):
    """The root of i's group in the union-find forest ``parent``, halving the path."""
    while parent[i] != i:
        parent[i] = parent[parent[i]]
        i = parent[i]
    return i


@kernel
def wake_near_moving(spans, candidates, triangle_moves, particle_rope, awake):
    """Wake (flag in ``awake`` (R,)) every rope with a particle whose collider candidates
    (candidates[spans[i, 0]:spans[i, 1]]) hold a triangle that moves in this frame
    (``triangle_moves`` (T,)): the candidates hold every triangle that can come within reach
    of the particle's path over the frame, moving ones included. Returns how many woke."""
    woke = 0
    for i in range(particle_rope.shape[0]):
        rope = particle_rope[i]
        if rope < 0 or awake[rope] != 0:
            continue
        for k in range(spans[i, 0], spans[i, 1]):
            if triangle_moves[candidates[k]] != 0:
                awake[rope] = 1
                woke += 1
                break
    return woke


@kernel
def awake_particles(particle_rope, awake, rope_block, flags, moved, awake_blocks):
    """From the ropes' ``awake`` (R,): the particles' ``flags`` (N,) (1 awake, also outside
    the lanes), ``moved`` (N,) set for those that woke (their lane buffer is stale: the
    solve copies them in) and ``awake_blocks`` (B,), the blocks holding an awake rope
    (``rope_block`` (R,)). Returns how many particles are awake."""
    awake_blocks[:] = 0
    for rope in range(awake.shape[0]):
        if awake[rope] != 0:
            awake_blocks[rope_block[rope]] = 1
    count = 0
    for i in range(particle_rope.shape[0]):
        rope = particle_rope[i]
        on = rope < 0 or awake[rope] != 0
        if on and flags[i] == 0:
            moved[i] = 1
        flags[i] = 1 if on else 0
        count += 1 if on else 0
    return count
@kernel
def awake_pairs(pairs, edges, flags):
    """The rows of ``pairs`` (K, 2) whose segments are awake (``flags`` (N,) of their first
    particle: after ``wake_linked`` a pair is awake or asleep as a whole), in order."""
    keep = 0
    for k in range(pairs.shape[0]):
        if flags[edges[pairs[k, 0], 0]] != 0:
            keep += 1
    kept = np.empty((keep, 2), dtype=np.int64)
    row = 0
    for k in range(pairs.shape[0]):
        if flags[edges[pairs[k, 0], 0]] != 0:
            kept[row, 0] = pairs[k, 0]
            kept[row, 1] = pairs[k, 1]
            row += 1
    return kept


@kernel
def lane_scatter_awake(buffer, particle_base, particles, x, v, lanes, awake):
    """``kernels.lane_scatter`` for the particles flagged in ``awake`` (N,) only: the solve
    of a block with an awake rope (the threaded direct solve and the Gauss-Seidel lanes
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
        _direct_block(buffer, edge_buffer, block_particle_offset[b], block_edge_offset[b],
                      block_length[b], optional_item(block_leading, b),
                      optional_item(block_bending, b),
                      gravity[0], gravity[1], gravity[2], h, 1, fresh, None, newton_iterations,
                      strain_limit,
                      velocity_scale, 16)
