"""numba geometry of the contacts: closest points, segment-triangle crossings, pseudo-normals.

Small stateless functions (Ericson, "Real-Time Collision Detection", 2004; Möller & Trumbore
1997; Baerentzen & Aanaes 2005) shared by the broad phase and the contact projection. They
return scalars and never divide by zero: degenerate triangles and segments fall back to a
vertex or a point.
"""

from __future__ import annotations

import math

import numpy as np

from ..jit import kernel

_TINY = 1e-12


@kernel
def cross3(ax, ay, az, bx, by, bz):
    return ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx


@kernel
def closest_on_triangle(px, py, pz, ax, ay, az, bx, by, bz, cx, cy, cz):
    """Closest point q of triangle abc to p (Ericson, "Real-Time Collision Detection" 5.1.5).

    Returns (qx, qy, qz, u, v, w, region): barycentric weights of a, b, c and the feature
    that holds q: 0 the face, 1/2/3 vertex a/b/c, 4/5/6 edge ab/bc/ca. Degenerate triangles
    fall back to a vertex or an edge (no division by zero)."""
    abx, aby, abz = bx - ax, by - ay, bz - az
    acx, acy, acz = cx - ax, cy - ay, cz - az
    apx, apy, apz = px - ax, py - ay, pz - az
    d1 = abx * apx + aby * apy + abz * apz
    d2 = acx * apx + acy * apy + acz * apz
    if d1 <= 0.0 and d2 <= 0.0:
        return ax, ay, az, 1.0, 0.0, 0.0, 1
    bpx, bpy, bpz = px - bx, py - by, pz - bz
    d3 = abx * bpx + aby * bpy + abz * bpz
    d4 = acx * bpx + acy * bpy + acz * bpz
    if d3 >= 0.0 and d4 <= d3:
        return bx, by, bz, 0.0, 1.0, 0.0, 2
    vc = d1 * d4 - d3 * d2
    if vc <= 0.0 and d1 >= 0.0 and d3 <= 0.0:
        t = d1 / (d1 - d3) if d1 - d3 > 0.0 else 0.0
        return ax + t * abx, ay + t * aby, az + t * abz, 1.0 - t, t, 0.0, 4
    cpx, cpy, cpz = px - cx, py - cy, pz - cz
    d5 = abx * cpx + aby * cpy + abz * cpz
    d6 = acx * cpx + acy * cpy + acz * cpz
    if d6 >= 0.0 and d5 <= d6:
        return cx, cy, cz, 0.0, 0.0, 1.0, 3
    vb = d5 * d2 - d1 * d6
    if vb <= 0.0 and d2 >= 0.0 and d6 <= 0.0:
        t = d2 / (d2 - d6) if d2 - d6 > 0.0 else 0.0
        return ax + t * acx, ay + t * acy, az + t * acz, 1.0 - t, 0.0, t, 6
    va = d3 * d6 - d5 * d4
    if va <= 0.0 and d4 - d3 >= 0.0 and d5 - d6 >= 0.0:
        denominator = (d4 - d3) + (d5 - d6)
        t = (d4 - d3) / denominator if denominator > 0.0 else 0.0
        return (bx + t * (cx - bx), by + t * (cy - by), bz + t * (cz - bz), 0.0, 1.0 - t, t, 5)
    total = va + vb + vc
    if not total > 0.0:
        return ax, ay, az, 1.0, 0.0, 0.0, 1
    v = vb / total
    w = vc / total
    return (ax + abx * v + acx * w, ay + aby * v + acy * w, az + abz * v + acz * w,
            1.0 - v - w, v, w, 0)


@kernel
def _midpoints_bound(x, radius, a0, a1, b0, b1):
    """(mid2, bound): the squared distance [m^2] of the midpoints of segments (a0, a1) and
    (b0, b1) of rows of x, and the half lengths plus the largest radius of each [m]. Any two
    points of the segments are at least the midpoints' distance less the half lengths
    apart."""
    half_a2 = 0.25 * ((x[a1, 0] - x[a0, 0]) ** 2 + (x[a1, 1] - x[a0, 1]) ** 2
                      + (x[a1, 2] - x[a0, 2]) ** 2)
    half_b2 = 0.25 * ((x[b1, 0] - x[b0, 0]) ** 2 + (x[b1, 1] - x[b0, 1]) ** 2
                      + (x[b1, 2] - x[b0, 2]) ** 2)
    mid2 = 0.25 * ((x[a0, 0] + x[a1, 0] - x[b0, 0] - x[b1, 0]) ** 2
                   + (x[a0, 1] + x[a1, 1] - x[b0, 1] - x[b1, 1]) ** 2
                   + (x[a0, 2] + x[a1, 2] - x[b0, 2] - x[b1, 2]) ** 2)
    return mid2, (math.sqrt(half_a2) + math.sqrt(half_b2) + max(radius[a0], radius[a1])
                  + max(radius[b0], radius[b1]))


@kernel
def segments_apart(x, radius, a0, a1, b0, b1, reach):
    """True if segments (a0, a1) and (b0, b1) of rows of x cannot come within the sum of
    their radii plus ``reach`` [m]: their midpoints are farther apart than the half lengths
    plus the largest radii and the reach. Most candidate pairs are apart in any one substep,
    and this rules them out for the price of two square roots (``segments_gap`` costs a
    closest-point search)."""
    mid2, bound = _midpoints_bound(x, radius, a0, a1, b0, b1)
    bound += reach
    return mid2 >= bound * bound


@kernel
def segments_clear(x, radius, a0, a1, b0, b1):
    """(apart, clear): ``segments_apart`` at no reach, and where the segments are apart a
    lower bound [m] of how far they are from touching: the midpoints' distance less the
    half lengths and the largest radii. 0 where they are not apart."""
    mid2, bound = _midpoints_bound(x, radius, a0, a1, b0, b1)
    if mid2 >= bound * bound:
        return True, math.sqrt(mid2) - bound
    return False, 0.0


@kernel
def segments_gap(x, radius, a0, a1, b0, b1):
    """Where segments (a0, a1) and (b0, b1) of rows of x come closest
    (``closest_on_segments``): (s, t, dx, dy, dz, gap, contact), d = p - q [m] from the second
    segment's closest point to the first's, gap = |d| [m], and contact [m] the sum of the
    radii ``radius`` (N,) interpolated at s and t."""
    s, t = closest_on_segments(x, a0, a1, b0, b1)
    dx = (x[a0, 0] + s * (x[a1, 0] - x[a0, 0])) - (x[b0, 0] + t * (x[b1, 0] - x[b0, 0]))
    dy = (x[a0, 1] + s * (x[a1, 1] - x[a0, 1])) - (x[b0, 1] + t * (x[b1, 1] - x[b0, 1]))
    dz = (x[a0, 2] + s * (x[a1, 2] - x[a0, 2])) - (x[b0, 2] + t * (x[b1, 2] - x[b0, 2]))
    gap = math.sqrt(dx * dx + dy * dy + dz * dz)
    contact = (radius[a0] + s * (radius[a1] - radius[a0])
               + radius[b0] + t * (radius[b1] - radius[b0]))
    return s, t, dx, dy, dz, gap, contact


@kernel
def closest_on_segments(x, a0, a1, b0, b1):
    """Parameters (s, t) in [0, 1] of the closest points x_a0 + s (x_a1 - x_a0) and
    x_b0 + t (x_b1 - x_b0) of two segments between rows of x (Ericson 5.1.9); zero-length
    segments are points. Indexes x directly: array views per call cost more than the maths."""
    d1x, d1y, d1z = x[a1, 0] - x[a0, 0], x[a1, 1] - x[a0, 1], x[a1, 2] - x[a0, 2]
    d2x, d2y, d2z = x[b1, 0] - x[b0, 0], x[b1, 1] - x[b0, 1], x[b1, 2] - x[b0, 2]
    rx, ry, rz = x[a0, 0] - x[b0, 0], x[a0, 1] - x[b0, 1], x[a0, 2] - x[b0, 2]
    a = d1x * d1x + d1y * d1y + d1z * d1z
    e = d2x * d2x + d2y * d2y + d2z * d2z
    f = d2x * rx + d2y * ry + d2z * rz
    if a <= _TINY and e <= _TINY:
        return 0.0, 0.0
    if a <= _TINY:
        return 0.0, min(max(f / e, 0.0), 1.0)
    c = d1x * rx + d1y * ry + d1z * rz
    if e <= _TINY:
        return min(max(-c / a, 0.0), 1.0), 0.0
    b = d1x * d2x + d1y * d2y + d1z * d2z
    denominator = a * e - b * b
    s = min(max((b * f - c * e) / denominator, 0.0), 1.0) if denominator > _TINY * a * e else 0.0
    t = (b * s + f) / e
    if t < 0.0:
        t = 0.0
        s = min(max(-c / a, 0.0), 1.0)
    elif t > 1.0:
        t = 1.0
        s = min(max((b - c) / a, 0.0), 1.0)
    return s, t


@kernel
def segment_crosses(yx, yy, yz, x, ax, ay, az, bx, by, bz, cx, cy, cz):
    """Parameter in [0, 1] where the segment y -> x crosses triangle abc (Möller & Trumbore
    1997), or -1 if it does not."""
    dx, dy, dz = x[0] - yx, x[1] - yy, x[2] - yz
    e1x, e1y, e1z = bx - ax, by - ay, bz - az
    e2x, e2y, e2z = cx - ax, cy - ay, cz - az
    px, py, pz = cross3(dx, dy, dz, e2x, e2y, e2z)
    det = e1x * px + e1y * py + e1z * pz
    if abs(det) <= _TINY * _TINY:
        return -1.0
    inverse = 1.0 / det
    tx, ty, tz = yx - ax, yy - ay, yz - az
    u = (tx * px + ty * py + tz * pz) * inverse
    if u < 0.0 or u > 1.0:
        return -1.0
    qx, qy, qz = cross3(tx, ty, tz, e1x, e1y, e1z)
    v = (dx * qx + dy * qy + dz * qz) * inverse
    if v < 0.0 or u + v > 1.0:
        return -1.0
    s = (e2x * qx + e2y * qy + e2z * qz) * inverse
    return s if 0.0 <= s <= 1.0 else -1.0


@kernel
def mesh_normals(rows, vertices, triangles, triangle_edges, vertex_normal, edge_normal):
    """Angle-weighted pseudo-normals (Baerentzen & Aanaes 2005) of the vertices and edges of a
    triangle soup, summed over its triangles ``rows`` (K,) in their order: the entries of
    their vertices and edges in the (V, 3) and (E, 3) arrays are zeroed, then a vertex gets
    the sum of its faces' unit normals weighted by the face angle there, an edge the sum of
    its two faces' normals. The sign of (p - q) . n at the closest feature q tells inside
    from outside of a closed mesh, also at edges and corners. Degenerate triangles
    contribute nothing."""
    for index in range(rows.shape[0]):
        t = rows[index]
        for k in range(3):
            for c in range(3):
                vertex_normal[triangles[t, k], c] = 0.0
                edge_normal[triangle_edges[t, k], c] = 0.0
    for index in range(rows.shape[0]):
        t = rows[index]
        i0, i1, i2 = triangles[t, 0], triangles[t, 1], triangles[t, 2]
        a, b, c = vertices[i0], vertices[i1], vertices[i2]
        nx, ny, nz = cross3(b[0] - a[0], b[1] - a[1], b[2] - a[2],
                            c[0] - a[0], c[1] - a[1], c[2] - a[2])
        length = math.sqrt(nx * nx + ny * ny + nz * nz)
        if not length > _TINY * _TINY:
            continue
        nx, ny, nz = nx / length, ny / length, nz / length
        for k in range(3):
            p = vertices[triangles[t, k]]
            q = vertices[triangles[t, (k + 1) % 3]]
            r = vertices[triangles[t, (k + 2) % 3]]
            ux, uy, uz = q[0] - p[0], q[1] - p[1], q[2] - p[2]
            wx, wy, wz = r[0] - p[0], r[1] - p[1], r[2] - p[2]
            cx, cy, cz = cross3(ux, uy, uz, wx, wy, wz)
            angle = math.atan2(math.sqrt(cx * cx + cy * cy + cz * cz),
                               ux * wx + uy * wy + uz * wz)
            vertex = triangles[t, k]
            vertex_normal[vertex, 0] += angle * nx
            vertex_normal[vertex, 1] += angle * ny
            vertex_normal[vertex, 2] += angle * nz
            edge = triangle_edges[t, k]
            edge_normal[edge, 0] += nx
            edge_normal[edge, 1] += ny
            edge_normal[edge, 2] += nz


@kernel
def triangle_summaries(rows, vertices, vertices_end, triangles, extent, motion, moves):
    """Per triangle ``rows`` (K,) of a soup moving from ``vertices`` to ``vertices_end``
    (V, 3) [m]: its largest extent along an axis at the start [m] (``extent`` (K,), by row
    index), its centroid's displacement over the frame [m] (``motion`` (T, 3): the mean of
    its corners', summed in corner order and divided by 3, as numpy's mean) and whether a
    corner moves (``moves`` (T,) uint8). One pass: numpy's reductions over the corner axis
    took 60 ms at 159,000 triangles, this 2 ms (the same bits)."""
    for index in range(rows.shape[0]):
        t = rows[index]
        i, j, k = triangles[t, 0], triangles[t, 1], triangles[t, 2]
        largest = 0.0
        moving = False
        for c in range(3):
            a, b, d = vertices[i, c], vertices[j, c], vertices[k, c]
            largest = max(largest, max(a, b, d) - min(a, b, d))
            di = vertices_end[i, c] - a
            dj = vertices_end[j, c] - b
            dk = vertices_end[k, c] - d
            motion[t, c] = (di + dj + dk) / 3.0
            moving = moving or di != 0.0 or dj != 0.0 or dk != 0.0
        extent[index] = largest
        moves[t] = moving


@kernel
def quad_tessellation(positions, corners, triangle_faces, rounding):
    """The loop triangles int32 (T, 3) of a mesh of triangles and quads as Blender makes them
    (a quad's cut: ``quad_cuts``), from its vertex ``positions`` (V, 3) [m], its corners'
    vertices ``corners`` (L,) face by face, and each triangle's face ``triangle_faces`` (T,)
    (faces in order, a face of n corners giving n - 2 triangles); and the first rows (K,) of
    the quads whose cut is not certain. Returns (triangles, unsure, ok): ok False (nothing
    made) for a face of more than 4 corners or corners that do not add up."""
    count = triangle_faces.shape[0]
    triangles = np.empty((count, 3), dtype=np.int32)
    unsure = np.empty(count, dtype=np.int64)
    unsure_count = 0
    quad = np.empty((1, 4), dtype=np.int64)
    flip = np.zeros(1, dtype=np.uint8)
    sure = np.zeros(1, dtype=np.uint8)
    row = 0
    corner = 0
    while row < count:
        face = triangle_faces[row]
        size = 3
        if row + 1 < count and triangle_faces[row + 1] == face:
            size = 4
            if row + 2 < count and triangle_faces[row + 2] == face:
                return triangles, unsure[:0].copy(), False
        if corner + size > corners.shape[0]:
            return triangles, unsure[:0].copy(), False
        if size == 3:
            for k in range(3):
                triangles[row, k] = corners[corner + k]
        else:
            for k in range(4):
                quad[0, k] = corners[corner + k]
            quad_cuts(positions, quad, rounding, flip, sure)
            a, b, c, d = quad[0, 0], quad[0, 1], quad[0, 2], quad[0, 3]
            if flip[0]:
                triangles[row, 0], triangles[row, 1], triangles[row, 2] = a, b, d
                triangles[row + 1, 0], triangles[row + 1, 1], triangles[row + 1, 2] = b, c, d
            else:
                triangles[row, 0], triangles[row, 1], triangles[row, 2] = a, b, c
                triangles[row + 1, 0], triangles[row + 1, 1], triangles[row + 1, 2] = a, c, d
            if not sure[0]:
                unsure[unsure_count] = row
                unsure_count += 1
        row += size - 2
        corner += size
    if corner != corners.shape[0]:
        return triangles, unsure[:0].copy(), False
    return triangles, unsure[:unsure_count].copy(), True


@kernel
def quad_cuts(positions, quads, rounding, flip, sure):
    """How Blender cuts each quad (Q, 4) of vertex ids into ``positions`` (V, 3) [m]: on its
    1-3 diagonal (``flip`` (Q,) 1) or its 0-2 one (0), and whether that is certain (``sure``
    (Q,) 1). Blender decides it in single precision with one of two tests
    (``mesh_tessellate.cc``: ``is_quad_flip_v3_first_third_fast``, the sign of
    (d12 x d13) . (d14 x d13); or, with the face normal n = (v1 - v3) x (v2 - v4) / |...|, the
    sides of the diagonal's line the corners 1 and 3 lie on, along t = d13 x n); certain
    means both agree here by more than ``rounding`` [m] (a difference of coordinates'
    error at the mesh's scale) can move them."""
    for q in range(quads.shape[0]):
        a, b, c, d = quads[q, 0], quads[q, 1], quads[q, 2], quads[q, 3]
        ex, ey, ez = (positions[c, 0] - positions[a, 0], positions[c, 1] - positions[a, 1],
                      positions[c, 2] - positions[a, 2])
        bx, by, bz = (positions[b, 0] - positions[a, 0], positions[b, 1] - positions[a, 1],
                      positions[b, 2] - positions[a, 2])
        dx, dy, dz = (positions[d, 0] - positions[a, 0], positions[d, 1] - positions[a, 1],
                      positions[d, 2] - positions[a, 2])
        diagonal = math.sqrt(ex * ex + ey * ey + ez * ez)
        ax_, ay_, az_ = cross3(bx, by, bz, ex, ey, ez)
        cx, cy, cz = cross3(dx, dy, dz, ex, ey, ez)
        value = ax_ * cx + ay_ * cy + az_ * cz
        room = rounding * diagonal * (math.sqrt(ax_ * ax_ + ay_ * ay_ + az_ * az_)
                                      + math.sqrt(cx * cx + cy * cy + cz * cz))
        fast = value > 0.0
        certain = abs(value) > room
        # the face normal: (v1 - v3) x (v2 - v4) = -d13 x (d12 - d14)
        nx, ny, nz = cross3(-ex, -ey, -ez, bx - dx, by - dy, bz - dz)
        length = math.sqrt(nx * nx + ny * ny + nz * nz)
        other = math.sqrt((bx - dx) ** 2 + (by - dy) ** 2 + (bz - dz) ** 2)
        certain = certain and length > 4.0 * rounding * (diagonal + other)
        if length > 0.0:
            nx, ny, nz = nx / length, ny / length, nz / length
        tx, ty, tz = cross3(ex, ey, ez, nx, ny, nz)
        side_4 = dx * tx + dy * ty + dz * tz
        side_2 = bx * tx + by * ty + bz * tz
        margin = 4.0 * rounding * diagonal
        certain = certain and abs(side_4) > margin and abs(side_2) > margin
        with_normal = side_4 >= 0.0 or side_2 <= 0.0
        flip[q] = 1 if fast else 0
        sure[q] = 1 if certain and fast == with_normal else 0
