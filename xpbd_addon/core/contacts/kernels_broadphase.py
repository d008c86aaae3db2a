"""numba broad phase of the collider contacts: which triangles to test; the hashed grid.

Run at the start of a frame, and again only for the particles that stray from their
predicted path (``contacts.FrameContacts``); the narrow phase in ``kernels_contact`` runs
every substep on what this finds. Collider triangles are swept over the frame (start and end
positions) and put in a hashed uniform grid (``triangle_grid``, kept while the colliders do
not move); each particle queries the cells along the chord of its predicted path, grown by
radius + margin, and keeps the triangles that chord comes within reach of. The rope-rope
broad phase (``kernels_segments``) uses the same grid. Cost: O(particles + triangles + box
overlaps), not particles x triangles. Everything runs in a fixed order on one thread, so
runs are bit-identical.
"""

from __future__ import annotations

import math

import numpy as np

from ..jit import inline_kernel, kernel
from .kernels_arrays import doubled
from .kernels_geometry import closest_on_triangle


@kernel
def cell_hash(i, j, k, mask):
    return ((i * 73856093) ^ (j * 19349663) ^ (k * 83492791)) & mask


@kernel
def cell_span(lo, hi, inverse_cell):
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
        cells = cell_span(lo[i], hi[i], inverse_cell)[6]
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
        i0, j0, k0, i1, j1, k1, cells = cell_span(lo[item], hi[item], inverse_cell)
        if cells > max_cells:
            oversize[o] = item
            o += 1
            continue
        for i in range(i0, i1 + 1):
            for j in range(j0, j1 + 1):
                for k in range(k0, k1 + 1):
                    keys[e] = cell_hash(i, j, k, mask)
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
    """True if some midpoint of the ``samples`` equal pieces of the chord (x0 + f d, f in
    [0, 1]) is within ``limit`` of triangle (i0, i1, i2) of ``vertices`` (the caller adds
    half a piece's length to the reach: every point of the chord is that close to a
    midpoint)."""
    for k in range(samples):
        f = (k + 0.5) / samples
        px, py, pz = x0 + f * dx, y0 + f * dy, z0 + f * dz
        qx, qy, qz, _, _, _, _ = closest_on_triangle(
            px, py, pz, vertices[i0, 0], vertices[i0, 1], vertices[i0, 2], vertices[i1, 0],
            vertices[i1, 1], vertices[i1, 2], vertices[i2, 0], vertices[i2, 1],
            vertices[i2, 2])
        if (px - qx) ** 2 + (py - qy) ** 2 + (pz - qz) ** 2 <= limit * limit:
            return True
    return False


@inline_kernel
def swept_box(vertices, vertices_end, triangles, t, grow, lo, hi):
    """Triangle t's box over a frame moving from ``vertices`` to ``vertices_end`` (V, 3) [m],
    grown by ``grow`` [m], into rows t of lo, hi (T, 3); returns its corners' largest
    displacement over the frame [m]. Inlined: called once per triangle as a function of its
    own, it cost a moving collider of 80,802 triangles 2.26 ms a frame (0.47 ms inlined);
    the box is gathered in locals and written once (1.51 ms of the 2.26 without inlining)."""
    lo0 = lo1 = lo2 = np.inf
    hi0 = hi1 = hi2 = -np.inf
    motion2 = 0.0
    for k in range(3):
        vertex = triangles[t, k]
        a0, a1, a2 = vertices[vertex, 0], vertices[vertex, 1], vertices[vertex, 2]
        b0, b1, b2 = vertices_end[vertex, 0], vertices_end[vertex, 1], vertices_end[vertex, 2]
        lo0, hi0 = min(lo0, a0, b0), max(hi0, a0, b0)
        lo1, hi1 = min(lo1, a1, b1), max(hi1, a1, b1)
        lo2, hi2 = min(lo2, a2, b2), max(hi2, a2, b2)
        # (sqrt is monotonic and correctly rounded: the largest root is the root of the
        # largest square, bit for bit)
        motion2 = max(motion2, (b0 - a0) * (b0 - a0) + (b1 - a1) * (b1 - a1)
                      + (b2 - a2) * (b2 - a2))
    lo[t, 0], lo[t, 1], lo[t, 2] = lo0 - grow, lo1 - grow, lo2 - grow
    hi[t, 0], hi[t, 1], hi[t, 2] = hi0 + grow, hi1 + grow, hi2 + grow
    return math.sqrt(motion2)


@kernel
def triangle_grid(vertices, vertices_end, triangles, triangle_thickness, cell, max_cells):
    """The swept triangles of one frame in a hashed grid of cell ``cell`` [m]: their boxes
    over the frame grown by the thickness [m] (t_lo, t_hi (T, 3)), slack (T,) [m] thickness +
    largest vertex motion, and ``build_grid``'s (start, ids, oversize, mask). Computed once
    per frame (or once for a static collider) and queried by ``collider_candidates``."""
    m = triangles.shape[0]
    t_lo = np.empty((m, 3))
    t_hi = np.empty((m, 3))
    slack = np.empty(m)
    for t in range(m):
        grow = triangle_thickness[t]
        slack[t] = swept_box(vertices, vertices_end, triangles, t, grow, t_lo, t_hi) + grow
    start, ids, oversize, mask = build_grid(t_lo, t_hi, 1.0 / cell, max_cells)
    return t_lo, t_hi, slack, start, ids, oversize, mask


@kernel
def collider_candidates(particles, chords, mesh, universe, grid, cell, max_cells, marker, mark):
    """Candidate triangles of the ``particles`` (K,) (ids) for (the rest of) one frame.

    ``chords`` (``groups.chords``): x0 (N, 3) [m] particles now; x_end (N, 3) [m] where their
    predicted path takes them by the end of the frame (its chord); reach (N,) [m] radius +
    margin + the path's bulge off the chord (0 = never collides, e.g. pinned); ``mesh``
    (``groups.mesh``): its vertices (V, 3) [m] at the start of the frame and triangles (T, 3);
    universe (U,) the ids of the triangles the grid holds (all, or those near the ropes:
    ``MeshScene.rows``); ``grid`` the swept triangles' grid of ``triangle_grid``
    (``groups.grid``, rows and ids by triangle id) with its cell [m]; max_cells the most cells a
    box may cover before it is handled by brute force (a huge ground triangle). Each particle
    queries the cells of its path's box, and a pair is kept if the midpoint of some piece of the
    chord (pieces no longer than ``reach``) comes within reach + the triangle's slack + half a
    piece of the triangle at the start of the frame. As long as a particle stays within its
    margin of its predicted path (``left_chord``), every contact it can have is in
    the list. Returns CSR over ``particles``: (offsets (K + 1,), triangle ids, each list in
    increasing order).

    ``marker`` (T,) int64, kept by the caller with entries below ``mark``: which triangle a
    query has seen (mark + its row); the caller then raises mark by K (no (T,) fill per
    call: a refresh for one particle costs what it costs)."""
    x0, x_end, reach = chords
    vertices, vertices_end, triangles, triangle_collider = mesh
    t_lo, t_hi, slack, start, ids, oversize, mask = grid
    n = particles.shape[0]
    inverse_cell = 1.0 / cell
    offsets = np.zeros(n + 1, dtype=np.int64)
    candidates = np.empty(max(4 * n, 64), dtype=np.int64)
    count = np.int64(0)  # not a literal 0: see kernels_arrays
    p_lo = np.empty(3)
    p_hi = np.empty(3)
    for index in range(n):
        offsets[index] = count
        p = particles[index]
        r = reach[p]
        if not r > 0.0:
            continue
        for c in range(3):
            p_lo[c] = min(x0[p, c], x_end[p, c]) - r
            p_hi[c] = max(x0[p, c], x_end[p, c]) + r
        sx, sy, sz = x0[p, 0], x0[p, 1], x0[p, 2]
        dx, dy, dz = x_end[p, 0] - sx, x_end[p, 1] - sy, x_end[p, 2] - sz
        length = math.sqrt(dx * dx + dy * dy + dz * dz)
        samples = min(max(np.int64(math.ceil(length / r)), 1), 64)
        base = r + 0.5 * length / samples  # a piece's midpoint is that close to all of it
        i0, j0, k0, i1, j1, k1, cells = cell_span(p_lo, p_hi, inverse_cell)
        brute = cells > max_cells
        scan = universe.shape[0] if brute else np.int64(cells)
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
                    t = oversize[entry]
                elif brute:
                    t = universe[entry]
                else:
                    t = ids[entry]
                if marker[t] == mark + index:
                    continue
                marker[t] = mark + index
                if not (p_lo[0] <= t_hi[t, 0] and t_lo[t, 0] <= p_hi[0]
                        and p_lo[1] <= t_hi[t, 1] and t_lo[t, 1] <= p_hi[1]
                        and p_lo[2] <= t_hi[t, 2] and t_lo[t, 2] <= p_hi[2]):
                    continue
                if _chord_near(sx, sy, sz, dx, dy, dz, samples, base + slack[t], vertices,
                               triangles[t, 0], triangles[t, 1], triangles[t, 2]):
                    if count == candidates.shape[0]:
                        candidates = doubled(candidates, count)
                    candidates[count] = t
                    count += 1
        # in increasing order (a short list: insertion sort): the narrow phase then gives the
        # same result for any list holding the triangles within reach, fresh or kept
        for k in range(offsets[index] + 1, count):
            t = candidates[k]
            j = k - 1
            while j >= offsets[index] and candidates[j] > t:
                candidates[j + 1] = candidates[j]
                j -= 1
            candidates[j + 1] = t
    offsets[n] = count
    return offsets, candidates[:count].copy()


@kernel
def left_chord(x, x0, x_end, w, slack, strayed):
    """How many free particles (w > 0) are farther than ``slack`` [m] from the chord
    x0 -> x_end their collider candidates were found for (``collider_candidates``), flagged
    in ``strayed`` (N,) (set to 1, others 0): only their candidates may miss a contact. A
    particle held by a contact stays near the chord's start and never strays. Without a
    branch, on flat views (x, x0, x_end C-contiguous): LLVM runs it 8 particles at a time."""
    count = 0
    p, a, b = x.reshape(-1), x0.reshape(-1), x_end.reshape(-1)
    limit = slack * slack
    for i in range(np.uint64(w.shape[0])):
        j = i * np.uint64(3)
        j1, j2 = j + np.uint64(1), j + np.uint64(2)
        dx, dy, dz = b[j] - a[j], b[j1] - a[j1], b[j2] - a[j2]
        rx, ry, rz = p[j] - a[j], p[j1] - a[j1], p[j2] - a[j2]
        length2 = dx * dx + dy * dy + dz * dz
        f = (rx * dx + ry * dy + rz * dz) / length2 if length2 > 0.0 else 0.0
        f = min(max(f, 0.0), 1.0)
        d2 = (rx - f * dx) ** 2 + (ry - f * dy) ** 2 + (rz - f * dz) ** 2
        away = w[i] > 0.0 and d2 > limit
        strayed[i] = 1 if away else 0
        count += 1 if away else 0
    return count


@kernel
def chord_rows(rows, x, x_from, from_start, velocity, acceleration, remaining, radius,
               margin, beyond, free, x0, x_end, reach):
    """The collider search of the particles ``rows`` (K,) along their predicted path over the
    ``remaining`` [s] of the frame, into x0, x_end (N, 3) [m] and reach (N,) [m].

    The path from x (N, 3) [m] keeps ``velocity`` and ``acceleration`` (N, 3): its end is
    x + v T + a T^2 / 2, its chord's reach radius + margin + beyond + the parabola's bulge
    |a| T^2 / 8 (0 for particles not ``free``). With ``from_start`` the chord starts at
    x_from (N, 3) [m], where the substep under way began, and its reach grows by how far x
    lies off it, so that the substep's own path is covered too; else it starts at x."""
    for index in range(rows.shape[0]):
        i = rows[index]
        a2 = 0.0
        for c in range(3):
            a2 += acceleration[i, c] * acceleration[i, c]
        bulge = 0.125 * math.sqrt(a2) * remaining * remaining
        r = radius[i] + margin + beyond + bulge
        for c in range(3):
            x_end[i, c] = (x[i, c] + velocity[i, c] * remaining
                           + 0.5 * acceleration[i, c] * remaining * remaining)
            x0[i, c] = x_from[i, c] if from_start else x[i, c]
        if from_start:
            length2 = 0.0
            along = 0.0
            for c in range(3):
                chord = x_end[i, c] - x0[i, c]
                length2 += chord * chord
                along += (x[i, c] - x0[i, c]) * chord
            f = min(max(along / length2 if length2 > 0.0 else 0.0, 0.0), 1.0)
            off2 = 0.0
            for c in range(3):
                off = x[i, c] - x0[i, c] - f * (x_end[i, c] - x0[i, c])
                off2 += off * off
            r += math.sqrt(off2)
        reach[i] = r if free[i] else 0.0


@kernel
def restart_chords(rows, x, x0, cache_triangle, unknown):
    """After a search: the chords of ``rows`` (K,) start at x now (the stray test's chord),
    and their nearest triangle is unknown (``cache_triangle`` = ``unknown``)."""
    for index in range(rows.shape[0]):
        i = rows[index]
        for c in range(3):
            x0[i, c] = x[i, c]
        cache_triangle[i] = unknown


@kernel
def append_lists(only, offsets, found, spans, buffer, used):
    """The new candidate lists of the particles ``only`` (K,) (CSR ``offsets`` (K + 1,),
    ``found``) appended to ``buffer`` after its first ``used`` entries (grown to twice its
    size when full), their ``spans`` (N, 2) pointed there. Returns (buffer, used, change of
    the live entry count)."""
    need = used + found.shape[0]
    if need > buffer.shape[0]:
        grown = np.empty(max(need, 2 * buffer.shape[0]), dtype=np.int64)
        for k in range(used):  # (loops: see kernels_arrays)
            grown[k] = buffer[k]
        buffer = grown
    for k in range(found.shape[0]):
        buffer[used + k] = found[k]
    change = found.shape[0]
    for index in range(only.shape[0]):
        i = only[index]
        change -= spans[i, 1] - spans[i, 0]
        spans[i, 0] = offsets[index] + used
        spans[i, 1] = offsets[index + 1] + used
    return buffer, need, change
