"""numba kernels of waking: which ropes ready to sleep a frame's contacts keep awake at its
start (``core.sleep``; ``contacts.frame.FrameContacts.fall_asleep``): those a rope-rope
candidate pair links to an awake one (``wake_linked``) and those with a collider candidate
that moves in the frame (``wake_near_moving``)."""

from __future__ import annotations

import numpy as np

from ..jit import kernel


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
