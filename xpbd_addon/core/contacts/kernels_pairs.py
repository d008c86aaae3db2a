"""numba rope-rope pair query: the segment pairs a search keeps, in a canonical order.

``kernels_segments`` predicts the segments' motion and builds their boxes; this module
queries the grids of those boxes (``segment_pairs``: a full search over every segment, or
a partial one for the segments at strayed particles against the last full search's grid and
the segments searched again since), keeps the pairs that may touch within the horizon
(``_pair_kept``) and returns them in increasing order (``_in_order``), so that the contacts
give the same bits for any pair list holding the pairs within reach.
"""

from __future__ import annotations

import math

import numpy as np

from ..jit import kernel
from .kernels_arrays import heapsort
from .kernels_broadphase import build_grid, cell_hash, cell_span
from .kernels_geometry import closest_on_segments


@kernel
def _pair_kept(e, f, edges, edge_chain, edge_arc, segment_reach, segment_skip, bound,
               position, velocity, acceleration, horizon):
    """Whether segments e and f may touch within ``horizon`` [s]: they share no particle, lie
    farther apart along a rope than the sum of their skip radii, and their distance at
    ``position`` is within their reaches (radius + slack) plus the most their ends can
    approach each other: |v_i - v_j| T + |a_i - a_j| T^2 / 2, the largest over the four pairs
    of ends (every point of a segment moves as a blend of its ends). ``bound`` (M,) of
    ``segment_bounds`` rules most pairs out first."""
    a0, a1 = edges[e, 0], edges[e, 1]
    b0, b1 = edges[f, 0], edges[f, 1]
    if a0 == b0 or a0 == b1 or a1 == b0 or a1 == b1:
        return False
    if edge_chain[e] >= 0 and edge_chain[e] == edge_chain[f]:
        gap = max(edge_arc[f, 0] - edge_arc[e, 1], edge_arc[e, 0] - edge_arc[f, 1])
        if gap <= segment_skip[e] + segment_skip[f]:
            return False
    mid2 = 0.0
    for c in range(3):
        mid2 += 0.25 * (position[a0, c] + position[a1, c] - position[b0, c]
                        - position[b1, c]) ** 2
    if mid2 > (bound[e] + bound[f]) ** 2:
        return False
    approach = 0.0
    half_square = 0.5 * horizon * horizon
    if horizon > 0.0:
        for i in (a0, a1):
            for j in (b0, b1):
                dv2 = 0.0
                da2 = 0.0
                for c in range(3):
                    dv2 += (velocity[i, c] - velocity[j, c]) ** 2
                    da2 += (acceleration[i, c] - acceleration[j, c]) ** 2
                approach = max(approach, math.sqrt(dv2) * horizon
                               + math.sqrt(da2) * half_square)
    limit = segment_reach[e] + segment_reach[f] + approach
    u, t = closest_on_segments(position, a0, a1, b0, b1)
    d2 = 0.0
    for c in range(3):
        d = ((position[a0, c] + u * (position[a1, c] - position[a0, c]))
             - (position[b0, c] + t * (position[b1, c] - position[b0, c])))
        d2 += d * d
    return d2 <= limit * limit


@kernel
def predict_ends(e, edges, x0, v0, a0, since, now, stamp, mark, position, velocity):
    """The prediction at ``now`` [s] of segment e's ends into position, velocity (N, 3), as
    ``kernels_segments.predicted_now`` computes it, unless already done in this search
    (``stamp`` (N,) == ``mark``): a partial search predicts only the particles it tests."""
    for end in range(2):
        i = edges[e, end]
        if stamp[i] != mark:
            stamp[i] = mark
            t = now - since[i]
            for c in range(3):
                position[i, c] = x0[i, c] + v0[i, c] * t + 0.5 * a0[i, c] * t * t
                velocity[i, c] = v0[i, c] + a0[i, c] * t


@kernel
def _stored(pairs, count, e, f):
    """``pairs`` (K, 2) with the pair (min, max) of e, f in row ``count``, grown to twice its
    length first if full (a kept pair is rare: the call costs nothing in the scan)."""
    if count == pairs.shape[0]:
        grown = np.empty((2 * pairs.shape[0], 2), dtype=np.int64)
        for k in range(count):  # (a loop: see kernels_arrays)
            grown[k, 0] = pairs[k, 0]
            grown[k, 1] = pairs[k, 1]
        pairs = grown
    pairs[count, 0] = min(e, f)
    pairs[count, 1] = max(e, f)
    return pairs


@kernel
def _extra_pairs(pairs, count, e, index, query_boxes, extra_boxes, current, rope_segments,
                 bound, pair_motion, lazy_prediction):
    """``segment_pairs``' brute-force part for query segment e (row ``index``): its pairs
    with the segments ``extra`` searched again since the last full search. Returns the
    grown (pairs, count). Its own function, called once per query segment: inlined, this
    loop made the grid scan of a full search 1.7x slower; a call per test (the box test as
    a helper with array arguments, which numba does not inline) cost 40 ns a test."""
    query, query_lo, query_hi = query_boxes
    extra, extra_lo, extra_hi = extra_boxes
    edges, edge_chain, edge_arc, segment_reach, segment_skip = rope_segments
    position, velocity, acceleration, horizon = pair_motion
    (lazy, predicted_x0, predicted_v0, predicted_since, stamp, now,
     stamp_mark) = lazy_prediction
    for other in range(extra.shape[0]):
        f = extra[other]
        if f == e or (current[f] != 0 and f < e):
            continue  # a pair within the query is found from its lower segment
        if not (query_lo[index, 0] <= extra_hi[f, 0] and extra_lo[f, 0] <= query_hi[index, 0]
                and query_lo[index, 1] <= extra_hi[f, 1] and extra_lo[f, 1] <= query_hi[index, 1]
                and query_lo[index, 2] <= extra_hi[f, 2]
                and extra_lo[f, 2] <= query_hi[index, 2]):
            continue
        if lazy:  # a partial search predicts the particles it tests, when it tests them
            predict_ends(f, edges, predicted_x0, predicted_v0, acceleration, predicted_since,
                         now, stamp, stamp_mark, position, velocity)
        if _pair_kept(e, f, edges, edge_chain, edge_arc, segment_reach, segment_skip, bound,
                      position, velocity, acceleration, horizon):
            pairs = _stored(pairs, count, e, f)
            count += 1
    return pairs, count


@kernel
def _extra_grid_pairs(pairs, count, e, index, query_boxes, extra_boxes, extra_grid,
                      inverse_cell, max_cells, marker, tag, current, rope_segments, bound,
                      pair_motion, lazy_prediction):
    """``_extra_pairs`` through a grid of the ``extra`` segments' boxes (x_start ... x_mask
    of ``build_grid``, ids into ``extra``) instead of by brute force: the same pairs, in
    time that grows with the boxes near the query, not with all of them. Called once per
    query segment (see ``_extra_pairs``)."""
    query, query_lo, query_hi = query_boxes
    extra, extra_lo, extra_hi = extra_boxes
    x_start, x_ids, x_oversize, x_mask = extra_grid
    edges, edge_chain, edge_arc, segment_reach, segment_skip = rope_segments
    position, velocity, acceleration, horizon = pair_motion
    (lazy, predicted_x0, predicted_v0, predicted_since, stamp, now,
     stamp_mark) = lazy_prediction
    i0, j0, k0, i1, j1, k1, cells = cell_span(query_lo[index], query_hi[index], inverse_cell)
    n = extra.shape[0]
    brute = cells > max_cells
    scan = n if brute else np.int64(cells)
    for s in range(scan + x_oversize.shape[0]):
        if s >= scan:
            first, last = s - scan, s - scan + 1
        elif brute:
            first, last = s, s + 1
        else:
            dj = k1 - k0 + 1
            di = (j1 - j0 + 1) * dj
            key = cell_hash(i0 + s // di, j0 + (s % di) // dj, k0 + s % dj, x_mask)
            first, last = x_start[key], x_start[key + 1]
        for entry in range(first, last):
            if s >= scan:
                f = extra[x_oversize[entry]]
            elif brute:
                f = extra[entry]
            else:
                f = extra[x_ids[entry]]
            if f == e or (current[f] != 0 and f < e) or marker[f] == tag:
                continue  # a pair within the query is found from its lower segment
            marker[f] = tag
            if not (query_lo[index, 0] <= extra_hi[f, 0] and extra_lo[f, 0] <= query_hi[index, 0]
                    and query_lo[index, 1] <= extra_hi[f, 1]
                    and extra_lo[f, 1] <= query_hi[index, 1]
                    and query_lo[index, 2] <= extra_hi[f, 2]
                    and extra_lo[f, 2] <= query_hi[index, 2]):
                continue
            if lazy:  # a partial search predicts the particles it tests, when it tests them
                predict_ends(f, edges, predicted_x0, predicted_v0, acceleration, predicted_since,
                             now, stamp, stamp_mark, position, velocity)
            if _pair_kept(e, f, edges, edge_chain, edge_arc, segment_reach, segment_skip, bound,
                          position, velocity, acceleration, horizon):
                pairs = _stored(pairs, count, e, f)
                count += 1
    return pairs, count


@kernel
def segment_pairs(query_boxes, pair_grid, max_cells, full, moved_box, extra_boxes, extra_grid,
                  current, rope_segments, bound, pair_motion, lazy_prediction, marker, mark):
    """Candidate pairs (K, 2), first < second, in increasing order (``_in_order``), of the
    segments ``query`` with boxes (query_lo, query_hi (Q, 3) [m]: ``groups.query_boxes``),
    kept by ``_pair_kept`` at ``position``/``velocity``/``acceleration`` (N, 3) over
    ``horizon`` [s] (``groups.pair_motion``), for the ropes' ``rope_segments``
    (``groups.rope_segments``).

    The ``pair_grid`` (``groups.pair_grid``: boxes lo, hi (M, 3), start, ids, oversize, mask
    of ``build_grid`` with cell [m]) holds every segment's box of the last full search.
    ``full``: the query is every segment with those boxes, each pair found once. Otherwise the
    query is the segments searched again now (flagged in ``current`` (M,)): against the grid's
    segments whose box did not move since (``moved_box`` (M,) 0), and against the segments
    ``extra`` whose box did, with their new boxes (extra_lo, extra_hi (M, 3), by segment id:
    ``groups.extra_boxes``), the query among them: through their own ``extra_grid`` (x_start,
    x_ids, x_oversize, x_mask of ``build_grid``, ids into ``extra``, the same cell), or by
    brute force if x_start is empty.

    ``lazy`` (``groups.lazy_prediction``): position and velocity hold the prediction only
    where ``stamp`` == ``stamp_mark`` (the query's ends); the other ends are predicted
    (``predict_ends``, with a0 = ``acceleration``) when a pair test needs them.

    ``marker`` (M,) int64, kept by the caller with entries below ``mark``: which segments
    the query row k has met (mark + k); the caller then raises mark by Q."""
    query, query_lo, query_hi = query_boxes
    lo, hi, start, ids, oversize, mask, cell = pair_grid
    extra, extra_lo, extra_hi = extra_boxes
    x_start, x_ids, x_oversize, x_mask = extra_grid
    edges, edge_chain, edge_arc, segment_reach, segment_skip = rope_segments
    position, velocity, acceleration, horizon = pair_motion
    (lazy, predicted_x0, predicted_v0, predicted_since, stamp, now,
     stamp_mark) = lazy_prediction
    m = edges.shape[0]
    inverse_cell = 1.0 / cell
    pairs = np.empty((max(2 * query.shape[0], 64), 2), dtype=np.int64)
    count = np.int64(0)  # not a literal 0: see kernels_arrays
    for index in range(query.shape[0]):
        e = query[index]
        tag = mark + index
        # The scan of the grid cells is written out as in ``collider_candidates``, not
        # shared: a helper taking the grid's arrays is not inlined by numba and made the
        # search 2.7-4x slower (measured twice)
        i0, j0, k0, i1, j1, k1, cells = cell_span(query_lo[index], query_hi[index], inverse_cell)
        brute = cells > max_cells
        scan = m if brute else np.int64(cells)
        for s in range(scan + oversize.shape[0]):
            if s >= scan:
                first, last = s - scan, s - scan + 1
            elif brute:
                first, last = s, s + 1
            else:
                dj = k1 - k0 + 1
                di = (j1 - j0 + 1) * dj
                key = cell_hash(i0 + s // di, j0 + (s % di) // dj, k0 + s % dj, mask)
                first, last = start[key], start[key + 1]
            for entry in range(first, last):
                if s >= scan:
                    f = oversize[entry]
                elif brute:
                    f = entry
                else:
                    f = ids[entry]
                if (f <= e if full else moved_box[f] != 0) or marker[f] == tag:
                    continue
                marker[f] = tag
                # the box and rope-gap tests inline: a call per entry costs more than them
                if not (query_lo[index, 0] <= hi[f, 0] and lo[f, 0] <= query_hi[index, 0]
                        and query_lo[index, 1] <= hi[f, 1] and lo[f, 1] <= query_hi[index, 1]
                        and query_lo[index, 2] <= hi[f, 2] and lo[f, 2] <= query_hi[index, 2]):
                    continue
                if edge_chain[e] >= 0 and edge_chain[e] == edge_chain[f] and max(
                        edge_arc[f, 0] - edge_arc[e, 1], edge_arc[e, 0] - edge_arc[f, 1]) <= (
                        segment_skip[e] + segment_skip[f]):
                    continue
                if lazy:  # a partial search predicts the particles it tests, when it tests them
                    predict_ends(f, edges, predicted_x0, predicted_v0, acceleration,
                                 predicted_since, now, stamp, stamp_mark, position, velocity)
                if _pair_kept(e, f, edges, edge_chain, edge_arc, segment_reach, segment_skip,
                              bound, position, velocity, acceleration, horizon):
                    pairs = _stored(pairs, count, e, f)
                    count += 1
        if extra.shape[0] and x_start.shape[0]:
            pairs, count = _extra_grid_pairs(
                pairs, count, e, index, query_boxes, extra_boxes, extra_grid, inverse_cell,
                max_cells, marker, tag, current, rope_segments, bound, pair_motion,
                lazy_prediction)
        elif extra.shape[0]:
            pairs, count = _extra_pairs(pairs, count, e, index, query_boxes, extra_boxes,
                                        current, rope_segments, bound, pair_motion,
                                        lazy_prediction)
    return _in_order(pairs[:count], full, m)


@kernel
def _in_order(pairs, full, m):
    """The pairs in increasing (first, second) order, a copy: the contacts then give the
    same bits for any pair list that holds the pairs within reach, fresh or kept. A full
    search finds them in runs of one first segment, increasing: each run is sorted (short,
    by insertion); a partial search's few are sorted outright."""
    count = pairs.shape[0]
    if not full:
        keys = np.empty(count, dtype=np.int64)
        for k in range(count):
            keys[k] = pairs[k, 0] * m + pairs[k, 1]
        heapsort(keys)
        ordered = np.empty((count, 2), dtype=np.int64)
        for k in range(count):
            ordered[k, 0] = keys[k] // m
            ordered[k, 1] = keys[k] % m
        return ordered
    ordered = pairs.copy()
    first = 0
    while first < count:
        last = first + 1
        while last < count and ordered[last, 0] == ordered[first, 0]:
            last += 1
        for k in range(first + 1, last):
            f = ordered[k, 1]
            j = k - 1
            while j >= first and ordered[j, 1] > f:
                ordered[j + 1, 1] = ordered[j, 1]
                j -= 1
            ordered[j + 1, 1] = f
        first = last
    return ordered


@kernel
def segment_grid(lo, hi, cell, max_cells):
    """``build_grid`` of the segment boxes with cell [m]."""
    return build_grid(lo, hi, 1.0 / cell, max_cells)
