"""The quality figures of ``blender_cloth_collision.py`` (both of its workers: numpy and
mathutils): each rope point's signed distance to the collider and the ground, how deep and
how often points went below a surface or through it, the stretch, and the frame times."""

from __future__ import annotations

from typing import Any

import numpy as np

RADIUS = 0.005  # m, as bench_collision.RADIUS
GROUND_Z = -0.6

class Surface:
    """Signed distance of points to the collider mesh (sign: up for the terrain, outward for
    the sphere) and to the ground plane."""

    def __init__(self, vertices: np.ndarray, triangles: np.ndarray, closed: bool) -> None:
        from mathutils.bvhtree import BVHTree

        self.tree = BVHTree.FromPolygons(
            [tuple(v) for v in vertices.tolist()], triangles.tolist(), all_triangles=True
        )
        a, b, c = (vertices[triangles[:, k]] for k in range(3))
        n = np.cross(b - a, c - a)
        centre = (a + b + c) / 3.0
        flip = np.einsum("ij,ij->i", n, centre) < 0 if closed else n[:, 2] < 0
        n[flip] *= -1.0
        self.normals = n / np.linalg.norm(n, axis=1, keepdims=True)
        # an open shell (the terrain) only covers its footprint: beyond it, only the ground
        self.footprint = None if closed else (vertices[:, :2].min(0), vertices[:, :2].max(0))

    def distance(self, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(signed distance to the collider mesh, inf outside an open shell's footprint;
        signed distance to the ground plane)."""
        d = np.empty(len(points))
        find = self.tree.find_nearest
        for i, p in enumerate(points.tolist()):
            loc, _normal, index, dist = find(p)
            if loc is None:
                d[i] = np.inf
                continue
            side = np.dot(np.subtract(p, loc), self.normals[index])
            d[i] = dist if side >= 0 else -dist
        if self.footprint is not None:
            lo, hi = self.footprint
            d[np.any((points[:, :2] < lo) | (points[:, :2] > hi), axis=1)] = np.inf
        return d, points[:, 2] - GROUND_Z


ABOVE, UNDER_EDGE, THROUGH = 0, 1, 2


class Quality:
    """Penetration and stretch figures, frame by frame.

    Under an open shell (the terrain) a rope can get from the side, round its open edge,
    without passing through it: a particle deeper than r under the shell counts as through
    it only if it got there from above within the footprint (``THROUGH``), not from outside
    the footprint (``UNDER_EDGE``, reported apart). Inside the closed sphere and under the
    ground plane, every particle deeper than r is through."""

    def __init__(self, surface: Surface, edges: np.ndarray, rest: np.ndarray) -> None:
        self.surface, self.edges = surface, edges
        self.points = 100  # per rope (bench_collision.POINTS); vertex order is rope by rope
        self.rest = np.linalg.norm(rest[edges[:, 1]] - rest[edges[:, 0]], axis=1)
        self.status = np.full(len(rest), ABOVE)
        self.inside = np.isfinite(surface.distance(rest)[0])
        self.lowest = np.inf
        self.below_max = 0
        self.stretch_max = 0.0
        self.last: dict[str, Any] = {}

    def frame(self, x: np.ndarray) -> None:
        dm, dg = self.surface.distance(x)
        inside = np.isfinite(dm)
        deep = inside & (dm < -RADIUS)
        new = deep & (self.status == ABOVE)
        self.status[new] = np.where(self.inside[new], THROUGH, UNDER_EDGE)
        self.status[~deep] = ABOVE
        self.inside = inside
        d = np.minimum(np.where(self.status == UNDER_EDGE, np.inf, dm), dg)
        s = np.linalg.norm(x[self.edges[:, 1]] - x[self.edges[:, 0]], axis=1) / self.rest
        through = np.flatnonzero(d < -RADIUS)
        self.lowest = min(self.lowest, float(d.min()))
        self.below_max = max(self.below_max, len(through))
        self.stretch_max = max(self.stretch_max, float(s.max()))
        self.last = {
            "lowest_mm_last": float(d.min() * 1e3),
            "below_last": len(through),
            "centre_under_surface_last": int(np.count_nonzero(d < 0.0)),
            "under_open_edge_last": int(np.count_nonzero(self.status == UNDER_EDGE)),
            "median_clearance_mm_last": float(np.median(d[np.isfinite(d)]) * 1e3),
            # ropes (vertex // points) holding a particle through, and the deepest particle
            "below_ropes_last": sorted({int(i) // self.points for i in through}),
            "deepest_last": [round(float(v), 4) for v in x[int(np.argmin(d))]],
            "stretch_mean_pct_last": float((s.mean() - 1.0) * 100.0),
            "stretch_max_pct_last": float((s.max() - 1.0) * 100.0),
            "compress_min_pct_last": float((s.min() - 1.0) * 100.0),
        }

    def result(self) -> dict[str, Any]:
        return {
            **self.last,
            "lowest_mm": self.lowest * 1e3,
            "below_max": self.below_max,
            "stretch_max_pct": (self.stretch_max - 1.0) * 100.0,
        }


def _timing(ms: list[float]) -> dict[str, Any]:
    a = np.array(ms)
    return {
        "ms_mean": float(a.mean()),
        "ms_settled": float(a[len(a) // 2 :].mean()),
        "ms_median": float(np.median(a)),
        "ms_max": float(a.max()),
        "ms_min": float(a.min()),
        "ms_per_frame": [round(float(v), 2) for v in a],
    }


