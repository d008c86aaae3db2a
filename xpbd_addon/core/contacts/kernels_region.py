"""numba kernels of a collider soup's rows: the triangles the ropes can reach, kept up to date.

A moving collider's contact scene (its corners at every substep, face and pseudo-normals, the
broad-phase grid) is only ever read at the triangles a particle's search can return, and a
search returns only triangles whose box over the frame overlaps the particle's box. So
``scene.MeshScene`` keeps these tables for the triangles near the ropes (``region_rows``),
with the very arithmetic the whole mesh would get: the contacts are the same to the bit,
and a rope on a character-sized mesh pays for the hand it hangs from, not for the body.
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
    t_lo, t_hi, computed alike), overlaps the box [lo, hi] (3,) [m]; and the triangles that
    share a vertex with them (their one-ring, a superset). Returns (kept, ring), triangle ids
    in increasing order. The pseudo-normals (``mesh_normals``) at the kept triangles' vertices
    and edges sum over the ring's triangles only, in the whole mesh's order: the same bits."""
    count = triangles.shape[0]
    kept = np.empty(count, dtype=np.int64)
    kept_count = 0
    marked = np.zeros(vertices.shape[0], dtype=np.uint8)
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
            kept[kept_count] = t
            kept_count += 1
            for k in range(3):
                marked[triangles[t, k]] = 1
    ring = np.empty(count, dtype=np.int64)
    ring_count = 0
    for t in range(count):
        if marked[triangles[t, 0]] or marked[triangles[t, 1]] or marked[triangles[t, 2]]:
            ring[ring_count] = t
            ring_count += 1
    return kept[:kept_count].copy(), ring[:ring_count].copy()


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
