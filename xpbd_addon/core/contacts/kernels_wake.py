"""numba kernels of waking: which ropes ready to sleep a frame's contacts keep awake at its
start (``core.sleep``; ``contacts.frame.FrameContacts.fall_asleep``): those within reach of
a moving rope (``wake_near_moving_ropes``) and those with a collider candidate that moves in
the frame (``wake_near_moving``)."""

from __future__ import annotations

import math

import numpy as np

from ..jit import kernel


@kernel
def wake_near_moving_ropes(x, v, speed, particle_rope, radius, moving, awake, fall, dt):
    """Wake (flag in ``awake`` (R,)) every rope not yet awake whose box at the frame's start
    comes within reach of a moving rope's (flagged in ``moving`` (R,); the particles outside
    the lanes always move). A moving rope's box (x (N, 3) [m]) grows by what it can move in
    the frame, 2 (|v| + its last frame's ``speed`` (N,) [m/s]) dt + ``fall`` [m] (what the
    accelerations add), and both by their largest ``radius`` (N,) [m]. A function of the
    frame's start state only (not of the contacts' candidates, which a frame may carry from
    the last or find afresh): a frame computed from a cached state equals the frame played in
    order. Returns how many woke."""
    count = awake.shape[0]
    lo = np.full((count + 1, 3), np.inf)
    hi = np.full((count + 1, 3), -np.inf)
    grow = np.zeros(count + 1)
    for i in range(x.shape[0]):
        rope = particle_rope[i]
        k = count if rope < 0 else rope
        for c in range(3):
            lo[k, c] = min(lo[k, c], x[i, c])
            hi[k, c] = max(hi[k, c], x[i, c])
        reach = radius[i]
        if k == count or moving[k] != 0:
            reach += 2.0 * (math.sqrt(v[i, 0] ** 2 + v[i, 1] ** 2 + v[i, 2] ** 2)
                            + speed[i]) * dt + fall
        grow[k] = max(grow[k], reach)
    woke = 0
    for m in range(count + 1):
        if m < count and moving[m] == 0 or lo[m, 0] > hi[m, 0]:
            continue  # (still, or no particle)
        for r in range(count):
            if awake[r] != 0 or lo[r, 0] > hi[r, 0]:
                continue
            gap = grow[m] + grow[r]
            if (lo[r, 0] <= hi[m, 0] + gap and lo[m, 0] <= hi[r, 0] + gap
                    and lo[r, 1] <= hi[m, 1] + gap and lo[m, 1] <= hi[r, 1] + gap
                    and lo[r, 2] <= hi[m, 2] + gap and lo[m, 2] <= hi[r, 2] + gap):
                awake[r] = 1
                woke += 1
    return woke


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
    """The rows of ``pairs`` (K, 2) with a segment end awake (``flags`` (N,)), in order: a
    pair of an awake and a sleeping rope (found within a frame) is a contact with a static
    body."""
    keep = np.zeros(pairs.shape[0], dtype=np.uint8)
    count = 0
    for k in range(pairs.shape[0]):
        e, f = pairs[k, 0], pairs[k, 1]
        if (flags[edges[e, 0]] != 0 or flags[edges[e, 1]] != 0 or flags[edges[f, 0]] != 0
                or flags[edges[f, 1]] != 0):
            keep[k] = 1
            count += 1
    kept = np.empty((count, 2), dtype=np.int64)
    row = 0
    for k in range(pairs.shape[0]):
        if keep[k] != 0:
            kept[row, 0] = pairs[k, 0]
            kept[row, 1] = pairs[k, 1]
            row += 1
    return kept
