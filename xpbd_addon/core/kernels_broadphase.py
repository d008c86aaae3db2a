"""numba broad phase of the contacts: which triangles and which segment pairs to test.

Run once per frame (the narrow phase in ``kernels_contact`` runs every substep on what this
finds). Every particle has a reach r_i [m], a bound on how far it gets this frame plus its
radius and a margin (``solver`` computes it); triangles are swept over the frame (their
start and end positions). Boxes go into a hashed uniform grid; pairs whose boxes overlap are
then kept only if their exact distance at the start of the frame is within reach, so what the
substeps see is close to the contacts that can really happen. Cost: O(particles + triangles +
box overlaps), not particles x triangles. Results come out in a fixed order (by triangle, then
sorted stably by particle; segment pairs by first segment), so runs are bit-identical.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .kernels_contact import closest_on_segments, closest_on_triangle

_JIT = dict(cache=True, error_model="numpy", nogil=True)


@njit(**_JIT)
def _hash(i, j, k, mask):
    return ((i * 73856093) ^ (j * 19349663) ^ (k * 83492791)) & mask


@njit(**_JIT)
def _span(lo, hi, inverse_cell):
    """Cell index ranges of a box and their cell count (a float: it may be huge)."""
    i0 = np.int64(math.floor(lo[0] * inverse_cell))
    j0 = np.int64(math.floor(lo[1] * inverse_cell))
    k0 = np.int64(math.floor(lo[2] * inverse_cell))
    i1 = np.int64(math.floor(hi[0] * inverse_cell))
    j1 = np.int64(math.floor(hi[1] * inverse_cell))
    k1 = np.int64(math.floor(hi[2] * inverse_cell))
    cells = float(i1 - i0 + 1) * float(j1 - j0 + 1) * float(k1 - k0 + 1)
    return i0, j0, k0, i1, j1, k1, cells


@njit(**_JIT)
def build_grid(lo, hi, inverse_cell, max_cells):
    """A hashed uniform grid over boxes [lo, hi] (n, 3): each box is listed in every cell it
    covers; boxes covering more than ``max_cells`` cells go to an ``oversize`` list instead
    (a rare fast particle or long segment must not flood the table). Returns
    (bucket_start (table + 1,), ids, oversize, mask): the boxes hashed to bucket b are
    ids[bucket_start[b]:bucket_start[b + 1]], in increasing order. Hash collisions only add
    candidates, which the callers' box test removes."""
    n = lo.shape[0]
    entries = 0
    oversize_count = 0
    for i in range(n):
        cells = _span(lo[i], hi[i], inverse_cell)[6]
        if cells > max_cells:
            oversize_count += 1
        else:
            entries += np.int64(cells)
    table = 16
    while table < 2 * entries:
        table *= 2
    mask = np.int64(table - 1)
    keys = np.empty(entries, dtype=np.int64)
    ids = np.empty(entries, dtype=np.int64)
    oversize = np.empty(oversize_count, dtype=np.int64)
    e = 0
    o = 0
    for item in range(n):
        i0, j0, k0, i1, j1, k1, cells = _span(lo[item], hi[item], inverse_cell)
        if cells > max_cells:
            oversize[o] = item
            o += 1
            continue
        for i in range(i0, i1 + 1):
            for j in range(j0, j1 + 1):
                for k in range(k0, k1 + 1):
                    keys[e] = _hash(i, j, k, mask)
                    ids[e] = item
                    e += 1
    start = np.zeros(table + 1, dtype=np.int64)
    for e in range(entries):
        start[keys[e] + 1] += 1
    for b in range(table):
        start[b + 1] += start[b]
    cursor = start[:-1].copy()
    ordered = np.empty(entries, dtype=np.int64)
    for e in range(entries):
        ordered[cursor[keys[e]]] = ids[e]
        cursor[keys[e]] += 1
    return start, ordered, oversize, mask


@njit(**_JIT)
def _append(first, second, count, a, b):
    """Append the pair (a, b) at ``count`` to two growable arrays; returns them (maybe
    reallocated, doubling)."""
    if count == first.shape[0]:
        grown_first = np.empty(2 * count + 64, dtype=np.int64)
        grown_second = np.empty(2 * count + 64, dtype=np.int64)
        grown_first[:count] = first[:count]
        grown_second[:count] = second[:count]
        first, second = grown_first, grown_second
    first[count] = a
    second[count] = b
    return first, second


@njit(**_JIT)
def _overlap(lo_a, hi_a, lo_b, hi_b):
    return (lo_a[0] <= hi_b[0] and lo_b[0] <= hi_a[0] and lo_a[1] <= hi_b[1]
            and lo_b[1] <= hi_a[1] and lo_a[2] <= hi_b[2] and lo_b[2] <= hi_a[2])


@njit(**_JIT)
def _particle_triangle(p, t, marker, x, x_end, reach, lo, hi, t_lo, t_hi, a, b, c, slack,
                       spacing, pair_particle, pair_triangle, count):
    """Keep (p, t) if not seen yet for t, the boxes overlap and the particle's predicted path,
    the chord x -> x_end sampled every ``spacing`` or less, comes within reach_p + slack of
    the triangle (plus half the sample spacing, which bounds the chord's distance between
    samples). Returns (pair arrays, count)."""
    if marker[p] == t or reach[p] <= 0.0:
        return pair_particle, pair_triangle, count
    marker[p] = t
    if not _overlap(lo[p], hi[p], t_lo, t_hi):
        return pair_particle, pair_triangle, count
    dx, dy, dz = x_end[p, 0] - x[p, 0], x_end[p, 1] - x[p, 1], x_end[p, 2] - x[p, 2]
    length = math.sqrt(dx * dx + dy * dy + dz * dz)
    samples = np.int64(math.ceil(length / spacing)) if spacing > 0.0 else 0
    samples = min(max(samples, 1), 64)
    limit = reach[p] + slack + 0.5 * length / samples
    for k in range(samples + 1):
        f = k / samples
        px, py, pz = x[p, 0] + f * dx, x[p, 1] + f * dy, x[p, 2] + f * dz
        qx, qy, qz, _, _, _, _ = closest_on_triangle(px, py, pz, a[0], a[1], a[2], b[0], b[1],
                                                     b[2], c[0], c[1], c[2])
        if (px - qx) ** 2 + (py - qy) ** 2 + (pz - qz) ** 2 <= limit * limit:
            pair_particle, pair_triangle = _append(pair_particle, pair_triangle, count, p, t)
            return pair_particle, pair_triangle, count + 1
    return pair_particle, pair_triangle, count


@njit(**_JIT)
def collider_candidates(x, x_end, reach, vertices, vertices_end, triangles,
                        triangle_thickness, cell, max_cells):
    """Candidate triangles of each particle for (the rest of) one frame.

    x (N, 3) [m] particles now; x_end (N, 3) [m] where their free flight would take them by
    the end of the frame (the chord of the path); reach (N,) [m] radius + margin + the
    path's bulge off the chord (0 = never collides, e.g. pinned); vertices / vertices_end
    (V, 3) [m] all colliders at the start and end of the frame; triangles (T, 3);
    triangle_thickness (T,) [m]; cell [m] the grid cell size; max_cells the most cells a
    box may cover before it is handled by brute force. A pair is kept if the chord comes
    within reach + thickness + the triangle's largest vertex motion of the triangle at the
    start. As long as a particle stays within its margin of its predicted path (``solver``
    checks, ``left_path``), every contact it can have is in the list. Returns CSR (offsets
    (N + 1,), triangle ids), each particle's triangles in increasing order."""
    n = x.shape[0]
    lo = np.empty((n, 3))
    hi = np.empty((n, 3))
    spacing = np.empty(n)
    for i in range(n):
        for c in range(3):
            lo[i, c] = min(x[i, c], x_end[i, c]) - reach[i]
            hi[i, c] = max(x[i, c], x_end[i, c]) + reach[i]
        spacing[i] = reach[i]
    inverse_cell = 1.0 / cell
    start, ids, oversize, mask = build_grid(lo, hi, inverse_cell, max_cells)
    marker = np.full(n, -1, dtype=np.int64)
    pair_particle = np.empty(64, dtype=np.int64)
    pair_triangle = np.empty(64, dtype=np.int64)
    count = 0
    t_lo = np.empty(3)
    t_hi = np.empty(3)
    for t in range(triangles.shape[0]):
        motion = 0.0
        t_lo[:] = np.inf
        t_hi[:] = -np.inf
        for k in range(3):
            vertex = triangles[t, k]
            m2 = 0.0
            for c in range(3):
                p0 = vertices[vertex, c]
                p1 = vertices_end[vertex, c]
                t_lo[c] = min(t_lo[c], p0, p1)
                t_hi[c] = max(t_hi[c], p0, p1)
                m2 += (p1 - p0) * (p1 - p0)
            motion = max(motion, math.sqrt(m2))
        grow = triangle_thickness[t]
        for c in range(3):
            t_lo[c] -= grow
            t_hi[c] += grow
        a = vertices[triangles[t, 0]]
        b = vertices[triangles[t, 1]]
        c3 = vertices[triangles[t, 2]]
        slack = motion + grow
        # cells hold every particle box they touch, so the triangle's own box is the query
        i0, j0, k0, i1, j1, k1, cells = _span(t_lo, t_hi, inverse_cell)
        if cells > max_cells or cells > n:
            for p in range(n):
                pair_particle, pair_triangle, count = _particle_triangle(
                    p, t, marker, x, x_end, reach, lo, hi, t_lo, t_hi, a, b, c3, slack,
                    spacing[p], pair_particle, pair_triangle, count)
        else:
            for i in range(i0, i1 + 1):
                for j in range(j0, j1 + 1):
                    for k in range(k0, k1 + 1):
                        key = _hash(i, j, k, mask)
                        for entry in range(start[key], start[key + 1]):
                            p = ids[entry]
                            pair_particle, pair_triangle, count = _particle_triangle(
                                p, t, marker, x, x_end, reach, lo, hi, t_lo, t_hi, a, b, c3,
                                slack, spacing[p], pair_particle, pair_triangle, count)
            for o in range(oversize.shape[0]):
                p = oversize[o]
                pair_particle, pair_triangle, count = _particle_triangle(
                    p, t, marker, x, x_end, reach, lo, hi, t_lo, t_hi, a, b, c3, slack,
                    spacing[p], pair_particle, pair_triangle, count)
    offsets = np.zeros(n + 1, dtype=np.int64)
    for k in range(count):
        offsets[pair_particle[k] + 1] += 1
    for i in range(n):
        offsets[i + 1] += offsets[i]
    cursor = offsets[:-1].copy()
    candidates = np.empty(count, dtype=np.int64)
    for k in range(count):  # a stable counting sort keeps each particle's triangles in order
        p = pair_particle[k]
        candidates[cursor[p]] = pair_triangle[k]
        cursor[p] += 1
    return offsets, candidates


@njit(**_JIT)
def _segment_pair(e, f, marker, x, reach, edges, edge_chain, edge_arc, radius, lo, hi,
                  first, second, count):
    """Keep segment pair (e, f), e < f, unless seen, adjacent, or out of reach."""
    if f <= e or marker[f] == e:
        return first, second, count
    marker[f] = e
    a0, a1 = edges[e, 0], edges[e, 1]
    b0, b1 = edges[f, 0], edges[f, 1]
    if a0 == b0 or a0 == b1 or a1 == b0 or a1 == b1:
        return first, second, count
    radius_sum = max(radius[a0], radius[a1]) + max(radius[b0], radius[b1])
    if edge_chain[e] >= 0 and edge_chain[e] == edge_chain[f]:
        # neighbours along one rope: at rest they are ``gap`` apart, and a gap under 2 r
        # would be a contact of the straight rope with itself
        gap = max(edge_arc[f, 0] - edge_arc[e, 1], edge_arc[e, 0] - edge_arc[f, 1])
        if gap <= radius_sum:
            return first, second, count
    if not _overlap(lo[e], hi[e], lo[f], hi[f]):
        return first, second, count
    s, t = closest_on_segments(x[a0], x[a1], x[b0], x[b1])
    d2 = 0.0
    for c in range(3):
        d = (x[a0, c] + s * (x[a1, c] - x[a0, c])) - (x[b0, c] + t * (x[b1, c] - x[b0, c]))
        d2 += d * d
    reach_sum = max(reach[a0], reach[a1]) + max(reach[b0], reach[b1])
    if d2 <= reach_sum * reach_sum:
        first, second = _append(first, second, count, e, f)
        count += 1
    return first, second, count


@njit(**_JIT)
def segment_candidates(x, reach, edges, edge_chain, edge_arc, radius, cell, max_cells):
    """Candidate segment pairs (K, 2), first < second, for rope-rope contacts.

    x (N, 3) [m] now; reach (N,) [m] radius + margin + how far the particle moves relative
    to the common motion of all particles (a translation shared by all changes no distance,
    so a falling scene needs no bigger reach than a resting one); edges (M, 2); edge_chain
    (M,) the chain (rope) of each edge or -1; edge_arc (M, 2) [m] rest arc length along its
    chain of each edge's two ends (low, high); radius (N,) [m]. Pairs that share a particle,
    or lie closer than r_a + r_b along the same rope, are never candidates; the others are
    kept if their distance now is within the sum of their reaches."""
    m = edges.shape[0]
    lo = np.empty((m, 3))
    hi = np.empty((m, 3))
    for e in range(m):
        a, b = edges[e, 0], edges[e, 1]
        grow = max(reach[a], reach[b])
        for c in range(3):
            lo[e, c] = min(x[a, c], x[b, c]) - grow
            hi[e, c] = max(x[a, c], x[b, c]) + grow
    inverse_cell = 1.0 / cell
    start, ids, oversize, mask = build_grid(lo, hi, inverse_cell, max_cells)
    marker = np.full(m, -1, dtype=np.int64)
    first = np.empty(64, dtype=np.int64)
    second = np.empty(64, dtype=np.int64)
    count = 0
    for e in range(m):
        i0, j0, k0, i1, j1, k1, cells = _span(lo[e], hi[e], inverse_cell)
        if cells > max_cells:
            for f in range(e + 1, m):
                first, second, count = _segment_pair(e, f, marker, x, reach, edges,
                                                     edge_chain, edge_arc, radius, lo, hi,
                                                     first, second, count)
            continue
        for i in range(i0, i1 + 1):
            for j in range(j0, j1 + 1):
                for k in range(k0, k1 + 1):
                    key = _hash(i, j, k, mask)
                    for entry in range(start[key], start[key + 1]):
                        first, second, count = _segment_pair(
                            e, ids[entry], marker, x, reach, edges, edge_chain, edge_arc,
                            radius, lo, hi, first, second, count)
        for o in range(oversize.shape[0]):
            first, second, count = _segment_pair(e, oversize[o], marker, x, reach, edges,
                                                 edge_chain, edge_arc, radius, lo, hi, first,
                                                 second, count)
    pairs = np.empty((count, 2), dtype=np.int64)
    pairs[:, 0] = first[:count]
    pairs[:, 1] = second[:count]
    return pairs


@njit(**_JIT)
def left_path(x, x0, v0, w, gravity, t, slack):
    """True if some free particle (w > 0) is farther than ``slack`` (N,) [m] from its free
    flight x0 + v0 t + g t^2 / 2, the path the candidates were found for."""
    half_t2 = 0.5 * t * t
    for i in range(x.shape[0]):
        if not w[i] > 0.0:
            continue
        d2 = 0.0
        for c in range(3):
            d = x[i, c] - (x0[i, c] + v0[i, c] * t + gravity[c] * half_t2)
            d2 += d * d
        if d2 > slack[i] * slack[i]:
            return True
    return False


@njit(**_JIT)
def left_shared_path(x, x0, v0, gravity, t, slack, deviation):
    """True if the particles' deviations from their free flight x0 + v0 t + g t^2 / 2 differ
    from a common one by more than ``slack`` (N,) [m] somewhere (``deviation`` (N, 3)
    scratch). Distances between particles change by at most the sum of two such differences,
    so while this is False the rope-rope candidates stay complete; a heap at rest on the
    ground deviates from free fall by the same amount everywhere and never triggers it.
    The common deviation is the midrange of all, which minimises the largest difference."""
    half_t2 = 0.5 * t * t
    low = np.full(3, np.inf)
    high = np.full(3, -np.inf)
    for i in range(x.shape[0]):
        for c in range(3):
            d = x[i, c] - (x0[i, c] + v0[i, c] * t + gravity[c] * half_t2)
            deviation[i, c] = d
            low[c] = min(low[c], d)
            high[c] = max(high[c], d)
    mx, my, mz = 0.5 * (low[0] + high[0]), 0.5 * (low[1] + high[1]), 0.5 * (low[2] + high[2])
    for i in range(x.shape[0]):
        d2 = ((deviation[i, 0] - mx) ** 2 + (deviation[i, 1] - my) ** 2
              + (deviation[i, 2] - mz) ** 2)
        if d2 > slack[i] * slack[i]:
            return True
    return False
