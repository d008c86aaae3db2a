"""numba kernels of a collider soup's rows: the triangles the ropes can reach, kept up to date.

A moving collider's contact scene is only ever read at the triangles a particle's search
returns: its corners at every substep, face and pseudo-normals, motion. And a search returns
only triangles whose box over the frame overlaps the particle's box. So ``scene.MeshScene``
puts in its broad-phase grid only the triangles on the cells its searches' boxes cover
(``mark_cells``, ``cells_cover``, ``region_rows``), and makes
the other tables only for the triangles the searches returned (``new_rows``, ``make_rows``;
pseudo-normals over their ``one_ring``), with the very arithmetic the whole mesh would get:
the contacts are the same to the bit, and a rope on a character-sized mesh pays for the hand
it hangs from, not for the body.
"""

from __future__ import annotations

import numpy as np

from ..jit import kernel
from .kernels_arrays import doubled, heapsort
from .kernels_broadphase import cell_hash, cell_span, swept_box
from .kernels_collider import face_normal
from .kernels_geometry import triangle_summaries as summaries


@kernel
def _slot(keys, used, i, j, k):
    """Where cell (i, j, k) is in the open-addressing set (keys (S, 3), used (S,)), or the free
    slot it would take."""
    mask = keys.shape[0] - 1
    h = cell_hash(i, j, k, mask)
    while used[h] and not (keys[h, 0] == i and keys[h, 1] == j and keys[h, 2] == k):
        h = (h + 1) & mask
    return h


@kernel
def _particle_box(x, x_end, reach, p, grow, lo, hi):
    """A particle's search box (``collider_candidates``': its chord grown by its reach), grown
    by ``grow`` [m] more, into lo, hi (3,)."""
    for c in range(3):
        lo[c] = min(x[p, c], x_end[p, c]) - reach[p] - grow
        hi[c] = max(x[p, c], x_end[p, c]) + reach[p] + grow


@kernel
def mark_cells(particles, x, x_end, reach, grow, inverse_cell, keys, used, count, limit):
    """Add to the cell set (``_slot``, ``count`` cells in it) the cells of the search boxes of
    the ``particles`` (K,) with reach > 0, grown by ``grow`` [m]. Returns the new count; -1
    when the set would be more than half full (the caller makes it bigger and adds again),
    -2 when a box covers more than ``limit`` cells (a very fast particle)."""
    lo = np.empty(3)
    hi = np.empty(3)
    for index in range(particles.shape[0]):
        p = particles[index]
        if not reach[p] > 0.0:
            continue
        _particle_box(x, x_end, reach, p, grow, lo, hi)
        i0, j0, k0, i1, j1, k1, cells = cell_span(lo, hi, inverse_cell)
        if cells > limit:
            return -2
        for i in range(i0, i1 + 1):
            for j in range(j0, j1 + 1):
                for k in range(k0, k1 + 1):
                    h = _slot(keys, used, i, j, k)
                    if not used[h]:
                        if 2 * (count + 1) > keys.shape[0]:
                            return -1
                        used[h] = 1
                        keys[h, 0], keys[h, 1], keys[h, 2] = i, j, k
                        count += 1
    return count


@kernel
def cells_cover(particles, x, x_end, reach, inverse_cell, keys, used, limit):
    """Whether every cell of every search box of the ``particles`` (K,) with reach > 0 is in
    the cell set (a box of more than ``limit`` cells: not)."""
    lo = np.empty(3)
    hi = np.empty(3)
    for index in range(particles.shape[0]):
        p = particles[index]
        if not reach[p] > 0.0:
            continue
        _particle_box(x, x_end, reach, p, 0.0, lo, hi)
        i0, j0, k0, i1, j1, k1, cells = cell_span(lo, hi, inverse_cell)
        if cells > limit:
            return False
        for i in range(i0, i1 + 1):
            for j in range(j0, j1 + 1):
                for k in range(k0, k1 + 1):
                    if not used[_slot(keys, used, i, j, k)]:
                        return False
    return True


@kernel
def swept_boxes(vertices, vertices_end, triangles, thickness, lo, hi):
    """Each triangle's box over a frame moving from ``vertices`` to ``vertices_end`` (V, 3)
    [m], grown by ``thickness`` [m], into lo, hi (T, 3): ``triangle_grid``'s t_lo, t_hi
    (``swept_box``; made once a frame for a moving collider, for every rope's region)."""
    for t in range(triangles.shape[0]):
        swept_box(vertices, vertices_end, triangles, t, thickness, lo, hi)


@kernel
def region_rows(box_lo, box_hi, vertices, triangles, inverse_cell, keys, used, low_cell,
                high_cell, limit):
    """The triangles whose box over the frame (``swept_boxes`` (T, 3) each) covers a cell of
    the set (``mark_cells``; its cells lie within low_cell..high_cell (3,) on each axis), or
    more than ``limit`` cells: their ids in increasing order, and their largest extent along
    an axis at the start (K,) [m], from ``vertices`` (V, 3) [m]. A search box's cells all in
    the set, a triangle whose box overlaps it shares one of them: it is kept."""
    count = triangles.shape[0]
    kept = np.empty(count, dtype=np.int64)
    extent = np.empty(count)
    kept_count = 0
    for t in range(count):
        i0, j0, k0, i1, j1, k1, cells = cell_span(box_lo[t], box_hi[t], inverse_cell)
        if (i1 < low_cell[0] or i0 > high_cell[0] or j1 < low_cell[1] or j0 > high_cell[1]
                or k1 < low_cell[2] or k0 > high_cell[2]):
            continue
        found = cells > limit
        i = i0
        while not found and i <= i1:
            for j in range(j0, j1 + 1):
                for k in range(k0, k1 + 1):
                    if used[_slot(keys, used, i, j, k)]:
                        found = True
            i += 1
        if found:
            largest = 0.0
            for c in range(3):
                a = vertices[triangles[t, 0], c]
                b = vertices[triangles[t, 1], c]
                d = vertices[triangles[t, 2], c]
                largest = max(largest, max(a, b, d) - min(a, b, d))
            kept[kept_count] = t
            extent[kept_count] = largest
            kept_count += 1
    return kept[:kept_count].copy(), extent[:kept_count].copy()


@kernel
def new_rows(candidates, made):
    """The triangles among ``candidates`` (K,) whose rows are not made yet (``made`` (T,)
    uint8 0), each once, now flagged made."""
    found = np.empty(candidates.shape[0], dtype=np.int64)
    count = 0
    for index in range(candidates.shape[0]):
        t = candidates[index]
        if not made[t]:
            made[t] = 1
            found[count] = t
            count += 1
    return found[:count].copy()


@kernel
def one_ring(rows, triangles, vertex_start, vertex_triangles, seen):
    """The triangles that share a vertex with the triangles ``rows`` (K,) (a superset of them),
    in increasing order: the pseudo-normals at their vertices and edges (``mesh_normals``)
    sum over exactly these, in the whole mesh's order. ``vertex_start`` (V + 1,),
    ``vertex_triangles``: each vertex's triangles (CSR); ``seen`` (T,) uint8 zeros, left
    zero."""
    found = np.empty(16 * rows.shape[0] + 16, dtype=np.int64)
    count = np.int64(0)  # not a literal 0: see kernels_arrays
    for index in range(rows.shape[0]):
        for k in range(3):
            vertex = triangles[rows[index], k]
            for entry in range(vertex_start[vertex], vertex_start[vertex + 1]):
                t = vertex_triangles[entry]
                if not seen[t]:
                    seen[t] = 1
                    if count == found.shape[0]:
                        found = doubled(found, count)
                    found[count] = t
                    count += 1
    ring = found[:count].copy()
    heapsort(ring)
    for index in range(count):
        seen[ring[index]] = 0
    return ring


@kernel
def corners_at(rows, corners_start, corners_end, fraction, corners, normal):
    """Rows ``rows`` (K,) of the (T, 9) corner table at ``fraction`` of the frame,
    (end - start) * fraction + start [m] (numpy's order of operations over the whole table),
    and their unit face normals (T, 3) (``kernels_collider.face_normals``)."""
    for index in range(rows.shape[0]):
        t = rows[index]
        for k in range(9):
            corners[t, k] = (corners_end[t, k] - corners_start[t, k]) * fraction \
                + corners_start[t, k]
        face_normal(corners, t, normal)


@kernel
def make_rows(rows, vertices, vertices_end, triangles, moving, fraction, corners_start,
              corners_end, corners, normal, frame_motion, moves, extent):
    """The rows ``rows`` (K,) of a soup's tables: corners (T, 9) [m] at the start and (if
    ``moving``) the end of the frame from ``vertices``, ``vertices_end`` (V, 3) [m], the
    corners now (the end's while ``fraction`` is NaN, else at that fraction, ``corners_at``)
    and their unit normals (T, 3); and ``triangle_summaries``' centroid motion (T, 3) [m],
    moving flags (T,) and extent (K,) [m] (by row index)."""
    for index in range(rows.shape[0]):
        t = rows[index]
        for k in range(3):
            vertex = triangles[t, k]
            for c in range(3):
                corners_start[t, 3 * k + c] = vertices[vertex, c]
                if moving:
                    corners_end[t, 3 * k + c] = vertices_end[vertex, c]
    if moving and fraction == fraction:
        corners_at(rows, corners_start, corners_end, fraction, corners, normal)
    else:
        for index in range(rows.shape[0]):
            t = rows[index]
            if moving:
                for k in range(9):
                    corners[t, k] = corners_end[t, k]
            face_normal(corners, t, normal)
    summaries(rows, vertices, vertices_end, triangles, extent, frame_motion, moves)


@kernel
def copy_cells(old_keys, old_used, keys, used):
    """The cells of one set (``_slot``) into another, bigger and empty."""
    for h in range(old_keys.shape[0]):
        if old_used[h]:
            slot = _slot(keys, used, old_keys[h, 0], old_keys[h, 1], old_keys[h, 2])
            used[slot] = 1
            keys[slot, 0], keys[slot, 1], keys[slot, 2] = (old_keys[h, 0], old_keys[h, 1],
                                                          old_keys[h, 2])
