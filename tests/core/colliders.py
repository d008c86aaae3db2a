"""Collider meshes and rope scenes for the collision tests (plain numpy)."""

from __future__ import annotations

import numpy as np

from xpbd_addon.core import Model


def box(center=(0.0, 0.0, 0.0), half=(0.5, 0.5, 0.5)):
    """A closed box of 8 vertices and 12 triangles, wound outward."""
    c = np.asarray(center, dtype=float)
    h = np.asarray(half, dtype=float)
    corners = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float)
    vertices = c + corners * h
    # vertex index = 4 * (x > 0) + 2 * (y > 0) + (z > 0)
    quads = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    triangles = []
    for a, b, cc, d in quads:
        triangles += [(a, b, cc), (a, cc, d)]
    return vertices, np.array(triangles, dtype=np.int64)


def icosphere(subdivisions=2, radius=1.0, center=(0.0, 0.0, 0.0)):
    """A closed icosphere: 20 * 4**subdivisions triangles."""
    t = (1.0 + 5.0 ** 0.5) / 2.0
    vertices = [(-1, t, 0), (1, t, 0), (-1, -t, 0), (1, -t, 0), (0, -1, t), (0, 1, t),
                (0, -1, -t), (0, 1, -t), (t, 0, -1), (t, 0, 1), (-t, 0, -1), (-t, 0, 1)]
    faces = [(0, 11, 5), (0, 5, 1), (0, 1, 7), (0, 7, 10), (0, 10, 11), (1, 5, 9), (5, 11, 4),
             (11, 10, 2), (10, 7, 6), (7, 1, 8), (3, 9, 4), (3, 4, 2), (3, 2, 6), (3, 6, 8),
             (3, 8, 9), (4, 9, 5), (2, 4, 11), (6, 2, 10), (8, 6, 7), (9, 8, 1)]
    v = [np.array(p, float) / np.linalg.norm(p) for p in vertices]
    for _ in range(subdivisions):
        cache = {}

        def middle(i, j, cache=cache):
            key = (min(i, j), max(i, j))
            if key not in cache:
                p = v[i] + v[j]
                v.append(p / np.linalg.norm(p))
                cache[key] = len(v) - 1
            return cache[key]

        new = []
        for a, b, c in faces:
            ab, bc, ca = middle(a, b), middle(b, c), middle(c, a)
            new += [(a, ab, ca), (b, bc, ab), (c, ca, bc), (ab, bc, ca)]
        faces = new
    return np.asarray(center, float) + radius * np.array(v), np.array(faces, dtype=np.int64)


def rope(points=40, length=1.0, start=(0.0, 0.0, 0.0), direction=(1.0, 0.0, 0.0), *,
         radius=0.01, pinned=(), compliance=1e-8, **options) -> Model:
    """A straight rope of ``points`` particles (mass 1 / points kg each)."""
    d = np.asarray(direction, float)
    d = d / np.linalg.norm(d)
    x = np.asarray(start, float) + np.linspace(0.0, length, points)[:, None] * d
    w = np.full(points, float(points))
    w[list(pinned)] = 0.0
    edges = np.stack([np.arange(points - 1), np.arange(1, points)], axis=1)
    return Model(x, edges, w, compliance, radius=radius, **options)


def segment_distance(p0, p1, q0, q1):
    """Minimum distance between segment arrays p0 p1 (K, 3) and q0 q1 (K, 3), sampled
    densely (a test oracle independent of the kernels)."""
    s = np.linspace(0.0, 1.0, 21)
    p = p0[:, None, :] + s[None, :, None] * (p1 - p0)[:, None, :]
    q = q0[:, None, :] + s[None, :, None] * (q1 - q0)[:, None, :]
    d = np.linalg.norm(p[:, :, None, :] - q[:, None, :, :], axis=-1)
    return d.min(axis=(1, 2))


def cylinder(radius, length=1.0, sides=16, center=(0.0, 0.0, 0.0)):
    """A closed cylinder along y (a pole, a pipe, a wire): ``sides`` side quads and two
    fanned caps, 4 * sides triangles."""
    angle = np.linspace(0.0, 2.0 * np.pi, sides, endpoint=False)
    ring = np.stack([radius * np.cos(angle), radius * np.sin(angle)], axis=1)
    vertices = [(a, y, b) for y in (-0.5 * length, 0.5 * length) for a, b in ring]
    vertices += [(0.0, -0.5 * length, 0.0), (0.0, 0.5 * length, 0.0)]
    triangles = []
    for i in range(sides):
        j = (i + 1) % sides
        triangles += [(i, j, sides + j), (i, sides + j, sides + i),
                      (2 * sides, j, i), (2 * sides + 1, sides + i, sides + j)]
    return (np.asarray(center, float) + np.array(vertices, float),
            np.array(triangles, dtype=np.int64))


def torus(major, minor, rings=32, sides=12, center=(0.0, 0.0, 0.0)):
    """A closed torus standing in the yz-plane (its hole along x, a ring a rope along x
    crosses), tube radius ``minor``."""
    u = np.linspace(0.0, 2.0 * np.pi, rings, endpoint=False)
    w = np.linspace(0.0, 2.0 * np.pi, sides, endpoint=False)
    uu, ww = np.meshgrid(u, w, indexing="ij")
    distance = major + minor * np.cos(ww)
    vertices = np.stack([minor * np.sin(ww), distance * np.cos(uu), distance * np.sin(uu)],
                        axis=-1).reshape(-1, 3)
    triangles = []
    for i in range(rings):
        for j in range(sides):
            a, b = i * sides + j, ((i + 1) % rings) * sides + j
            c, d = ((i + 1) % rings) * sides + (j + 1) % sides, i * sides + (j + 1) % sides
            triangles += [(a, b, c), (a, c, d)]
    return np.asarray(center, float) + vertices, np.array(triangles, dtype=np.int64)


def distance_to_axis(x, edges, center=(0.0, 0.0, 0.0)):
    """(M,) distance [m] from each rope segment to the line through ``center`` along y (a
    cylinder's axis), in closed form: an oracle independent of the kernels."""
    p = (x - np.asarray(center, float))[:, [0, 2]]
    a, b = p[edges[:, 0]], p[edges[:, 1]]
    d = b - a
    t = np.clip(-(a * d).sum(axis=1) / np.maximum((d * d).sum(axis=1), 1e-30), 0.0, 1.0)
    return np.linalg.norm(a + t[:, None] * d, axis=1)
