"""Blender's loop triangles of a mesh of triangles and quads, made from its corners and
positions in numpy instead of read through RNA (about 140 ns a triangle: 23 ms a frame for a
deforming 159,000-triangle collider).

Blender cuts a quad (corners 0 1 2 3) on its 0-2 diagonal, into (0 1 2) (0 2 3), unless the
quad is folded or concave so that this diagonal lies outside it; then on 1-3, into (0 1 3)
(1 2 3) (``mesh_tessellate.cc``). It decides that with one of two tests, depending on whether
the face normals happen to be cached: the sign of (d12 x d13) . (d14 x d13)
(``is_quad_flip_v3_first_third_fast``), or on which side of the diagonal's line, in the
face's plane, corners 1 and 3 lie (``is_quad_flip_v3_first_third_fast_with_normal``), in
single precision. Both are computed here in double precision, and a quad's cut is taken only
when the two agree with a margin far above single precision's rounding at the mesh's scale;
the other quads (folded so that the tests disagree, or too close to call) are left for the
caller to ask Blender about, one by one, and a mesh with a face of more corners is read
whole. Triangles come in Blender's order: by face, a quad's two in turn.
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
    None for a mesh with a face of more corners."""
    count = len(triangle_faces)
    if count == 0:
        return np.zeros((0, 3), dtype=np.int32), np.zeros(0, dtype=np.int64)
    sizes = np.bincount(triangle_faces) + 2
    if sizes.max() > 4 or int(sizes.sum()) != len(corners):
        return None
    starts = np.cumsum(sizes) - sizes
    first = np.cumsum(sizes - 2) - (sizes - 2)  # each face's first triangle
    triangles = np.empty((count, 3), dtype=np.int32)
    three = sizes == 3
    triangles[first[three]] = corners[starts[three][:, None] + np.arange(3)]
    four = sizes == 4
    quads = corners[starts[four][:, None] + np.arange(4)]
    flip, sure = _flips(np.asarray(positions, dtype=np.float64).reshape(-1, 3), quads)
    rows = first[four]
    flipped = flip[:, None]
    triangles[rows] = np.where(flipped, quads[:, [0, 1, 3]], quads[:, [0, 1, 2]])
    triangles[rows + 1] = np.where(flipped, quads[:, [1, 2, 3]], quads[:, [0, 2, 3]])
    return triangles, rows[~sure]


def _flips(positions: np.ndarray, quads: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Whether Blender cuts each quad (Q, 4) on its 1-3 diagonal, (Q,) bool, and whether that
    is certain (Q,) bool: both tests agree, each by a clear margin
    (``kernels_geometry.quad_cuts``)."""
    # numba: imported here, at the first deforming collider, after the preparation loaded it
    from ..core.contacts.kernels_geometry import quad_cuts

    flip = np.zeros(len(quads), dtype=np.uint8)
    sure = np.zeros(len(quads), dtype=np.uint8)
    if len(quads):
        scale = float(np.abs(positions).max(initial=0.0))
        quad_cuts(positions, np.ascontiguousarray(quads, dtype=np.int64),
                  SAFETY * SINGLE * scale, flip, sure)
    return flip.astype(bool), sure.astype(bool)
