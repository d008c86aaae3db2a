"""numba kernels of the segment-edge contacts' broad phase: which collider edges each rope
segment is tested against (``edges.EdgeContacts.search``; the contacts themselves are
``kernels_edges``'). Only edges where the surface bends hold a segment (``edge_usable``):
a flat diagonal or a valley lies behind the faces beside it.
"""

from __future__ import annotations

import math

import numpy as np

from ..jit import kernel
from .kernels_arrays import doubled, heapsort
from .kernels_broadphase import cell_hash, cell_span
from .kernels_edges import closest_params
from .kernels_geometry import cross3

BENT = 1e-3
"""An edge bends where the sine of the angle between its faces exceeds this (0.06 degrees);
below, it is flat and no candidate."""


@kernel
def _opposite(triangles, face, c, d):
    """The corner of triangle ``face`` that is not on edge cd."""
    for k in range(3):
        corner = triangles[face, k]
        if corner != c and corner != d:
            return corner
    return triangles[face, 0]


@kernel
def _bends(positions, triangles, face, other, c, d, closed):
    """Whether the surface bends at edge cd between triangles ``face`` and ``other``:
    convex (a closed mesh: the far corner of ``other`` lies behind ``face``), or bent either
    way (a shell), by more than ``BENT``."""
    i, j, k = triangles[face, 0], triangles[face, 1], triangles[face, 2]
    nx, ny, nz = cross3(positions[j, 0] - positions[i, 0], positions[j, 1] - positions[i, 1],
                        positions[j, 2] - positions[i, 2], positions[k, 0] - positions[i, 0],
                        positions[k, 1] - positions[i, 1], positions[k, 2] - positions[i, 2])
    o = _opposite(triangles, other, c, d)
    ox, oy, oz = (positions[o, 0] - positions[c, 0], positions[o, 1] - positions[c, 1],
                  positions[o, 2] - positions[c, 2])
    height = nx * ox + ny * oy + nz * oz
    # the far corner's offset across the edge (not along it: a long thin face is no flatter)
    ex, ey, ez = (positions[d, 0] - positions[c, 0], positions[d, 1] - positions[c, 1],
                  positions[d, 2] - positions[c, 2])
    length2 = ex * ex + ey * ey + ez * ez
    if length2 > 0.0:
        along = (ox * ex + oy * ey + oz * ez) / length2
        ox, oy, oz = ox - along * ex, oy - along * ey, oz - along * ez
    scale = BENT * math.sqrt((nx * nx + ny * ny + nz * nz) * (ox * ox + oy * oy + oz * oz))
    return height < -scale if closed else abs(height) > scale


@kernel
def edge_usable(vertices, vertices_end, triangles, edge_vertices, edge_faces, closed, e):
    """Whether collider edge e can hold a segment (see the module): a border or non-manifold
    edge, or one where the surface bends (``_bends``) at the start or the end of the frame.
    ``closed`` is the edge's collider's flag."""
    f1, f2 = edge_faces[e, 0], edge_faces[e, 1]
    if f2 < 0:
        return True
    c, d = edge_vertices[e, 0], edge_vertices[e, 1]
    return (_bends(vertices, triangles, f1, f2, c, d, closed)
            or _bends(vertices_end, triangles, f1, f2, c, d, closed))


@kernel
def segment_edges(segments, edges, chords, mesh, mesh_edges, params, universe, grid, cell,
                  max_cells, marker, mark):
    """Candidate collider edges of the rope ``segments`` (K,) (rows of ``edges`` (M, 2)) for
    (the rest of) one frame, through the triangles' grid of ``kernels_broadphase``.

    A segment's box holds the ``chords`` (``groups.chords``) x0 -> x_end (N, 3) [m] of both
    its particles' collider searches grown by the larger of their ``reach`` (N,) [m]
    (radius + margin + bulge), in the colliders' ``mesh`` and ``mesh_edges`` (``groups``,
    with ``params`` (C, 4) and the ``grid`` of ``universe`` as ``collider_candidates``): a
    point of the segment is a mix of its two ends, each within its own box while it stays
    within its margin of its chord, so the box holds the whole segment. An edge of a
    triangle in the box's cells is kept if its own box over the frame, grown by its
    collider's thickness, overlaps, if it comes within reach of the segment as it is now
    (the farther of its ends' chord + reach, plus the edge's motion and thickness), and if
    it can hold a segment (``edge_usable``). ``marker``
    (E,) int64 with entries below ``mark`` (raised by K by the caller). Returns CSR over
    ``segments``: (offsets (K + 1,), edge ids, each list in increasing order: the contacts
    then give the same bits for any list that holds the edges within reach)."""
    x0, x_end, reach = chords
    vertices, vertices_end, triangles, triangle_collider = mesh
    triangle_edges, edge_vertices, edge_faces = mesh_edges
    t_lo, t_hi, slack, start, ids, oversize, mask = grid
    n = segments.shape[0]
    inverse_cell = 1.0 / cell
    offsets = np.zeros(n + 1, dtype=np.int64)
    found = np.empty(max(4 * n, 64), dtype=np.int64)
    count = np.int64(0)  # not a literal 0: see kernels_arrays
    lo = np.empty(3)
    hi = np.empty(3)
    for index in range(n):
        offsets[index] = count
        m = segments[index]
        a, b = edges[m, 0], edges[m, 1]
        r = max(reach[a], reach[b])
        if not r > 0.0:
            continue
        chord_a = chord_b = 0.0
        for c in range(3):
            chord_a += (x_end[a, c] - x0[a, c]) ** 2
            chord_b += (x_end[b, c] - x0[b, c]) ** 2
        # how far a point of the segment can get from where it is now
        travel = max(math.sqrt(chord_a) + reach[a], math.sqrt(chord_b) + reach[b])
        for c in range(3):
            lo[c] = min(x0[a, c], x_end[a, c], x0[b, c], x_end[b, c]) - r
            hi[c] = max(x0[a, c], x_end[a, c], x0[b, c], x_end[b, c]) + r
        i0, j0, k0, i1, j1, k1, cells = cell_span(lo, hi, inverse_cell)
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
                if not (lo[0] <= t_hi[t, 0] and t_lo[t, 0] <= hi[0]
                        and lo[1] <= t_hi[t, 1] and t_lo[t, 1] <= hi[1]
                        and lo[2] <= t_hi[t, 2] and t_lo[t, 2] <= hi[2]):
                    continue
                row = triangle_collider[t]
                grow = params[row, 0]
                for side in range(3):
                    e = triangle_edges[t, side]
                    if marker[e] == mark + index:
                        continue
                    marker[e] = mark + index
                    c, d = edge_vertices[e, 0], edge_vertices[e, 1]
                    apart = False
                    for axis in range(3):
                        e_lo = min(vertices[c, axis], vertices_end[c, axis], vertices[d, axis],
                                   vertices_end[d, axis]) - grow
                        e_hi = max(vertices[c, axis], vertices_end[c, axis], vertices[d, axis],
                                   vertices_end[d, axis]) + grow
                        if e_hi < lo[axis] or hi[axis] < e_lo:
                            apart = True
                    if not apart:
                        # nearer: the segment now against the edge at the frame's start, each
                        # within how far its points can move (a point of the segment stays
                        # within the farther of its ends' chord + reach of where it is now)
                        s0, t0 = closest_params(
                            x0[b, 0] - x0[a, 0], x0[b, 1] - x0[a, 1], x0[b, 2] - x0[a, 2],
                            vertices[d, 0] - vertices[c, 0], vertices[d, 1] - vertices[c, 1],
                            vertices[d, 2] - vertices[c, 2], x0[a, 0] - vertices[c, 0],
                            x0[a, 1] - vertices[c, 1], x0[a, 2] - vertices[c, 2])
                        gap2 = 0.0
                        moves = 0.0
                        for axis in range(3):
                            gap = (x0[a, axis] + s0 * (x0[b, axis] - x0[a, axis])
                                   - vertices[c, axis] - t0 * (vertices[d, axis]
                                                               - vertices[c, axis]))
                            gap2 += gap * gap
                        for end in (c, d):
                            m2 = 0.0
                            for axis in range(3):
                                m2 += (vertices_end[end, axis] - vertices[end, axis]) ** 2
                            moves = max(moves, math.sqrt(m2))
                        limit = travel + moves + grow
                        apart = gap2 > limit * limit
                    if apart or not edge_usable(vertices, vertices_end, triangles,
                                                edge_vertices, edge_faces,
                                                params[row, 3] > 0.0, e):
                        continue
                    if count == found.shape[0]:
                        found = doubled(found, count)
                    found[count] = e
                    count += 1
        for k in range(offsets[index] + 1, count):  # (a short list: insertion sort)
            e = found[k]
            j = k - 1
            while j >= offsets[index] and found[j] > e:
                found[j + 1] = found[j]
                j -= 1
            found[j + 1] = e
    offsets[n] = count
    return offsets, found[:count].copy()


@kernel
def segments_of(particles, segment_start, segments, seen):
    """The segments (sorted ids) with an end among ``particles`` (K,), from the
    particle-to-segment table (``ContactTopology``); ``seen`` (M,) uint8 scratch, left
    zero."""
    count = 0
    for index in range(particles.shape[0]):
        i = particles[index]
        count += segment_start[i + 1] - segment_start[i]
    out = np.empty(count, dtype=np.int64)
    count = 0
    for index in range(particles.shape[0]):
        i = particles[index]
        for k in range(segment_start[i], segment_start[i + 1]):
            m = segments[k]
            if not seen[m]:
                seen[m] = 1
                out[count] = m
                count += 1
    out = out[:count].copy()
    heapsort(out)
    for k in range(count):
        seen[out[k]] = 0
    return out
