"""numba kernels of the collider contacts: the narrow phase and projection against meshes.

The constraint, friction, push-out cap and velocity rule are ``kernels_contact``'s (its module
docstring); this module holds the mesh side of them:

* ``kernels_resting``, the common case in a few nanoseconds: a particle that stays over the
  face of the triangle that was nearest when it was last looked at, while no other
  candidate can have come nearer (their distances, then, bound from below, minus how far the
  particle and the collider have moved since, ``room``). A rope lying on the ground or
  wrapped round a collider is almost all such particles.
* ``collider_contacts``, the general case: every candidate triangle, edges and corners,
  crossings of fast particles, concave corners. It also fills the cache the first kernel
  reads.

Both process each particle on its own (a particle's contact moves only that particle), so
splitting the work between them changes nothing but the speed: the particles the first one
hands over (``rest``) get exactly the second one's treatment. A tight loop of its own is
what makes the common case fast: inside the general kernel's loop body it cost 30 ns of
the 60 per particle (register pressure of the whole body), alone 8.
"""

from __future__ import annotations

import math

import numpy as np

from ..jit import kernel
from .kernels_geometry import closest_on_triangle, cross3, segment_crosses

__all__ = ["collider_contacts", "face_normals", "friction_correction", "push_out",
           "CACHE_UNKNOWN", "CACHE_NOTHING"]

TINY = 1e-12

CACHE_UNKNOWN = -1
"""``cache_triangle`` of a particle that ``collider_contacts`` must look at again."""
CACHE_NOTHING = -2
"""``cache_triangle`` of a particle without candidates, or pinned: nothing to do."""

ROOM_SAFETY = 1e-9
"""Relative and absolute [m] margin taken off every room bound (rounding of distances)."""


@kernel
def push_out(overlap, approach, push):
    """A contact's correction along its normal and the part of it that changes the velocity,
    (depth, kept) [m], for an ``overlap`` [m] (r + thickness - distance > 0) and the
    ``approach`` [m] of the substep (how far the particle moved into the surface, relative
    to it). ``push`` = (push_max, residue) [m] (``MotionPrediction.push``).

    depth = min(overlap, approach + push_max): a rope that starts inside something leaves
    it at push_max / h at most; kept = min(depth, approach + residue): v += kept n s undoes
    the approach and an overlap up to ``residue`` that the contacts of the substep before
    left (contacts sharing a particle, solved one after the other, leave each other a few
    micrometres); the rest is gentle push-out, which must not launch the rope. Pushed out
    without velocity, that residue kept a resting rope's velocity at about -g h in every
    substep (it sank and was pushed back each time): a pile of crossed ropes on the floor
    crept by 0.1-0.8 mm a frame and never slept."""
    depth = min(overlap, approach + push[0])
    return depth, min(depth, approach + push[1])


@kernel
def friction_correction(dx, dy, dz, nx, ny, nz, depth, static, dynamic):
    """Position-level Coulomb friction (Macklin et al. 2014 eq. 24): the correction that
    undoes (static) or shortens by dynamic * depth (sliding) the tangential part of the
    relative displacement (dx, dy, dz) of a substep whose normal correction was ``depth``."""
    along = dx * nx + dy * ny + dz * nz
    tx, ty, tz = dx - along * nx, dy - along * ny, dz - along * nz
    slip2 = tx * tx + ty * ty + tz * tz
    if not slip2 > 0.0:
        return 0.0, 0.0, 0.0
    hold = static * depth  # >= 0; sticking, the common case, needs no square root
    if slip2 < hold * hold:
        return -tx, -ty, -tz
    scale = min(dynamic * depth / math.sqrt(slip2), 1.0)
    return -scale * tx, -scale * ty, -scale * tz


@kernel
def _corners(corners, t):
    """The three corners of triangle t from the (T, 9) table of ``collider_contacts``."""
    return (corners[t, 0], corners[t, 1], corners[t, 2], corners[t, 3], corners[t, 4],
            corners[t, 5], corners[t, 6], corners[t, 7], corners[t, 8])


@kernel
def face_normals(corners, out):
    """Unit normals (T, 3) of the triangles of a (T, 9) corner table, into ``out``; zero for a
    triangle collapsed to a line or a point (|(b - a) x (c - a)|^2 <= 1e-36 m^4)."""
    for t in range(corners.shape[0]):
        face_normal(corners, t, out)


@kernel
def face_normal(corners, t, out):
    """Row t of ``face_normals``."""
    ax, ay, az, bx, by, bz, cx, cy, cz = _corners(corners, t)
    nx, ny, nz = cross3(bx - ax, by - ay, bz - az, cx - ax, cy - ay, cz - az)
    length2 = nx * nx + ny * ny + nz * nz
    if length2 > TINY * TINY * TINY:
        inverse = 1.0 / math.sqrt(length2)
        out[t, 0], out[t, 1], out[t, 2] = nx * inverse, ny * inverse, nz * inverse
    else:
        out[t, 0] = out[t, 1] = out[t, 2] = 0.0


@kernel
def _unit_at(normal, normal_end, i, s):
    """Row i of two normal arrays interpolated at s and normalised (zero if it vanishes)."""
    nx = normal[i, 0] + s * (normal_end[i, 0] - normal[i, 0])
    ny = normal[i, 1] + s * (normal_end[i, 1] - normal[i, 1])
    nz = normal[i, 2] + s * (normal_end[i, 2] - normal[i, 2])
    length = math.sqrt(nx * nx + ny * ny + nz * nz)
    inverse = 1.0 / length if length > TINY else 0.0
    return nx * inverse, ny * inverse, nz * inverse


@kernel
def feature_normal(region, t, s, nx, ny, nz, triangles, triangle_edges, vertex_normal,
                    vertex_normal_end, edge_normal, edge_normal_end):
    """Pseudo-normal of the closest feature (``closest_on_triangle`` region) at fraction s."""
    if region == 0:
        return nx, ny, nz
    if region <= 3:
        return _unit_at(vertex_normal, vertex_normal_end, triangles[t, region - 1], s)
    return _unit_at(edge_normal, edge_normal_end, triangle_edges[t, region - 4], s)


@kernel
def over_face(px, py, pz, ax, ay, az, bx, by, bz, cx, cy, cz, hx, hy, hz):
    """(e_ab, e_bc, e_ca, plane) of p and triangle abc with unit normal h: (edge x (p - its
    start)) . h for the three edges, twice the areas of the sub-triangles seen from p (p is
    over the face, its nearest point the projection, iff all three are >= 0 and their sum,
    twice the area, > 0; they are then its barycentric weights of c, a, b times the sum),
    and the signed distance (p - a) . h to the triangle's plane [m]. Both contact kernels
    use this, so a face contact has the same bits whichever of them computes it."""
    apx, apy, apz = px - ax, py - ay, pz - az
    e_ab = (((by - ay) * apz - (bz - az) * apy) * hx + ((bz - az) * apx - (bx - ax) * apz)
            * hy + ((bx - ax) * apy - (by - ay) * apx) * hz)
    bpx, bpy, bpz = px - bx, py - by, pz - bz
    e_bc = (((cy - by) * bpz - (cz - bz) * bpy) * hx + ((cz - bz) * bpx - (cx - bx) * bpz)
            * hy + ((cx - bx) * bpy - (cy - by) * bpx) * hz)
    cpx, cpy, cpz = px - cx, py - cy, pz - cz
    e_ca = (((ay - cy) * cpz - (az - cz) * cpy) * hx + ((az - cz) * cpx - (ax - cx) * cpz)
            * hy + ((ax - cx) * cpy - (ay - cy) * cpx) * hz)
    return e_ab, e_bc, e_ca, apx * hx + apy * hy + apz * hz


@kernel
def face_side(px, py, pz, yx, yy, yz, hx, hy, hz, plane, closed):
    """Normal n and signed distance [m] of a contact with the face (unit normal h, p at
    ``plane`` from its plane): a closed mesh's outside is where h points; a shell is left
    on the side the particle came from (y: where it was, relative to the face)."""
    if closed:
        return hx, hy, hz, plane
    side = (yx - px) * hx + (yy - py) * hy + (yz - pz) * hz + plane
    if side == 0.0:
        side = plane
    sign = -1.0 if side < 0.0 else 1.0
    return sign * hx, sign * hy, sign * hz, sign * plane


@kernel
def point_motion(fraction, u0, u1, u2, t, triangles, vertices, vertices_end):
    """Motion [m] over one substep (``fraction`` of the frame) of the point with barycentric
    weights u0, u1, u2 on triangle t, its corners moving linearly from ``vertices`` to
    ``vertices_end`` over the frame. Shared by every contact kernel: the same bits."""
    i0, i1, i2 = triangles[t, 0], triangles[t, 1], triangles[t, 2]
    mx = fraction * (u0 * (vertices_end[i0, 0] - vertices[i0, 0]) + u1 * (
        vertices_end[i1, 0] - vertices[i1, 0]) + u2 * (
        vertices_end[i2, 0] - vertices[i2, 0]))
    my = fraction * (u0 * (vertices_end[i0, 1] - vertices[i0, 1]) + u1 * (
        vertices_end[i1, 1] - vertices[i1, 1]) + u2 * (
        vertices_end[i2, 1] - vertices[i2, 1]))
    mz = fraction * (u0 * (vertices_end[i0, 2] - vertices[i0, 2]) + u1 * (
        vertices_end[i1, 2] - vertices[i1, 2]) + u2 * (
        vertices_end[i2, 2] - vertices[i2, 2]))
    return mx, my, mz


@kernel
def collider_contacts(x, v, w, radius, substep, mesh, faces, normals, collider_params, lists,
                      selection, margins, nearest):
    """Project every particle out of the collider triangles it may touch, at the end of the
    substep that ends at frame fraction s1 (``groups.substep``: s1, ``fraction`` =
    1 / substeps, velocity_scale, push, max_motion, triangle_motion).

    x, v (N, 3) [m], [m/s] in place; w (N,) [1/kg] (pinned particles are left alone); radius
    (N,) [m]; the colliders: their ``mesh`` (vertices at the start and end of the frame),
    ``faces`` (corners and face normals at s1), ``normals`` (the pseudo-normals of
    ``mesh_normals``), as ``groups`` declares them;
    collider_params (C, 4): thickness [m], mu_s, mu_k, closed (1.0) of each collider;
    ``lists`` the candidates (``groups.lists``: particle i's candidate triangles are
    candidates[spans[i, 0]:spans[i, 1]], ``collider_candidates``; distance scratch, squared
    distances [m^2] or lower bounds of them); push (push_max, residue) [m] (``push_out``):
    the largest correction beyond the substep's approach, and the overlap undone with
    velocity; ``selection`` (``groups.selection``): moved (N,) set to 1 where a particle
    moved; with ``selective``, only particles flagged in ``only`` (N,) are looked at; extra
    (N,) [m] a move of this substep to count as approach besides the particle's path (what
    the rope's re-solve moved it, else 0); max_motion [m] the largest motion of a collider
    vertex over a substep (0 for static colliders); ``margins``: thickest [m] the largest
    collider thickness, beyond [m] how much farther than r + thickness the nearest triangle
    may be and still hold a particle that is inside a closed mesh or behind a shell (the
    candidate lists hold every triangle that near); ``nearest`` (``groups.nearest``) the
    cache ``resting_contacts`` reads, written here for every particle looked at: its nearest
    triangle (or ``CACHE_NOTHING``, ``CACHE_UNKNOWN``), where it was, a lower bound of its
    distance to every other candidate, and when (frame fraction); the second nearest
    triangle (its distance exact, else ``CACHE_UNKNOWN``) and a lower bound of the distance
    of every candidate but these two; a lower bound of the distance of every candidate
    (``kernels_resting``: while the particle's drift leaves it out of reach, there is
    nothing to do).

    The contact of each particle is, first, a triangle it crossed this substep (its path
    relative to the triangle, from x_prev to x, goes through it; from outside for a closed
    mesh), else its nearest triangle: C = d - (r + thickness) with d signed (inside a closed
    mesh, or the far side of a shell, is negative). Then the other triangles it is still
    within r + thickness of, from outside (concave corners), and friction.
    """
    s1, fraction, velocity_scale, push, max_motion, triangle_motion = substep
    vertices, vertices_end, triangles, triangle_collider = mesh
    corners, face_normal = faces
    triangle_edges, vertex_normal, vertex_normal_end, edge_normal, edge_normal_end = normals
    spans, candidates, distance = lists
    moved, only, selective, extra = selection
    thickest, beyond = margins
    (cache_triangle, cache_point, cache_room, cache_time, cache_second, cache_room_second,
     cache_near) = nearest
    inverse_scale = 1.0 / velocity_scale
    for i in range(x.shape[0]):
        k0 = spans[i, 0]
        k1 = spans[i, 1]
        if selective and only[i] == 0:
            continue
        if k0 == k1 or not w[i] > 0.0:
            cache_triangle[i] = CACHE_NOTHING
            continue
        r = radius[i]
        px, py, pz = x[i, 0], x[i, 1], x[i, 2]
        ox = px - v[i, 0] * inverse_scale  # x_prev of the substep
        oy = py - v[i, 1] * inverse_scale
        oz = pz - v[i, 2] * inverse_scale
        # a path relative to a triangle longer than r (which could jump a shell) needs the
        # particle's own motion plus the fastest triangle's to exceed r
        moved2 = (px - ox) ** 2 + (py - oy) ** 2 + (pz - oz) ** 2
        may_cross = math.sqrt(moved2) + max_motion > r
        # a plane nearer than this gives the cache too little room: the distance instead
        sure2 = (2.0 * r + thickest) ** 2
        best = np.int64(-1)  # (not literals: feature_normal and point_motion compile once)
        best_d2 = np.inf
        best_hit = 2.0
        hit = np.int64(-1)
        qx = qy = qz = u0 = u1 = u2 = 0.0
        region = np.int64(0)
        # the two smallest lower bounds of the squared distances of the other candidates (the
        # smaller one's triangle, and whether it is exact), for the caches
        second, second_t, second_exact, third = np.inf, -1, False, np.inf
        collapsed = False
        for k in range(k0, k1):
            t = candidates[k]
            nx, ny, nz = face_normal[t, 0], face_normal[t, 1], face_normal[t, 2]
            if nx == 0.0 and ny == 0.0 and nz == 0.0:
                distance[k] = np.inf  # collapsed while deforming: no normal, skip it
                second, second_t, third = 0.0, -1, 0.0  # it may open up: no room for caches
                collapsed = True
                continue
            ax, ay, az, bx, by, bz, cx, cy, cz = _corners(corners, t)
            plane = (px - ax) * nx + (py - ay) * ny + (pz - az) * nz
            if plane * plane >= best_d2 and plane * plane >= sure2 and not may_cross:
                # its plane is no nearer than the best triangle: neither is the triangle
                distance[k] = plane * plane
                bound = plane * plane
                if bound < second:
                    second, second_t, second_exact, third = bound, t, False, second
                elif bound < third:
                    third = bound
                continue
            fx, fy, fz, b0, b1, b2, feature = closest_on_triangle(px, py, pz, ax, ay, az, bx,
                                                                  by, bz, cx, cy, cz)
            d2 = (px - fx) ** 2 + (py - fy) ** 2 + (pz - fz) ** 2
            distance[k] = d2
            if d2 < best_d2:
                bound, bound_t = best_d2, best  # the old best joins the others
                best, best_d2 = t, d2
                qx, qy, qz, u0, u1, u2, region = fx, fy, fz, b0, b1, b2, feature
            else:
                bound, bound_t = d2, t
            if bound < second:
                second, second_t, second_exact, third = bound, bound_t, True, second
            elif bound < third:
                third = bound
            # relative path of this substep: the triangle's motion (its centroid's) removed
            if not may_cross:
                continue
            yx = ox + triangle_motion[t, 0]
            yy = oy + triangle_motion[t, 1]
            yz = oz + triangle_motion[t, 2]
            reach = r + collider_params[triangle_collider[t], 0]
            if (px - yx) ** 2 + (py - yy) ** 2 + (pz - yz) ** 2 > reach * reach:
                closed = collider_params[triangle_collider[t], 3] > 0.5
                # into a closed mesh from outside or from its surface (a point of radius 0
                # lies on it after a contact)
                if not closed or (yx - ax) * nx + (yy - ay) * ny + (yz - az) * nz >= 0.0:
                    crossing = segment_crosses(yx, yy, yz, x[i], ax, ay, az, bx, by, bz,
                                                cx, cy, cz)
                    if crossing >= 0.0 and crossing < best_hit:
                        best_hit, hit = crossing, t
        if best < 0:
            cache_triangle[i] = CACHE_UNKNOWN
            continue
        # the nearest triangle and how much nearer it is than any other: while the particle
        # stays over its face within that room, ``resting_contacts`` does all there is to do
        cache_triangle[i] = best
        cache_point[i, 0], cache_point[i, 1], cache_point[i, 2] = px, py, pz
        cache_room[i] = math.sqrt(second) * (1.0 - ROOM_SAFETY) - ROOM_SAFETY
        cache_time[i] = s1
        # and the second nearest, when its distance is exact (``resting_two_faces``)
        cache_second[i] = second_t if second_exact else CACHE_UNKNOWN
        cache_room_second[i] = math.sqrt(third) * (1.0 - ROOM_SAFETY) - ROOM_SAFETY
        cache_near[i] = (0.0 if collapsed
                         else math.sqrt(best_d2) * (1.0 - ROOM_SAFETY) - ROOM_SAFETY)
        primary = hit if hit >= 0 else best
        collider = triangle_collider[primary]
        contact = r + collider_params[collider, 0]
        closed = collider_params[collider, 3] > 0.5
        ax, ay, az = corners[primary, 0], corners[primary, 1], corners[primary, 2]
        fx, fy, fz = face_normal[primary, 0], face_normal[primary, 1], face_normal[primary, 2]
        face = False
        plane = 0.0
        if hit >= 0:  # move with the triangle's centroid, leave on the side it came from
            u0 = u1 = u2 = 1.0 / 3.0
            qx, qy, qz = ax, ay, az
        else:
            # over the nearest triangle's face: its projection, in ``resting_contacts``'s bits
            e_ab, e_bc, e_ca, plane = over_face(
                px, py, pz, ax, ay, az, corners[primary, 3], corners[primary, 4],
                corners[primary, 5], corners[primary, 6], corners[primary, 7],
                corners[primary, 8], fx, fy, fz)
            total = e_ab + e_bc + e_ca
            if e_ab >= 0.0 and e_bc >= 0.0 and e_ca >= 0.0 and total > 0.0:
                face = True
                u0, u1 = e_bc / total, e_ca / total
                u2 = 1.0 - u0 - u1
                best_d2 = plane * plane
            if best_d2 > (contact + beyond) * (contact + beyond):
                # nearest out of reach: no contact. Every list a broad phase may hand over
                # holds the triangles within reach: more candidates then change nothing
                continue
        mx = my = mz = 0.0  # the contact point's motion over the substep (none if static)
        if max_motion > 0.0:
            mx, my, mz = point_motion(fraction, u0, u1, u2, primary, triangles, vertices,
                                       vertices_end)
        yx, yy, yz = ox + mx, oy + my, oz + mz
        ex, ey, ez = px - qx, py - qy, pz - qz
        gap = math.sqrt(ex * ex + ey * ey + ez * ez)
        if face:
            nx, ny, nz, signed = face_side(px, py, pz, yx, yy, yz, fx, fy, fz, plane, closed)
        elif hit >= 0 or (not closed and region == 0):
            side = (yx - qx) * fx + (yy - qy) * fy + (yz - qz) * fz
            if side == 0.0:
                side = ex * fx + ey * fy + ez * fz
            # a closed mesh is entered only from outside (the crossing test): out it goes
            sign = 1.0 if closed else (-1.0 if side < 0.0 else 1.0)
            nx, ny, nz = sign * fx, sign * fy, sign * fz
            signed = ex * nx + ey * ny + ez * nz
        elif closed:
            gx, gy, gz = feature_normal(region, primary, s1, fx, fy, fz, triangles,
                                         triangle_edges, vertex_normal, vertex_normal_end,
                                         edge_normal, edge_normal_end)
            sign = -1.0 if ex * gx + ey * gy + ez * gz < 0.0 else 1.0
            if gap > TINY:
                nx, ny, nz = sign * ex / gap, sign * ey / gap, sign * ez / gap
            else:
                nx, ny, nz = gx, gy, gz
            signed = sign * gap
        else:  # a shell's rim (edge or corner): round
            if gap > TINY:
                nx, ny, nz = ex / gap, ey / gap, ez / gap
            else:
                nx, ny, nz = fx, fy, fz
            signed = gap
        if signed >= contact:
            continue
        approach = max(-((px - yx) * nx + (py - yy) * ny + (pz - yz) * nz), 0.0) + extra[i]
        depth, kept = push_out(contact - signed, approach, push)
        px += depth * nx
        py += depth * ny
        pz += depth * nz
        vx, vy, vz = kept * nx, kept * ny, kept * nz
        for k in range(k0, k1):
            t = candidates[k]
            shell = r + collider_params[triangle_collider[t], 0]
            if t == primary or not distance[k] < (shell + depth) * (shell + depth):
                continue
            ax, ay, az, bx, by, bz, cx, cy, cz = _corners(corners, t)
            hx, hy, hz = face_normal[t, 0], face_normal[t, 1], face_normal[t, 2]
            # its plane bounds the distance from below: the neighbours of the primary in a
            # smooth surface are that far already, and need no closest point
            if abs((px - ax) * hx + (py - ay) * hy + (pz - az) * hz) >= shell:
                continue
            gx, gy, gz, _, _, _, feature = closest_on_triangle(px, py, pz, ax, ay, az, bx, by,
                                                               bz, cx, cy, cz)
            ex, ey, ez = px - gx, py - gy, pz - gz
            gap = math.sqrt(ex * ex + ey * ey + ez * ez)
            reach = shell
            if not (gap > TINY and gap < reach):
                continue
            if collider_params[triangle_collider[t], 3] > 0.5:
                hx, hy, hz = feature_normal(feature, t, s1, hx, hy, hz,
                                             triangles, triangle_edges, vertex_normal,
                                             vertex_normal_end, edge_normal, edge_normal_end)
                if ex * hx + ey * hy + ez * hz <= 0.0:
                    continue  # this face sees the point from inside: not a contact
            elif ex * (ox - gx) + ey * (oy - gy) + ez * (oz - gz) <= 0.0:
                continue  # the far side of a shell: the primary contact handles it
            further = reach - gap
            px += further * ex / gap
            py += further * ey / gap
            pz += further * ez / gap
            vx += further * ex / gap
            vy += further * ey / gap
            vz += further * ez / gap
            depth += further
        tx, ty, tz = friction_correction(px - ox - mx, py - oy - my, pz - oz - mz, nx, ny, nz,
                                         depth, collider_params[collider, 1],
                                         collider_params[collider, 2])
        px += tx
        py += ty
        pz += tz
        v[i, 0] += (vx + tx) * velocity_scale
        v[i, 1] += (vy + ty) * velocity_scale
        v[i, 2] += (vz + tz) * velocity_scale
        x[i, 0], x[i, 1], x[i, 2] = px, py, pz
        moved[i] = 1
