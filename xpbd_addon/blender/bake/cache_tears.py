"""A torn rope's shape in a point cache (``bake_cache``): which curves and tube faces a frame
has once segments tore (``Object.xpbd.tear_force``, ``tears.py``).

Live, a torn curve keeps one spline and closes its bevel to nothing at the tear, and a torn
mesh hides the edge with a Geometry Nodes modifier; a cache file is read by other tools and by
Blender without the add-on, so there the rope is really cut: a curve becomes two curves, a
tube loses the faces of the torn segment. The topology changes only at the frames where
segments tore (Alembic and USD write each frame's topology; Blender's Mesh Sequence Cache
reads it). No bpy here.
"""

from __future__ import annotations

import numpy as np


def cut_after(edges: np.ndarray, torn: np.ndarray, count: int) -> np.ndarray:
    """For each of ``count`` points, whether the link to the next point along its spline or
    chain is torn: bool [count]. ``edges`` [E, 2] join points i and i + 1, or a cyclic
    spline's last point and its first (that link belongs to the last point); ``torn`` bool
    [E]."""
    cut = np.zeros(count, dtype=bool)
    a, b = edges[torn, 0], edges[torn, 1]
    cut[np.where(np.abs(a - b) == 1, np.minimum(a, b), np.maximum(a, b))] = True
    return cut


def curve_pieces(splines: list[tuple[int, int]], cyclic: np.ndarray, cut: np.ndarray
                 ) -> tuple[np.ndarray, list[int], list[bool]]:
    """The curves of splines (start, point count) cut where ``cut`` (``cut_after``) says:
    (point order: rope point ids in curve order [N], points per curve, cyclic per curve). An
    open spline falls apart at each cut; a cyclic one cut somewhere opens there (its points
    then start after the cut), and falls apart at its other cuts."""
    order: list[np.ndarray] = []
    sizes: list[int] = []
    closed: list[bool] = []
    for (start, n), loop in zip(splines, cyclic, strict=True):
        ids = np.arange(start, start + n)
        cuts = np.flatnonzero(cut[ids][: n if loop else n - 1])
        whole = not len(cuts)
        if loop and len(cuts):
            ids = np.roll(ids, -(int(cuts[-1]) + 1))  # open at the last cut
            cuts = (cuts[:-1] - cuts[-1] - 1) % n
        pieces = np.split(ids, np.sort(cuts) + 1) if len(cuts) else [ids]
        for piece in pieces:
            if len(piece):
                order.append(piece)
                sizes.append(len(piece))
                closed.append(bool(loop) and whole)
    if not order:
        return np.zeros(0, dtype=np.int64), [], []
    return np.concatenate(order), sizes, closed


def tube_faces_kept(chains: list[np.ndarray], cut: np.ndarray, sides: int) -> np.ndarray:
    """Which quads of ``skin.tube_faces(chains)`` (``sides`` per link) remain: bool [Q],
    False for the quads of a torn link."""
    kept = [np.repeat(~cut[chain[:-1]], sides) for chain in chains]
    return np.concatenate(kept) if kept else np.zeros(0, dtype=bool)
