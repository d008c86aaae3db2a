"""numba kernels of a collider soup's rows: the triangles the ropes can reach, kept up to date.

A moving collider's contact scene is only ever read at the triangles a particle's search
returns: its corners at every substep, face and pseudo-normals, motion. And a search returns
only triangles whose box over the frame overlaps the particle's box. So ``scene.MeshScene``
puts in its broad-phase grid only the triangles near the ropes (``region_rows``), and makes
the other tables only for the triangles the searches returned (``new_rows``, ``make_rows``;
pseudo-normals over their ``one_ring``), with the very arithmetic the whole mesh would get:
the contacts are the same to the bit, and a rope on a character-sized mesh pays for the hand
it hangs from, not for the body.
"""

from __future__ import annotations

import numpy as np

from ..jit import kernel
from .kernels_collider import face_normal
from .kernels_geometry import triangle_summaries as summaries


@kernel
def region_rows(vertices, vertices_end, triangles, triangle_collider, params, lo, hi):
    """The triangles of a soup moving from ``vertices`` to ``vertices_end`` (V, 3) [m] whose box
    over the frame, grown by their collider's thickness params[c, 0] [m] (``triangle_grid``'s
    t_lo, t_hi, computed alike), overlaps the box [lo, hi] (3,) [m]: their ids in increasing
    order, and their largest extent along an axis at the start (K,) [m]."""
    count = triangles.shape[0]
    kept = np.empty(count, dtype=np.int64)
    extent = np.empty(count)
    kept_count = 0
    for t in range(count):
        grow = params[triangle_collider[t], 0]
        overlaps = True
        for c in range(3):
            low = np.inf
            high = -np.inf
            for k in range(3):
                vertex = triangles[t, k]
                low = min(low, vertices[vertex, c], vertices_end[vertex, c])
                high = max(high, vertices[vertex, c], vertices_end[vertex, c])
            if not (low - grow <= hi[c] and lo[c] <= high + grow):
                overlaps = False
                break
        if overlaps:
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
    count = 0
    for index in range(rows.shape[0]):
        for k in range(3):
            vertex = triangles[rows[index], k]
            for entry in range(vertex_start[vertex], vertex_start[vertex + 1]):
                t = vertex_triangles[entry]
                if not seen[t]:
                    seen[t] = 1
                    if count == found.shape[0]:
                        grown = np.empty(2 * count, dtype=np.int64)
                        grown[:count] = found
                        found = grown
                    found[count] = t
                    count += 1
    ring = np.sort(found[:count])
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
