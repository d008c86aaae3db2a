"""numba broad phase of the rope-rope contacts: which segment pairs to test.

``contacts.FrameContacts`` predicts every particle's motion (it keeps its velocity v and an
acceleration a; pinned particles move linearly) and asks for the segment pairs whose
predicted paths come within their radii plus a slack over a horizon. The segments' boxes
(now and at the horizon, in a frame moving with the shared motion, so a falling heap keeps
small boxes) go into the hashed grid of ``kernels_broadphase``; each pair of overlapping
boxes is kept if its distance now is within reach of what its ends can approach each other.
After every substep ``left_prediction`` finds the particles farther than their slack from
their prediction; they get a new prediction, and only the segments at them are searched
again (``segment_pairs`` with ``full`` off: against the grid of the last full search, and
the segments searched again since by brute force), unless they are many. Everything runs
in a fixed order on one thread: same input, same pairs.
"""

from __future__ import annotations

import math

import numpy as np

from .jit import kernel
from .kernels_broadphase import _hash, _span, build_grid
from .kernels_geometry import closest_on_segments


@kernel
def _heapsort(a):
    """Sort the 1-D array a in place, ascending. Written out: numba's own median, percentile
    and argsort cost seconds of compile time each, this a fraction of one."""
    n = a.shape[0]
    for start in range(n // 2 - 1, -1, -1):
        _sift(a, start, n)
    for end in range(n - 1, 0, -1):
        a[0], a[end] = a[end], a[0]
        _sift(a, 0, end)


@kernel
def _sift(a, root, end):
    while True:
        child = 2 * root + 1
        if child >= end:
            return
        if child + 1 < end and a[child] < a[child + 1]:
            child += 1
        if not a[root] < a[child]:
            return
        a[root], a[child] = a[child], a[root]
        root = child


@kernel
def _quantile(values, q):
    """The q-quantile (0..1) of ``values`` (1-D, left as they are), linear between
    neighbours as numpy's percentile and median; 0 for none. Quickselect on a copy (linear
    time; written out for its compile time, as ``_heapsort``)."""
    n = values.shape[0]
    if n == 0:
        return 0.0
    a = values.copy()
    position = q * (n - 1)
    low = int(math.floor(position))
    left, right = 0, n - 1
    while left < right:  # until a[low] holds the low-th smallest, smaller ones before it
        pivot = a[(left + right) // 2]
        i, j = left, right
        while i <= j:
            while a[i] < pivot:
                i += 1
            while pivot < a[j]:
                j -= 1
            if i <= j:
                a[i], a[j] = a[j], a[i]
                i += 1
                j -= 1
        if low <= j:
            right = j
        elif low >= i:
            left = i
        else:
            break
    value = a[low]
    if low + 1 >= n or position == low:
        return value
    above = a[low + 1]
    for k in range(low + 2, n):  # the next order statistic: the least of those above
        above = min(above, a[k])
    return value + (position - low) * (above - value)


@kernel
def _sampled_median(values, column, stride):
    """Median of values[::stride, column] (any common vector keeps the bounds valid: a sample
    is as good as all and much cheaper)."""
    n = (values.shape[0] + stride - 1) // stride
    picked = np.empty(n)
    for k in range(n):
        picked[k] = values[k * stride, column]
    return _quantile(picked, 0.5)


@kernel
def measure_motion(ids, v, v_last, held, free, pin_velocity, h, limit, still, span, velocity,
                   acceleration):
    """The prediction of the particles ``ids`` (K,) from the substep under way, into
    ``velocity``, ``acceleration`` (N, 3):
    free particles keep v [m/s] (the rope's solve done, the contacts to come) and
    a = (v - v_last) / h [m/s^2] (v_last: the last substep's end), at most ``limit`` long;
    where the last substep's contacts moved the particle (``held``) it keeps v_last, a = 0
    (the contact holds it; v is the pull it is about to undo). Pinned particles move with
    ``pin_velocity``, a = 0. A prediction that moves less than ``still`` [m] over ``span``
    [s] is zero: a particle at rest is predicted exactly still (``contacts`` keeps the
    rope-rope pairs of still particles from frame to frame)."""
    for index in range(ids.shape[0]):
        i = ids[index]
        if not free[i]:
            for c in range(3):
                velocity[i, c] = pin_velocity[i, c]
                acceleration[i, c] = 0.0
            continue
        a2 = 0.0
        v2 = 0.0
        for c in range(3):
            velocity[i, c] = v_last[i, c] if held[i] else v[i, c]
            acceleration[i, c] = (v[i, c] - v_last[i, c]) / h
            a2 += acceleration[i, c] ** 2
            v2 += velocity[i, c] ** 2
        scale = 0.0 if held[i] else (limit / math.sqrt(a2) if a2 > limit * limit else 1.0)
        a2 *= scale * scale
        if math.sqrt(v2) * span + 0.5 * math.sqrt(a2) * span * span <= still:
            for c in range(3):
                velocity[i, c] = 0.0
            scale = 0.0
        for c in range(3):
            acceleration[i, c] *= scale


@kernel
def segment_motion(x, v, a, radius, slack, remaining, h, edges, horizon_reach):
    """The prediction a full search works with, over the next stretch of the frame.

    The stretch (horizon) is the rest of the frame ``remaining`` [s], shortened where particles move
    fast relative to each other (landing, a whip) so that the 90th percentile of the motion relative
    to the shared (median) motion stays within ``horizon_reach`` radii, but never below one substep
    h [s]: the search is redone after it. x, v, a (N, 3) [m], [m/s], [m/s^2]; radius, slack (N,)
    [m]. Returns (end (N, 3) [m]: x + (v - v_s) T + (a - a_s) T^2 / 2, the prediction after the
    horizon T in a frame moving with the shared motion v_s, a_s; grow (N,) [m]: radius + slack + the
    bulge of the parabola off its chord, |a - a_s| T^2 / 8;
    grid cell [m]; horizon [s]; v_s (3,); a_s (3,))."""
    n = x.shape[0]
    stride = max(n // 1024, 1)
    shared_v = np.empty(3)
    shared_a = np.empty(3)
    for c in range(3):
        shared_v[c] = _sampled_median(v, c, stride)
        shared_a[c] = _sampled_median(a, c, stride)
    relative = np.empty(n)
    for i in range(n):
        dv2 = 0.0
        da2 = 0.0
        for c in range(3):
            dv2 += (v[i, c] - shared_v[c]) ** 2
            da2 += (a[i, c] - shared_a[c]) ** 2
        relative[i] = math.sqrt(dv2) + 0.5 * math.sqrt(da2) * remaining
    fast = _quantile(relative, 0.9)
    typical = _quantile(radius, 0.5)
    horizon = remaining
    if fast * remaining > horizon_reach * typical:
        horizon = min(remaining, max(h, horizon_reach * typical / fast))
    end = np.empty((n, 3))
    grow = np.empty(n)
    half_square = 0.5 * horizon * horizon
    for i in range(n):
        da2 = 0.0
        for c in range(3):
            da = a[i, c] - shared_a[c]
            end[i, c] = x[i, c] + (v[i, c] - shared_v[c]) * horizon + da * half_square
            da2 += da * da
        grow[i] = radius[i] + slack[i] + 0.25 * math.sqrt(da2) * half_square
    m = edges.shape[0]
    extent = np.empty(m)
    for e in range(m):
        p, q = edges[e, 0], edges[e, 1]
        longest = 0.0
        for c in range(3):
            longest = max(longest, max(x[p, c], x[q, c], end[p, c], end[q, c])
                          - min(x[p, c], x[q, c], end[p, c], end[q, c]))
        extent[e] = longest + 2.0 * max(grow[p], grow[q])
    cell = max(_quantile(extent, 0.5), 1e-4) if m else 1.0
    return end, grow, cell, horizon, shared_v, shared_a


@kernel
def segment_boxes(edges, query, start, end, grow):
    """Boxes (lo, hi (K, 3) [m]) of the segments ``query`` (K,) holding both ends at
    ``start`` and at ``end`` (N, 3) [m], grown by the larger ``grow`` (N,) [m] of their ends."""
    k = query.shape[0]
    lo = np.empty((k, 3))
    hi = np.empty((k, 3))
    for index in range(k):
        e = query[index]
        p, q = edges[e, 0], edges[e, 1]
        g = max(grow[p], grow[q])
        for c in range(3):
            lo[index, c] = min(start[p, c], start[q, c], end[p, c], end[q, c]) - g
            hi[index, c] = max(start[p, c], start[q, c], end[p, c], end[q, c]) + g
    return lo, hi


@kernel
def moved_boxes(query, edges, position, velocity, acceleration, horizon, then, later,
                shared_v, shared_a, radius, slack):
    """Boxes (lo, hi (K, 3) [m]) of the segments ``query`` (K,) for a search in the frame of
    the last full one (moving with shared_v, shared_a (3,) from its start): the ends'
    predictions from ``position``/``velocity``/``acceleration`` (N, 3) now, ``then`` [s]
    after that start, to the horizon ``horizon`` [s] later (``later`` [s] after it), grown by
    radius + slack + the parabola's bulge, as ``segment_motion`` does for all."""
    k = query.shape[0]
    lo = np.empty((k, 3))
    hi = np.empty((k, 3))
    half_square = 0.5 * horizon * horizon
    for index in range(k):
        e = query[index]
        for c in range(3):
            lo[index, c] = np.inf
            hi[index, c] = -np.inf
        grow = 0.0
        for end in range(2):
            i = edges[e, end]
            da2 = 0.0
            for c in range(3):
                da = acceleration[i, c] - shared_a[c]
                da2 += da * da
                now = position[i, c] - (shared_v[c] * then + 0.5 * shared_a[c] * then * then)
                future = (position[i, c] + velocity[i, c] * horizon
                          + acceleration[i, c] * half_square
                          - (shared_v[c] * later + 0.5 * shared_a[c] * later * later))
                lo[index, c] = min(lo[index, c], now, future)
                hi[index, c] = max(hi[index, c], now, future)
            grow = max(grow, radius[i] + slack[i] + 0.25 * math.sqrt(da2) * half_square)
        for c in range(3):
            lo[index, c] -= grow
            hi[index, c] += grow
    return lo, hi


@kernel
def restart_prediction(ids, x, velocity, acceleration, now, x0, v0, a0, since):
    """New predictions for the particles ``ids``: from x now [s], with ``velocity`` and
    ``acceleration`` (N, 3), into x0, v0, a0 (N, 3) and since (N,)."""
    for index in range(ids.shape[0]):
        i = ids[index]
        for c in range(3):
            x0[i, c] = x[i, c]
            v0[i, c] = velocity[i, c]
            a0[i, c] = acceleration[i, c]
        since[i] = now


@kernel
def segment_bounds(edges, position, velocity, acceleration, shared_v, shared_a, horizon,
                   segment_reach):
    """Per segment (M,) [m]: half its length at ``position`` + its reach + the most its ends
    move relative to the shared motion (shared_v, shared_a (3,)) over ``horizon`` [s]. Two
    segments whose midpoints are farther apart than the sum of theirs cannot touch within
    the horizon (``_pair_kept``'s first test, without a square root)."""
    m = edges.shape[0]
    bound = np.empty(m)
    half_square = 0.5 * horizon * horizon
    for e in range(m):
        p, q = edges[e, 0], edges[e, 1]
        length2 = 0.0
        for c in range(3):
            length2 += (position[q, c] - position[p, c]) ** 2
        motion = 0.0
        for i in (p, q):
            dv2 = 0.0
            da2 = 0.0
            for c in range(3):
                dv2 += (velocity[i, c] - shared_v[c]) ** 2
                da2 += (acceleration[i, c] - shared_a[c]) ** 2
            motion = max(motion, math.sqrt(dv2) * horizon + math.sqrt(da2) * half_square)
        bound[e] = 0.5 * math.sqrt(length2) + segment_reach[e] + motion
    return bound


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
def _stored(pairs, count, e, f):
    """``pairs`` (K, 2) with the pair (min, max) of e, f in row ``count``, grown to twice its
    length first if full (a kept pair is rare: the call costs nothing in the scan)."""
    if count == pairs.shape[0]:
        grown = np.empty((2 * pairs.shape[0], 2), dtype=np.int64)
        grown[:count] = pairs
        pairs = grown
    pairs[count, 0] = min(e, f)
    pairs[count, 1] = max(e, f)
    return pairs


@kernel
def _extra_pairs(pairs, count, e, index, query_lo, query_hi, extra, extra_lo, extra_hi,
                 current, edges, edge_chain, edge_arc, segment_reach, segment_skip, bound,
                 position, velocity, acceleration, horizon):
    """``segment_pairs``' brute-force part for query segment e (row ``index``): its pairs
    with the segments ``extra`` searched again since the last full search. Returns the
    grown (pairs, count). Its own function, called once per query segment: inlined, this
    loop made the grid scan of a full search 1.7x slower; a call per test (the box test as
    a helper with array arguments, which numba does not inline) cost 40 ns a test."""
    for other in range(extra.shape[0]):
        f = extra[other]
        if f == e or (current[f] != 0 and f < e):
            continue  # a pair within the query is found from its lower segment
        if not (query_lo[index, 0] <= extra_hi[f, 0] and extra_lo[f, 0] <= query_hi[index, 0]
                and query_lo[index, 1] <= extra_hi[f, 1] and extra_lo[f, 1] <= query_hi[index, 1]
                and query_lo[index, 2] <= extra_hi[f, 2]
                and extra_lo[f, 2] <= query_hi[index, 2]):
            continue
        if _pair_kept(e, f, edges, edge_chain, edge_arc, segment_reach, segment_skip, bound,
                      position, velocity, acceleration, horizon):
            pairs = _stored(pairs, count, e, f)
            count += 1
    return pairs, count


@kernel
def _extra_grid_pairs(pairs, count, e, index, query_lo, query_hi, extra, extra_lo, extra_hi,
                      x_start, x_ids, x_oversize, x_mask, inverse_cell, max_cells, marker,
                      current, edges, edge_chain, edge_arc, segment_reach, segment_skip,
                      bound, position, velocity, acceleration, horizon):
    """``_extra_pairs`` through a grid of the ``extra`` segments' boxes (x_start ... x_mask
    of ``build_grid``, ids into ``extra``) instead of by brute force: the same pairs, in
    time that grows with the boxes near the query, not with all of them. Called once per
    query segment (see ``_extra_pairs``)."""
    i0, j0, k0, i1, j1, k1, cells = _span(query_lo[index], query_hi[index], inverse_cell)
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
            key = _hash(i0 + s // di, j0 + (s % di) // dj, k0 + s % dj, x_mask)
            first, last = x_start[key], x_start[key + 1]
        for entry in range(first, last):
            if s >= scan:
                f = extra[x_oversize[entry]]
            elif brute:
                f = extra[entry]
            else:
                f = extra[x_ids[entry]]
            if f == e or (current[f] != 0 and f < e) or marker[f] == e:
                continue  # a pair within the query is found from its lower segment
            marker[f] = e
            if not (query_lo[index, 0] <= extra_hi[f, 0] and extra_lo[f, 0] <= query_hi[index, 0]
                    and query_lo[index, 1] <= extra_hi[f, 1]
                    and extra_lo[f, 1] <= query_hi[index, 1]
                    and query_lo[index, 2] <= extra_hi[f, 2]
                    and extra_lo[f, 2] <= query_hi[index, 2]):
                continue
            if _pair_kept(e, f, edges, edge_chain, edge_arc, segment_reach, segment_skip, bound,
                          position, velocity, acceleration, horizon):
                pairs = _stored(pairs, count, e, f)
                count += 1
    return pairs, count


@kernel
def segment_pairs(query, query_lo, query_hi, lo, hi, start, ids, oversize, mask, cell,
                  max_cells, full, moved_box, extra, extra_lo, extra_hi, x_start, x_ids,
                  x_oversize, x_mask, current, edges, edge_chain, edge_arc, segment_reach,
                  segment_skip, bound, position, velocity, acceleration, horizon):
    """Candidate pairs (K, 2), first < second, in increasing order (``_in_order``), of the
    segments ``query`` with boxes (query_lo, query_hi (Q, 3) [m]), kept by ``_pair_kept`` at
    ``position``/``velocity``/``acceleration`` (N, 3) over ``horizon`` [s].

    The grid (boxes lo, hi (M, 3), start, ids, oversize, mask of ``build_grid`` with cell
    [m]) holds every segment's box of the last full search. ``full``: the query is every
    segment with those boxes, each pair found once. Otherwise the query is the segments
    searched again now (flagged in ``current`` (M,)): against the grid's segments whose box
    did not move since (``moved_box`` (M,) 0), and against the segments ``extra`` whose box
    did, with their new boxes (extra_lo, extra_hi (M, 3), rows of ``extra``), the query
    among them: through their own grid (x_start, x_ids, x_oversize, x_mask of
    ``build_grid``, ids into ``extra``, the same cell), or by brute force if x_start is
    empty."""
    m = edges.shape[0]
    inverse_cell = 1.0 / cell
    marker = np.full(m, -1, dtype=np.int64)
    pairs = np.empty((max(2 * query.shape[0], 64), 2), dtype=np.int64)
    count = 0
    for index in range(query.shape[0]):
        e = query[index]
        # The scan of the grid cells is written out as in ``collider_candidates``, not
        # shared: a helper taking the grid's arrays is not inlined by numba and made the
        # search 2.7-4x slower (measured twice)
        i0, j0, k0, i1, j1, k1, cells = _span(query_lo[index], query_hi[index], inverse_cell)
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
                key = _hash(i0 + s // di, j0 + (s % di) // dj, k0 + s % dj, mask)
                first, last = start[key], start[key + 1]
            for entry in range(first, last):
                if s >= scan:
                    f = oversize[entry]
                elif brute:
                    f = entry
                else:
                    f = ids[entry]
                if (f <= e if full else moved_box[f] != 0) or marker[f] == e:
                    continue
                marker[f] = e
                # the box and rope-gap tests inline: a call per entry costs more than them
                if not (query_lo[index, 0] <= hi[f, 0] and lo[f, 0] <= query_hi[index, 0]
                        and query_lo[index, 1] <= hi[f, 1] and lo[f, 1] <= query_hi[index, 1]
                        and query_lo[index, 2] <= hi[f, 2] and lo[f, 2] <= query_hi[index, 2]):
                    continue
                if edge_chain[e] >= 0 and edge_chain[e] == edge_chain[f] and max(
                        edge_arc[f, 0] - edge_arc[e, 1], edge_arc[e, 0] - edge_arc[f, 1]) <= (
                        segment_skip[e] + segment_skip[f]):
                    continue
                if _pair_kept(e, f, edges, edge_chain, edge_arc, segment_reach, segment_skip,
                              bound, position, velocity, acceleration, horizon):
                    pairs = _stored(pairs, count, e, f)
                    count += 1
        if extra.shape[0] and x_start.shape[0]:
            pairs, count = _extra_grid_pairs(
                pairs, count, e, index, query_lo, query_hi, extra, extra_lo, extra_hi, x_start,
                x_ids, x_oversize, x_mask, inverse_cell, max_cells, marker, current, edges,
                edge_chain, edge_arc, segment_reach, segment_skip, bound, position, velocity,
                acceleration, horizon)
        elif extra.shape[0]:
            pairs, count = _extra_pairs(pairs, count, e, index, query_lo, query_hi, extra,
                                        extra_lo, extra_hi, current, edges, edge_chain,
                                        edge_arc, segment_reach, segment_skip, bound,
                                        position, velocity, acceleration, horizon)
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
        _heapsort(keys)
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


@kernel
def merge_pairs(pairs, searched, new_pairs):
    """The pairs (K, 2) without those with a segment flagged in ``searched`` (M,) (found
    again), merged with ``new_pairs``; both in increasing (first, second) order, and so is
    the result."""
    kept = 0
    for k in range(pairs.shape[0]):
        if searched[pairs[k, 0]] == 0 and searched[pairs[k, 1]] == 0:
            kept += 1
    merged = np.empty((kept + new_pairs.shape[0], 2), dtype=np.int64)
    count = 0
    j = 0
    for k in range(pairs.shape[0]):
        a, b = pairs[k, 0], pairs[k, 1]
        if searched[a] != 0 or searched[b] != 0:
            continue
        while j < new_pairs.shape[0] and (new_pairs[j, 0] < a or (
                new_pairs[j, 0] == a and new_pairs[j, 1] < b)):
            merged[count, 0], merged[count, 1] = new_pairs[j, 0], new_pairs[j, 1]
            count += 1
            j += 1
        merged[count, 0], merged[count, 1] = a, b
        count += 1
    while j < new_pairs.shape[0]:
        merged[count, 0], merged[count, 1] = new_pairs[j, 0], new_pairs[j, 1]
        count += 1
        j += 1
    return merged


@kernel
def left_prediction(x, x0, v0, a0, since, now, slack, strayed):
    """How many particles are farther than their ``slack`` (N,) [m] from where their
    prediction puts them at ``now`` [s]: x0 + v0 t + a0 t^2 / 2, t = now - since (N,) [s];
    flagged in ``strayed`` (N,) (1, others 0). Pairs of the others hold every contact.
    Without a branch, on flat views (C-contiguous arrays): 8 particles at a time."""
    count = 0
    p, q, u, g = x.reshape(-1), x0.reshape(-1), v0.reshape(-1), a0.reshape(-1)
    for i in range(np.uint64(since.shape[0])):
        j = i * np.uint64(3)
        j1, j2 = j + np.uint64(1), j + np.uint64(2)
        t = now - since[i]
        half_square = 0.5 * t * t
        dx = p[j] - (q[j] + u[j] * t + g[j] * half_square)
        dy = p[j1] - (q[j1] + u[j1] * t + g[j1] * half_square)
        dz = p[j2] - (q[j2] + u[j2] * t + g[j2] * half_square)
        away = dx * dx + dy * dy + dz * dz > slack[i] * slack[i]
        strayed[i] = 1 if away else 0
        count += 1 if away else 0
    return count


@kernel
def predicted_now(x0, v0, a0, since, now, position, velocity):
    """The prediction at ``now`` [s]: position x0 + v0 t + a0 t^2 / 2 and velocity v0 + a0 t
    (N, 3), t = now - since."""
    for i in range(x0.shape[0]):
        t = now - since[i]
        for c in range(3):
            position[i, c] = x0[i, c] + v0[i, c] * t + 0.5 * a0[i, c] * t * t
            velocity[i, c] = v0[i, c] + a0[i, c] * t


@kernel
def moving(v0, a0, flags):
    """Flags (N,) uint8 of the predictions that are not still (v0 or a0 (N, 3) nonzero);
    returns how many."""
    count = 0
    for i in range(flags.shape[0]):
        still = (v0[i, 0] == 0.0 and v0[i, 1] == 0.0 and v0[i, 2] == 0.0
                 and a0[i, 0] == 0.0 and a0[i, 1] == 0.0 and a0[i, 2] == 0.0)
        flags[i] = 0 if still else 1
        count += 0 if still else 1
    return count
