"""Blender's loop triangles of a mesh of triangles and quads, made from its corners and
positions (one numba pass, 3 ms at 159,000 triangles) instead of read through RNA (about
140 ns a triangle: 23 ms a frame for a deforming 159,000-triangle collider).

Blender cuts a quad (corners 0 1 2 3) on its 0-2 diagonal, into (0 1 2) (0 2 3), unless the
quad is folded or concave so that this diagonal lies outside it; then on 1-3, into (0 1 3)
(1 2 3) (``mesh_tessellate.cc``). It decides that with one of two tests, depending on whether
the face normals happen to be cached: the sign of (d12 x d13) . (d14 x d13)
(``is_quad_flip_v3_first_third_fast``), or on which side of the diagonal's line, in the
face's plane, corners 1 and 3 lie (``is_quad_flip_v3_first_third_fast_with_normal``), in
single precision. Both are computed here in double precision (``quad_cuts``), and a quad's
cut is taken only when the two agree with a margin far above single precision's rounding at
the mesh's scale; the other quads (folded so that the tests disagree, or too close to call)
are left for the caller to ask Blender about, one by one, and a mesh with a face of more
corners is read whole. Triangles come in Blender's order: by face, a quad's two in turn.
"""

from __future__ import annotations

import numpy as np

SINGLE = 2.0 ** -24
"""Single precision's unit roundoff."""

SAFETY = 256.0
"""How many roundings of the mesh's largest coordinate a test must clear to be trusted."""


def quad_triangles(positions: np.ndarray, corners: np.ndarray,
                   triangle_faces: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """The loop triangles int32 (T, 3) of a mesh whose faces have 3 or 4 corners, from its
    object-space ``positions`` float32 (V, 3) or (3 V,), its corners' vertices ``corners``
    int32 (L,) (``.corner_vert``, face by face) and each loop triangle's face
    ``triangle_faces`` int32 (T,) (``loop_triangle_polygons``); with the first triangles
    (K,) of the quads whose cut is not certain (their two rows must be asked of Blender).
    None for a mesh with a face of more corners (one numba pass:
    ``kernels_geometry.quad_tessellation``)."""
    # numba: imported here, at the first deforming collider, after the preparation loaded it
    from ...core.contacts.kernels_geometry import quad_tessellation

    points = np.asarray(positions, dtype=np.float64).reshape(-1, 3)
    scale = float(np.abs(points).max(initial=0.0))
    triangles, unsure, ok = quad_tessellation(
        points, np.ascontiguousarray(corners, dtype=np.int64),
        np.ascontiguousarray(triangle_faces, dtype=np.int64), SAFETY * SINGLE * scale)
    return (triangles, unsure) if ok else None
