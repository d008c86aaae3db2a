"""numba kernels of waking: which ropes ready to sleep a frame's contacts keep awake at its
start (``core.sleep``; ``contacts.frame.FrameContacts.fall_asleep``): those within reach of
a moving rope (``wake_near_moving_ropes``) and those with a collider candidate that moves in
the frame (``wake_near_moving``)."""

from __future__ import annotations

import numpy as np

from ..jit import kernel

CHUNK = 8
"""Particles per box of ``wake_near_moving_ropes``' fine test"""

SWEEP = 1.5
"""A moving particle's box reaches along its velocity this many times v dt"""

SLACK = 0.25
"""and this many times its rope's last frame's move in every direction (its path may bend)"""


@kernel
def wake_near_moving_ropes(x, v, speed, particle_rope, radius, moving, whole, awake, fall, dt,
                           wake):
    """Wake (flag in ``awake`` (R,)) every rope not yet awake that comes within reach of the
    moving part of a moving rope at the frame's start: boxes round runs of ``CHUNK``
    particles of one rope (x (N, 3) [m]) overlap, a moving one's reaching where it can get
    in the frame (to x + ``SWEEP`` v dt, v (N, 3) [m/s], grown by ``SLACK`` times the
    particle's last frame's ``speed`` (N,) [m/s] times dt [s] and ``fall`` [m], what the
    accelerations add), both grown by their particles' ``radius`` (N,) [m].

    A particle moves if it is outside the lanes, if its rope is flagged in ``whole`` (R,)
    (a pin or a collider moves it: all of it moves), or if its rope is flagged in ``moving``
    (R,) and it moved faster than ``wake`` [m/s] itself in the last frame: a run that holds
    no moving particle wakes nothing. So a rope whose end slides off the last rope of a pile
    wakes the ropes near that end, not every rope it lies on (its resting part presses on
    them as it did while they slept). Boxes round whole ropes first rule pairs of ropes
    out. A function of the frame's start state only (not of the contacts' candidates, which
    a frame may carry from the last or find afresh): a frame computed from a cached state
    equals the frame played in order. Returns how many woke."""
    count = awake.shape[0]
    n = x.shape[0]
    # the runs of particles: a new one where the rope changes or CHUNK are full
    chunk_of = np.empty(n, dtype=np.int64)
    chunks = 0
    length = 0
    for i in range(n):
        if i == 0 or particle_rope[i] != particle_rope[i - 1] or length == CHUNK:
            chunks += 1
            length = 0
        chunk_of[i] = chunks - 1
        length += 1
    lo = np.full((chunks + count + 1, 3), np.inf)  # chunks, then ropes (last: outside)
    hi = np.full((chunks + count + 1, 3), -np.inf)
    grow = np.zeros(chunks + count + 1)
    owner = np.empty(chunks, dtype=np.int64)
    chunk_moves = np.zeros(chunks, dtype=np.uint8)
    for i in range(n):
        rope = particle_rope[i]
        k = count if rope < 0 else rope
        c = chunk_of[i]
        owner[c] = k
        reach = radius[i]
        sweep = 0.0
        if k == count or whole[k] != 0 or (moving[k] != 0 and speed[i] > wake):
            # where it can get to in the frame
            reach += SLACK * speed[i] * dt + fall
            sweep = SWEEP * dt
            chunk_moves[c] = 1
        for box in (c, chunks + k):
            for d in range(3):
                lo[box, d] = min(lo[box, d], x[i, d], x[i, d] + sweep * v[i, d])
                hi[box, d] = max(hi[box, d], x[i, d], x[i, d] + sweep * v[i, d])
            grow[box] = max(grow[box], reach)
    # each rope's runs, in order (a counting sort by owner)
    start = np.zeros(count + 2, dtype=np.int64)
    for c in range(chunks):
        start[owner[c] + 1] += 1
    for k in range(count + 1):
        start[k + 1] += start[k]
    fill = start.copy()
    runs = np.empty(chunks, dtype=np.int64)
    for c in range(chunks):
        runs[fill[owner[c]]] = c
        fill[owner[c]] += 1
    woke = 0
    for m in range(count + 1):
        if m < count and moving[m] == 0 and whole[m] == 0 or start[m] == start[m + 1]:
            continue  # (still, or no particle)
        for r in range(count):
            if awake[r] != 0 or start[r] == start[r + 1]:
                continue
            if not _boxes_meet(lo, hi, grow, chunks + m, chunks + r):
                continue
            for a in range(start[m], start[m + 1]):
                if chunk_moves[runs[a]] == 0:
                    continue
                found = False
                for b in range(start[r], start[r + 1]):
                    if _boxes_meet(lo, hi, grow, runs[a], runs[b]):
                        found = True
                        break
                if found:
                    awake[r] = 1
                    woke += 1
                    break
    return woke


@kernel
def _boxes_meet(lo, hi, grow, a, b):
    """Whether boxes a and b of (lo, hi) (K, 3) [m], grown by grow[a] + grow[b] [m], meet."""
    gap = grow[a] + grow[b]
    return (lo[b, 0] <= hi[a, 0] + gap and lo[a, 0] <= hi[b, 0] + gap
            and lo[b, 1] <= hi[a, 1] + gap and lo[a, 1] <= hi[b, 1] + gap
            and lo[b, 2] <= hi[a, 2] + gap and lo[a, 2] <= hi[b, 2] + gap)


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
