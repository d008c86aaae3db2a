"""numba broad phase of the contacts: which triangles and which segment pairs to test.

Run at the start of a frame, and again only when a particle strays from what was predicted
(``contacts.FrameContacts``); the narrow phase in ``kernels_contact`` runs every substep on
what this finds. Collider triangles are swept over the frame (start and end positions) and
put in a hashed uniform grid; each particle queries the cells along the chord of its
predicted free flight, grown by radius + margin, and keeps the triangles that chord comes
within reach of. Rope segments go into the same kind of grid with a reach of radius +
margin + motion relative to what all particles share. Cost: O(particles + triangles + box
overlaps), not particles x triangles. Everything runs in a fixed order on one thread, so
runs are bit-identical.
"""

from __future__ import annotations

import math

import numpy as np

from .jit import kernel
from .kernels_geometry import closest_on_segments, closest_on_triangle


@kernel
def _hash(i, j, k, mask):
    return ((i * 73856093) ^ (j * 19349663) ^ (k * 83492791)) & mask


@kernel
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


@kernel
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


@kernel
def _chord_near(x0, y0, z0, dx, dy, dz, samples, limit, vertices, i0, i1, i2):
    """True if the chord (x0 + f d, f in [0, 1]), sampled at ``samples`` + 1 points, comes
    within ``limit`` of triangle (i0, i1, i2) of ``vertices``."""
    for k in range(samples + 1):
        f = k / samples
        px, py, pz = x0 + f * dx, y0 + f * dy, z0 + f * dz
        qx, qy, qz, _, _, _, _ = closest_on_triangle(
            px, py, pz, vertices[i0, 0], vertices[i0, 1], vertices[i0, 2], vertices[i1, 0],
            vertices[i1, 1], vertices[i1, 2], vertices[i2, 0], vertices[i2, 1],
            vertices[i2, 2])
        if (px - qx) ** 2 + (py - qy) ** 2 + (pz - qz) ** 2 <= limit * limit:
            return True
    return False


@kernel
def collider_candidates(x, x_end, reach, vertices, vertices_end, triangles,
                        triangle_thickness, cell, max_cells):
    """Candidate triangles of each particle for (the rest of) one frame.

    x (N, 3) [m] particles now; x_end (N, 3) [m] where their free flight would take them by
    the end of the frame (the chord of the path); reach (N,) [m] radius + margin + the
    path's bulge off the chord (0 = never collides, e.g. pinned); vertices / vertices_end
    (V, 3) [m] all colliders at the start and end of the frame; triangles (T, 3);
    triangle_thickness (T,) [m]; cell [m] the grid cell size; max_cells the most cells a
    box may cover before it is handled by brute force (a huge ground triangle). The swept
    triangles go into the grid, each particle queries the cells of its path's box, and a pair
    is kept if the chord, sampled every ``reach`` or less, comes within reach + thickness +
    the triangle's largest vertex motion + half the sample spacing of the triangle at the
    start of the frame. As long as a particle stays within its margin of its predicted path
    (``left_chord``), every contact it can have is in the list. Returns CSR (offsets (N + 1,),
    triangle ids)."""
    n = x.shape[0]
    m = triangles.shape[0]
    t_lo = np.empty((m, 3))
    t_hi = np.empty((m, 3))
    slack = np.empty(m)
    for t in range(m):
        motion = 0.0
        for c in range(3):
            t_lo[t, c] = np.inf
            t_hi[t, c] = -np.inf
        for k in range(3):
            vertex = triangles[t, k]
            m2 = 0.0
            for c in range(3):
                p0 = vertices[vertex, c]
                p1 = vertices_end[vertex, c]
                t_lo[t, c] = min(t_lo[t, c], p0, p1)
                t_hi[t, c] = max(t_hi[t, c], p0, p1)
                m2 += (p1 - p0) * (p1 - p0)
            motion = max(motion, math.sqrt(m2))
        grow = triangle_thickness[t]
        for c in range(3):
            t_lo[t, c] -= grow
            t_hi[t, c] += grow
        slack[t] = motion + grow
    inverse_cell = 1.0 / cell
    start, ids, oversize, mask = build_grid(t_lo, t_hi, inverse_cell, max_cells)
    marker = np.full(m, -1, dtype=np.int64)
    offsets = np.zeros(n + 1, dtype=np.int64)
    candidates = np.empty(max(4 * n, 64), dtype=np.int64)
    count = 0
    p_lo = np.empty(3)
    p_hi = np.empty(3)
    for p in range(n):
        offsets[p] = count
        r = reach[p]
        if not r > 0.0:
            continue
        for c in range(3):
            p_lo[c] = min(x[p, c], x_end[p, c]) - r
            p_hi[c] = max(x[p, c], x_end[p, c]) + r
        x0, y0, z0 = x[p, 0], x[p, 1], x[p, 2]
        dx, dy, dz = x_end[p, 0] - x0, x_end[p, 1] - y0, x_end[p, 2] - z0
        length = math.sqrt(dx * dx + dy * dy + dz * dz)
        samples = min(max(np.int64(math.ceil(length / r)), 1), 64)
        base = r + 0.5 * length / samples
        i0, j0, k0, i1, j1, k1, cells = _span(p_lo, p_hi, inverse_cell)
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
                    t = oversize[entry]
                elif brute:
                    t = entry
                else:
                    t = ids[entry]
                if marker[t] == p:
                    continue
                marker[t] = p
                if not (p_lo[0] <= t_hi[t, 0] and t_lo[t, 0] <= p_hi[0]
                        and p_lo[1] <= t_hi[t, 1] and t_lo[t, 1] <= p_hi[1]
                        and p_lo[2] <= t_hi[t, 2] and t_lo[t, 2] <= p_hi[2]):
                    continue
                if _chord_near(x0, y0, z0, dx, dy, dz, samples, base + slack[t], vertices,
                               triangles[t, 0], triangles[t, 1], triangles[t, 2]):
                    if count == candidates.shape[0]:
                        grown = np.empty(2 * count, dtype=np.int64)
                        grown[:count] = candidates
                        candidates = grown
                    candidates[count] = t
                    count += 1
    offsets[n] = count
    return offsets, candidates[:count].copy()


@kernel
def segment_candidates(x, reach, edges, edge_chain, edge_arc, skip_radius, cell, max_cells):
    """Candidate segment pairs (K, 2), first < second, for rope-rope contacts.

    x (N, 3) [m] now; reach (N,) [m] radius + margin + how far the particle moves relative
    to the motion all particles share (a common translation changes no distance, so a
    falling scene needs no bigger reach than a resting one); edges (M, 2); edge_chain (M,)
    the chain (rope) of each edge or -1; edge_arc (M, 2) [m] rest arc length along its chain
    of each edge's two ends (low, high); skip_radius (N,) [m]. Pairs that share a particle,
    or lie closer than the sum of their skip radii along the same rope (at least r_a + r_b:
    they would touch when it is straight), are never candidates; the others are kept if
    their distance now is within the sum of their reaches."""
    m = edges.shape[0]
    lo = np.empty((m, 3))
    hi = np.empty((m, 3))
    segment_reach = np.empty(m)
    segment_radius = np.empty(m)
    for e in range(m):
        a, b = edges[e, 0], edges[e, 1]
        segment_reach[e] = max(reach[a], reach[b])
        segment_radius[e] = max(skip_radius[a], skip_radius[b])
        for c in range(3):
            lo[e, c] = min(x[a, c], x[b, c]) - segment_reach[e]
            hi[e, c] = max(x[a, c], x[b, c]) + segment_reach[e]
    inverse_cell = 1.0 / cell
    start, ids, oversize, mask = build_grid(lo, hi, inverse_cell, max_cells)
    marker = np.full(m, -1, dtype=np.int64)
    pairs = np.empty((max(2 * m, 64), 2), dtype=np.int64)
    count = 0
    for e in range(m):
        a0, a1 = edges[e, 0], edges[e, 1]
        i0, j0, k0, i1, j1, k1, cells = _span(lo[e], hi[e], inverse_cell)
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
                if f <= e or marker[f] == e:
                    continue
                marker[f] = e
                b0, b1 = edges[f, 0], edges[f, 1]
                if a0 == b0 or a0 == b1 or a1 == b0 or a1 == b1:
                    continue
                if not (lo[e, 0] <= hi[f, 0] and lo[f, 0] <= hi[e, 0] and lo[e, 1] <= hi[f, 1]
                        and lo[f, 1] <= hi[e, 1] and lo[e, 2] <= hi[f, 2]
                        and lo[f, 2] <= hi[e, 2]):
                    continue
                if edge_chain[e] >= 0 and edge_chain[e] == edge_chain[f]:
                    gap = max(edge_arc[f, 0] - edge_arc[e, 1], edge_arc[e, 0] - edge_arc[f, 1])
                    if gap <= segment_radius[e] + segment_radius[f]:
                        continue
                u, t = closest_on_segments(x, a0, a1, b0, b1)
                d2 = 0.0
                for c in range(3):
                    d = ((x[a0, c] + u * (x[a1, c] - x[a0, c]))
                         - (x[b0, c] + t * (x[b1, c] - x[b0, c])))
                    d2 += d * d
                limit = segment_reach[e] + segment_reach[f]
                if d2 <= limit * limit:
                    if count == pairs.shape[0]:
                        grown = np.empty((2 * count, 2), dtype=np.int64)
                        grown[:count] = pairs
                        pairs = grown
                    pairs[count, 0] = e
                    pairs[count, 1] = f
                    count += 1
    return pairs[:count].copy()


@kernel
def left_chord(x, x0, x_end, w, slack):
    """True if some free particle (w > 0) is farther than ``slack`` [m] from the chord
    x0 -> x_end its collider candidates were found for (``collider_candidates``): only then
    may the candidates miss a contact. A particle held by a contact stays near the chord's
    start and never triggers it."""
    for i in range(x.shape[0]):
        if not w[i] > 0.0:
            continue
        dx, dy, dz = x_end[i, 0] - x0[i, 0], x_end[i, 1] - x0[i, 1], x_end[i, 2] - x0[i, 2]
        rx, ry, rz = x[i, 0] - x0[i, 0], x[i, 1] - x0[i, 1], x[i, 2] - x0[i, 2]
        length2 = dx * dx + dy * dy + dz * dz
        f = (rx * dx + ry * dy + rz * dz) / length2 if length2 > 0.0 else 0.0
        f = min(max(f, 0.0), 1.0)
        d2 = (rx - f * dx) ** 2 + (ry - f * dy) ** 2 + (rz - f * dz) ** 2
        if d2 > slack * slack:
            return True
    return False


@kernel
def left_shared_motion(x, x0, allowance, displacement):
    """True if some particle's displacement since x0 differs from a displacement shared by
    all by more than its ``allowance`` (N,) [m] (``displacement`` (N, 3) scratch). Two
    particles' distance changes by at most the sum of their differences, so while this is
    False the rope-rope candidates (``segment_candidates``, found with reach = radius +
    allowance) hold every contact. A heap settling as a whole moves alike everywhere and
    does not trigger it. The shared displacement is the midrange, which minimises the
    largest difference."""
    low = np.full(3, np.inf)
    high = np.full(3, -np.inf)
    for i in range(x.shape[0]):
        for c in range(3):
            d = x[i, c] - x0[i, c]
            displacement[i, c] = d
            low[c] = min(low[c], d)
            high[c] = max(high[c], d)
    mx, my, mz = 0.5 * (low[0] + high[0]), 0.5 * (low[1] + high[1]), 0.5 * (low[2] + high[2])
    for i in range(x.shape[0]):
        d2 = ((displacement[i, 0] - mx) ** 2 + (displacement[i, 1] - my) ** 2
              + (displacement[i, 2] - mz) ** 2)
        if d2 > allowance[i] * allowance[i]:
            return True
    return False


@kernel
def segment_reach(x, v, w, pin_velocity, radius, slack, gravity, remaining, h, edges):
    """Reach of each particle for ``segment_candidates`` over the next stretch of the frame.

    The stretch (horizon) is the rest of the frame, shortened where ropes move fast against
    each other (landing, a whip) so that the 90th percentile of relative motion stays within
    2 r, but never below one substep h [s]: the broad phase is then redone after it.
    allowance = slack + |v - v_shared| horizon (+ g horizon^2 / 2 for pinned particles,
    which do not fall with the others), reach = radius + allowance. Returns (reach,
    allowance, grid cell [m], horizon [s])."""
    n = x.shape[0]
    shared = np.zeros(3)
    free = 0
    for i in range(n):
        if w[i] > 0.0:
            free += 1
            for c in range(3):
                shared[c] += v[i, c]
    if free:
        shared /= free
    relative = np.empty(n)
    for i in range(n):
        d2 = 0.0
        for c in range(3):
            velocity = v[i, c] if w[i] > 0.0 else pin_velocity[i, c]
            d2 += (velocity - shared[c]) ** 2
        relative[i] = math.sqrt(d2)
    fast = np.percentile(relative, 90.0) if n else 0.0
    typical = np.median(radius) if n else 0.0
    horizon = remaining
    if fast * remaining > 2.0 * typical:
        horizon = min(remaining, max(h, 2.0 * typical / fast))
    rise = 0.5 * math.sqrt(gravity[0] ** 2 + gravity[1] ** 2 + gravity[2] ** 2) * horizon ** 2
    allowance = np.empty(n)
    reach = np.empty(n)
    for i in range(n):
        allowance[i] = slack[i] + relative[i] * horizon + (0.0 if w[i] > 0.0 else rise)
        reach[i] = radius[i] + allowance[i]
    m = edges.shape[0]
    extent = np.empty(m)
    for e in range(m):
        a, b = edges[e, 0], edges[e, 1]
        longest = 0.0
        for c in range(3):
            longest = max(longest, abs(x[a, c] - x[b, c]))
        extent[e] = longest + 2.0 * max(reach[a], reach[b])
    cell = max(np.median(extent), 1e-4) if m else 1.0
    return reach, allowance, cell, horizon
