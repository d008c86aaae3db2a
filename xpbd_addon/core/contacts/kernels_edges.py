"""numba kernels of the contacts between rope segments and collider edges.

A rope is a chain of capsules: segment ab with the particles' radius (plus the collider's
thickness). The particle contacts (``kernels_collider``) keep every particle clear of every
triangle; what they cannot see is a collider edge that passes *between* two particles: a
pole, a wire, a hook, a table's edge. Against a convex (or open) mesh the distance from a
segment to the surface is smallest either at an end (a particle contact) or at an edge or
vertex of the mesh, so segment-edge contacts complete the capsule:

    C = (p(s) - q(t)) . n - (r(s) + thickness) >= 0

p(s) = a + s (b - a) and q(t) = c + t (d - c) the closest points of the segment and the
collider edge cd at the end of the substep, r(s) the radius interpolated along the segment.

Continuous in time: n is the direction from q to p at the *start* of the substep (a
speculative contact, as in Macklin et al. 2014 sec. 6.1 and Obi's surface collisions): the
segment is kept on the side of the edge it came from, however far it moved in the substep,
so a pole between two particles cannot be crossed within a substep either. An edge of a
closed mesh whose segment starts behind both of its faces (inside the solid, past the
edge's line) is not this edge's to push out: the particle contacts and the other edges do.

The correction of the contact point is shared by the two particles by their weights along
the segment and their inverse masses (the collider is infinitely heavy):

    W = (1 - s)^2 w_a + s^2 w_b,   dx_a = (1 - s) w_a / W dp,   dx_b = s w_b / W dp

with dp = depth n + the friction correction (``kernels_collider.friction_correction`` on the
contact point's displacement relative to the edge over the substep) and depth, kept as
``kernels_collider.push_out``: the same push-out cap and velocity rule as the particle
contacts.

Only edges where the surface bends are candidates (``edge_usable``): a closed mesh's convex
edges, an open mesh's bent edges and its border. A flat edge (the diagonal of a quad) or a
concave one (a valley) lies behind the faces beside it, whose particle contacts keep the
segment clear of it.
"""

from __future__ import annotations

import math

import numpy as np

from ..jit import kernel
from .kernels_broadphase import _hash, _span
from .kernels_collider import friction_correction, push_out
from .kernels_geometry import _cross

_TINY = 1e-12

BENT = 1e-3
"""An edge bends where the sine of the angle between its faces exceeds this (0.06 degrees);
below, it is flat and no candidate."""


@kernel
def _closest(d1x, d1y, d1z, d2x, d2y, d2z, rx, ry, rz):
    """Parameters (s, t) in [0, 1] of the closest points a + s d1 and c + t d2 of two
    segments, r = a - c (Ericson 5.1.9, as ``kernels_geometry.closest_on_segments``)."""
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
def _at(vertices, vertices_end, i, f):
    """Collider vertex i at frame fraction f [m] (colliders move linearly over a frame)."""
    return (vertices[i, 0] + f * (vertices_end[i, 0] - vertices[i, 0]),
            vertices[i, 1] + f * (vertices_end[i, 1] - vertices[i, 1]),
            vertices[i, 2] + f * (vertices_end[i, 2] - vertices[i, 2]))


@kernel
def _face_normal(vertices, vertices_end, triangles, face, f):
    """The (unnormalised) normal of triangle ``face`` at frame fraction f, by its winding
    (outward on a closed mesh)."""
    ax, ay, az = _at(vertices, vertices_end, triangles[face, 0], f)
    bx, by, bz = _at(vertices, vertices_end, triangles[face, 1], f)
    cx, cy, cz = _at(vertices, vertices_end, triangles[face, 2], f)
    return _cross(bx - ax, by - ay, bz - az, cx - ax, cy - ay, cz - az)


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
    nx, ny, nz = _cross(positions[j, 0] - positions[i, 0], positions[j, 1] - positions[i, 1],
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
def segment_edges(segments, edges, x0, x_end, reach, vertices, vertices_end, triangles,
                  triangle_edges, edge_vertices, edge_faces, triangle_collider, params,
                  universe, t_lo, t_hi, start, ids, oversize, mask, cell, max_cells, marker,
                  mark):
    """Candidate collider edges of the rope ``segments`` (K,) (rows of ``edges`` (M, 2)) for
    (the rest of) one frame, through the triangles' grid of ``kernels_broadphase``.

    A segment's box holds the chords x0 -> x_end (N, 3) [m] of both its particles' collider
    searches grown by the larger of their ``reach`` (N,) [m] (radius + margin + bulge): a
    point of the segment is a mix of its two ends, each within its own box while it stays
    within its margin of its chord, so the box holds the whole segment. An edge of a
    triangle in the box's cells is kept if its own box over the frame, grown by its
    collider's thickness, overlaps, if it comes within reach of the segment as it is now
    (the farther of its ends' chord + reach, plus the edge's motion and thickness), and if
    it can hold a segment (``edge_usable``). ``marker``
    (E,) int64 with entries below ``mark`` (raised by K by the caller). Returns CSR over
    ``segments``: (offsets (K + 1,), edge ids, each list in increasing order: the contacts
    then give the same bits for any list that holds the edges within reach)."""
    n = segments.shape[0]
    inverse_cell = 1.0 / cell
    offsets = np.zeros(n + 1, dtype=np.int64)
    found = np.empty(max(4 * n, 64), dtype=np.int64)
    count = 0
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
        i0, j0, k0, i1, j1, k1, cells = _span(lo, hi, inverse_cell)
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
                key = _hash(i0 + s // di, j0 + (s % di) // dj, k0 + s % dj, mask)
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
                        s0, t0 = _closest(
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
                        grown = np.empty(2 * count, dtype=np.int64)
                        grown[:count] = found
                        found = grown
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
    out = np.sort(out[:count])
    for k in range(count):
        seen[out[k]] = 0
    return out


@kernel
def segments_to_visit(edges, spans, w, only, selective, x, v, inverse_scale, room, anchor,
                      since, now, edge_speed, visit):
    """The segments a pass of ``edge_contacts`` looks at, into ``visit`` (M,); returns how
    many. Those with candidate edges and a free end (with ``selective``, an end flagged in
    ``only`` (N,)) that may be in contact: not those whose ``room`` (M,) [m] (how much
    farther than their contact distance every candidate lay when last looked at, their
    ends then at ``anchor`` (M, 6) [m], at frame fraction ``since`` (M,)) is more than three
    times how far they can have come since. T = |x_a - anchor_a| + |x_b - anchor_b| + the
    substep's moves |v| / s of both (x, v (N, 3), inverse_scale = 1 / s [s]) + the colliders'
    largest motion ``edge_speed`` [m per frame] since, to ``now`` (the substep's end) and
    over the substep (``now`` - ``since`` + ``inverse_scale``'s substep, in frames: the
    caller folds it into ``now``): the segment-edge distance moves by at most T at either
    end of the substep, and the gap along the start's normal by at most 3 T. A rope at rest
    on a collider (but awake) is then looked at only while it moves."""
    count = 0
    for m in range(edges.shape[0]):
        a, b = edges[m, 0], edges[m, 1]
        if selective and only[a] == 0 and only[b] == 0:  # (first: the cheapest test)
            continue
        if spans[m, 0] == spans[m, 1] or not (w[a] > 0.0 or w[b] > 0.0):
            continue
        if room[m] > 0.0:
            # (lengths as sums of the components' sizes: no less than the lengths)
            travel = edge_speed * (now - since[m])
            for c in range(3):
                travel += (abs(x[a, c] - anchor[m, c]) + abs(x[b, c] - anchor[m, 3 + c])
                           + (abs(v[a, c]) + abs(v[b, c])) * inverse_scale)
            if 3.0 * travel < room[m]:
                continue
        visit[count] = m
        count += 1
    return count


@kernel
def edge_contacts(x, v, w, radius, velocity_scale, edges, visit, spans, candidates,
                  vertices, vertices_end, triangles, edge_vertices, edge_faces,
                  triangle_collider, params, fractions, moving, push, moved, extra, delta,
                  count, touched, relax, keep, room, anchor, since):
    """Keep each rope segment clear of its candidate collider edges (see the module), in
    place on x, v (N, 3): one Jacobi pass, every contact computed from the same positions
    and the corrections of a particle summed (Macklin et al. 2014 sec. 4.2). In order,
    Gauss-Seidel, neighbouring segments share a particle and a segment touches several edges
    of a thin pole: a symmetric rope draped over a pole was pushed to the side it was solved
    from first and walked off it at low friction.

    w (N,) [1/kg], radius (N,) [m], velocity_scale exp(-damping h) / h [1/s]; edges (M, 2)
    the rope's segments, ``visit`` (K,) those to look at (``segments_to_visit``); spans
    (M, 2) into ``candidates``, each segment's edge ids;
    vertices, vertices_end (V, 3) [m] the colliders at the frame's start and end,
    triangles (T, 3), edge_vertices, edge_faces (E, 2), triangle_collider (T,), params
    (colliders, 4): thickness [m], mu_s, mu_k, closed; fractions (2,) the frame fractions of
    the substep's start and end; ``moving``: vertices_end differ from vertices; push
    (push_max, residue) [m]; moved (N,) uint8 set for the particles moved; extra (N,) [m]
    approach besides the substep's (the re-solve's moves). Scratch, left zero: delta (N, 6)
    [m, m/s] the summed corrections of x and v, count (N,) int64 how many contacts moved
    each particle; touched (N,) int64. A particle moved by k contacts takes min(relax, k) /
    k of their sum (``constants.EDGE_RELAX``). The segment is kept ``keep`` times its
    contact distance from an edge (``1 - constants.EDGE_SLOP``). Each visited segment's
    ``room`` (M,) [m] (how much farther than that all its candidates lie now; 0 if one acted
    or cannot be bounded), ``anchor`` (M, 6) [m] (its ends now) and ``since`` (M,) (this
    frame fraction) are kept for ``segments_to_visit``. Returns how many contacts
    acted."""
    inverse_scale = 1.0 / velocity_scale
    f0, f1 = fractions[0], fractions[1]
    acted = 0
    touches = 0
    for index in range(visit.shape[0]):
        m = visit[index]
        first, last = spans[m, 0], spans[m, 1]
        a, b = edges[m, 0], edges[m, 1]
        wa, wb = w[a], w[b]
        least = np.inf
        for c in range(3):
            anchor[m, c] = x[a, c]
            anchor[m, 3 + c] = x[b, c]
        since[m] = f1
        # the segment over the substep (the same for all its candidates: the pass applies
        # its corrections at the end) and its box
        ax1, ay1, az1 = x[a, 0], x[a, 1], x[a, 2]
        bx1, by1, bz1 = x[b, 0], x[b, 1], x[b, 2]
        ax0 = ax1 - v[a, 0] * inverse_scale
        ay0 = ay1 - v[a, 1] * inverse_scale
        az0 = az1 - v[a, 2] * inverse_scale
        bx0 = bx1 - v[b, 0] * inverse_scale
        by0 = by1 - v[b, 1] * inverse_scale
        bz0 = bz1 - v[b, 2] * inverse_scale
        lo_x, hi_x = min(ax0, ax1, bx0, bx1), max(ax0, ax1, bx0, bx1)
        lo_y, hi_y = min(ay0, ay1, by0, by1), max(ay0, ay1, by0, by1)
        lo_z, hi_z = min(az0, az1, bz0, bz1), max(az0, az1, bz0, bz1)
        radius_most = max(radius[a], radius[b])
        for k in range(first, last):
            e = candidates[k]
            c, d = edge_vertices[e, 0], edge_vertices[e, 1]
            row = triangle_collider[edge_faces[e, 0]]
            thickness = params[row, 0]
            if moving:
                cx0, cy0, cz0 = _at(vertices, vertices_end, c, f0)
                dx0, dy0, dz0 = _at(vertices, vertices_end, d, f0)
                cx1, cy1, cz1 = _at(vertices, vertices_end, c, f1)
                dx1, dy1, dz1 = _at(vertices, vertices_end, d, f1)
            else:
                cx0, cy0, cz0 = vertices[c, 0], vertices[c, 1], vertices[c, 2]
                dx0, dy0, dz0 = vertices[d, 0], vertices[d, 1], vertices[d, 2]
                cx1, cy1, cz1, dx1, dy1, dz1 = cx0, cy0, cz0, dx0, dy0, dz0
            # most candidates are apart in any one substep: their boxes over the substep
            # apart by more than the reach rule them out (and leave that much room)
            reach = radius_most + thickness
            apart = max(lo_x - max(cx0, cx1, dx0, dx1), min(cx0, cx1, dx0, dx1) - hi_x,
                        lo_y - max(cy0, cy1, dy0, dy1), min(cy0, cy1, dy0, dy1) - hi_y,
                        lo_z - max(cz0, cz1, dz0, dz1), min(cz0, cz1, dz0, dz1) - hi_z)
            if apart > reach:
                least = min(least, apart - reach)
                continue
            # (below, a candidate whose gap is not known leaves the segment no room)
            # the side the segment came from: the closest points at the substep's start
            s0, t0 = _closest(bx0 - ax0, by0 - ay0, bz0 - az0, dx0 - cx0, dy0 - cy0,
                              dz0 - cz0, ax0 - cx0, ay0 - cy0, az0 - cz0)
            ux = ax0 + s0 * (bx0 - ax0) - (cx0 + t0 * (dx0 - cx0))
            uy = ay0 + s0 * (by0 - ay0) - (cy0 + t0 * (dy0 - cy0))
            uz = az0 + s0 * (bz0 - az0) - (cz0 + t0 * (dz0 - cz0))
            apart0 = math.sqrt(ux * ux + uy * uy + uz * uz)
            solid = params[row, 3] > 0.0 and edge_faces[e, 1] >= 0
            n1x = n1y = n1z = n2x = n2y = n2z = 0.0
            if solid:
                n1x, n1y, n1z = _face_normal(vertices, vertices_end, triangles,
                                             edge_faces[e, 0], f0)
                n2x, n2y, n2z = _face_normal(vertices, vertices_end, triangles,
                                             edge_faces[e, 1], f0)
            if apart0 > _TINY:
                nx, ny, nz = ux / apart0, uy / apart0, uz / apart0
                if solid and (nx * n1x + ny * n1y + nz * n1z < 0.0
                              and nx * n2x + ny * n2y + nz * n2z < 0.0):
                    # behind both faces: inside the solid, past this edge's line; whichever
                    # way it got there, out through this edge is no way out (pushed "back
                    # the way it came", a rope wrapped under a thin box was pushed into it
                    # by the box's far edge): the faces and the other edges push it out
                    least = 0.0
                    continue
            elif solid:  # on the edge's line: out along its pseudo-normal
                l1 = math.sqrt(n1x * n1x + n1y * n1y + n1z * n1z)
                l2 = math.sqrt(n2x * n2x + n2y * n2y + n2z * n2z)
                if not (l1 > 0.0 and l2 > 0.0):
                    least = 0.0
                    continue
                nx, ny, nz = n1x / l1 + n2x / l2, n1y / l1 + n2y / l2, n1z / l1 + n2z / l2
                length = math.sqrt(nx * nx + ny * ny + nz * nz)
                if not length > _TINY:
                    least = 0.0
                    continue
                nx, ny, nz = nx / length, ny / length, nz / length
            else:
                least = 0.0
                continue
            # the gap at the substep's end along that side
            s, t = _closest(bx1 - ax1, by1 - ay1, bz1 - az1, dx1 - cx1, dy1 - cy1, dz1 - cz1,
                            ax1 - cx1, ay1 - cy1, az1 - cz1)
            gx = ax1 + s * (bx1 - ax1) - (cx1 + t * (dx1 - cx1))
            gy = ay1 + s * (by1 - ay1) - (cy1 + t * (dy1 - cy1))
            gz = az1 + s * (bz1 - az1) - (cz1 + t * (dz1 - cz1))
            gap = gx * nx + gy * ny + gz * nz
            # (less the slop, which the particle contacts alone keep a segment within)
            contact = (radius[a] + s * (radius[b] - radius[a]) + thickness) * keep
            if gap >= contact:
                least = min(least, max(math.sqrt(gx * gx + gy * gy + gz * gz)
                                       - reach * keep, 0.0))
                continue
            ca, cb = 1.0 - s, s
            W = ca * ca * wa + cb * cb * wb
            least = 0.0
            if not W > 0.0:
                continue
            # the contact point's displacement over the substep, relative to the edge's
            rx = (ca * (ax1 - ax0) + cb * (bx1 - bx0)
                  - ((1.0 - t) * (cx1 - cx0) + t * (dx1 - dx0)))
            ry = (ca * (ay1 - ay0) + cb * (by1 - by0)
                  - ((1.0 - t) * (cy1 - cy0) + t * (dy1 - dy0)))
            rz = (ca * (az1 - az0) + cb * (bz1 - bz0)
                  - ((1.0 - t) * (cz1 - cz0) + t * (dz1 - dz0)))
            approach = max(-(rx * nx + ry * ny + rz * nz), 0.0) + ca * extra[a] + cb * extra[b]
            depth, kept = push_out(contact - gap, approach, push)
            fx, fy, fz = friction_correction(rx + depth * nx, ry + depth * ny, rz + depth * nz,
                                             nx, ny, nz, depth, params[row, 1],
                                             params[row, 2])
            jx, jy, jz = (depth * nx + fx) / W, (depth * ny + fy) / W, (depth * nz + fz) / W
            kx = (kept * nx + fx) / W * velocity_scale
            ky = (kept * ny + fy) / W * velocity_scale
            kz = (kept * nz + fz) / W * velocity_scale
            for end, weight in ((a, ca * wa), (b, cb * wb)):
                if weight != 0.0:
                    if count[end] == 0:
                        touched[touches] = end
                        touches += 1
                    count[end] += 1
                    delta[end, 0] += weight * jx
                    delta[end, 1] += weight * jy
                    delta[end, 2] += weight * jz
                    delta[end, 3] += weight * kx
                    delta[end, 4] += weight * ky
                    delta[end, 5] += weight * kz
            acted += 1
        room[m] = least
    for k in range(touches):  # (in the order first touched: the same bits every run)
        i = touched[k]
        share = min(relax, count[i]) / count[i]
        for c in range(3):
            x[i, c] += delta[i, c] * share
            v[i, c] += delta[i, 3 + c] * share
        for c in range(6):
            delta[i, c] = 0.0
        count[i] = 0
        moved[i] = 1
    return acted


@kernel
def wake_near_moving_edges(edges, spans, candidates, edge_vertices, vertices, vertices_end,
                           particle_rope, awake_ropes):
    """Wake the ropes (``awake_ropes`` (R,) set to 1) with a segment whose candidate edges
    include one that moves within the frame (as ``kernels_sleep.wake_near_moving`` for the
    particles' triangles). Returns how many woke."""
    woke = 0
    for m in range(edges.shape[0]):
        rope = particle_rope[edges[m, 0]]
        if rope < 0 or awake_ropes[rope]:
            continue
        for k in range(spans[m, 0], spans[m, 1]):
            e = candidates[k]
            moves = False
            for end in (edge_vertices[e, 0], edge_vertices[e, 1]):
                for c in range(3):
                    if vertices[end, c] != vertices_end[end, c]:
                        moves = True
            if moves:
                awake_ropes[rope] = 1
                woke += 1
                break
    return woke
