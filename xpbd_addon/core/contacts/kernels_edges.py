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

Only edges where the surface bends are candidates (``kernels_edge_search.edge_usable``): a
closed mesh's convex edges, an open mesh's bent edges and its border. A flat edge (the
diagonal of a quad) or a concave one (a valley) lies behind the faces beside it, whose
particle contacts keep the segment clear of it.
"""

from __future__ import annotations

import math

import numpy as np

from ..jit import kernel
from .kernels_collider import friction_correction, push_out
from .kernels_geometry import cross3

_TINY = 1e-12

@kernel
def closest_params(d1x, d1y, d1z, d2x, d2y, d2z, rx, ry, rz):
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
    return cross3(bx - ax, by - ay, bz - az, cx - ax, cy - ay, cz - az)


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
def edge_contacts(x, v, w, radius, substep, edges, visit, lists, mesh, mesh_edges, params,
                  moving, selection, edge_scratch, edge_rule, visited):
    """Keep each rope segment clear of its candidate collider edges (see the module), in
    place on x, v (N, 3): one Jacobi pass, every contact computed from the same positions
    and the corrections of a particle summed (Macklin et al. 2014 sec. 4.2). In order,
    Gauss-Seidel, neighbouring segments share a particle and a segment touches several edges
    of a thin pole: a symmetric rope draped over a pole was pushed to the side it was solved
    from first and walked off it at low friction.

    w (N,) [1/kg], radius (N,) [m]; ``substep`` (``groups.substep``): its velocity_scale
    exp(-damping h) / h [1/s], push (push_max, residue) [m], and the frame fractions of its
    start and end (s1 - fraction, s1); edges (M, 2) the rope's segments, ``visit`` (K,) those
    to look at (``segments_to_visit``); ``lists`` (``groups.lists``) each segment's
    candidate edge ids; the colliders' ``mesh`` (the vertices at the frame's start and end
    [m], triangles, triangle_collider) and ``mesh_edges`` (edge_vertices, edge_faces), as
    ``groups`` declares them; params (colliders, 4): thickness [m], mu_s, mu_k, closed;
    ``moving``: vertices_end differ from vertices; ``selection`` (``groups.selection``, its
    moved and extra): moved (N,) uint8 set for the particles moved, extra (N,) [m] approach
    besides the substep's (the re-solve's moves). ``edge_scratch``
    (``groups.edge_scratch``), left zero: the summed corrections of x and v, how many
    contacts moved each particle, which. ``edge_rule`` (``groups.edge_rule``): a particle
    moved by k contacts takes min(relax, k) / k of their sum; the segment is kept ``keep``
    times its contact distance from an edge. Each visited segment's ``room`` [m] (how much
    farther than that all its candidates lie now; 0 if one acted or cannot be bounded),
    ``anchor`` [m] (its ends now) and ``since`` (this frame fraction) are kept in
    ``visited`` (``groups.visited``) for ``segments_to_visit``.
    Returns how many contacts acted."""
    s1, fraction, velocity_scale, push, max_motion, triangle_motion = substep
    spans, candidates, distance = lists
    vertices, vertices_end, triangles, triangle_collider = mesh
    triangle_edges, edge_vertices, edge_faces = mesh_edges
    moved, only, selective, extra = selection
    delta, count, touched = edge_scratch
    relax, keep = edge_rule
    room, anchor, since = visited
    inverse_scale = 1.0 / velocity_scale
    f0, f1 = s1 - fraction, s1
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
            s0, t0 = closest_params(bx0 - ax0, by0 - ay0, bz0 - az0, dx0 - cx0, dy0 - cy0,
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
            s, t = closest_params(bx1 - ax1, by1 - ay1, bz1 - az1, dx1 - cx1, dy1 - cy1, dz1 - cz1,
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
    include one that moves within the frame (as ``kernels_wake.wake_near_moving`` for the
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
