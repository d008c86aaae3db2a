"""numba kernels of the contacts: broad phase (hashed uniform grid), narrow phase, projection.

Contacts are XPBD inequality constraints with zero compliance, solved once per substep after
the rope's own constraints (Macklin, Müller, Chentanez & Kim, "Unified particle physics for
real-time applications", SIGGRAPH 2014, sections 4.4 and 6.1):

    collider   C = d(x) - (r + thickness) >= 0      d: signed distance to the surface
    rope-rope  C = |p(s) - q(t)| - (r_a + r_b) >= 0  p, q closest points of two segments

A violated constraint moves the particle(s) along the contact normal n by -C (mass-weighted
for rope-rope, the collider being infinitely heavy). Friction is applied at position level
(Macklin et al. 2014 eq. 24): with dx_t the tangential displacement of the substep relative
to the collider and d the normal correction just applied,

    |dx_t| < mu_s d:  dx_t is undone (sticking)
    else:             dx_t is shortened by mu_k d (sliding)

Velocities follow from positions, as in every XPBD step: the rope kernels end a substep with
v = (x - x_prev) s (s = velocity_scale = exp(-damping h) / h), so a correction dx of x adds
s dx to v and x_prev = x - v / s is recovered without being stored.

Gentle push-out: a correction is capped at the approach of the substep (how far the particle
moved into the surface, relative to it) plus ``push_max`` = push speed x h, so a rope that
starts inside a collider is pushed out at that speed instead of being shot out, while a
particle hit by a fast collider is moved the full distance.

Candidates come from ``kernels_broadphase`` (hashed grid, redone only when a particle strays
from its predicted path), so the per-substep work grows with the contacts, not with
particles x triangles. Everything runs in a fixed order on one thread: same input, same
bits.

Every kernel takes all inputs as arguments (``cache=True`` freezes globals); divisions that
could meet zero are guarded, so degenerate input yields no correction instead of NaN.
"""

from __future__ import annotations

import math

import numpy as np

from .jit import kernel
from .kernels_geometry import (
    _cross,
    _segment_crosses,
    closest_on_segments,
    closest_on_triangle,
    mesh_normals,
)
from .topology import PARTICLE_V, PARTICLE_X

__all__ = ["collider_contacts", "face_normals", "gather_moved", "mesh_normals", "plane_contacts",
           "segment_contacts"]

_TINY = 1e-12


# ------------------------------------------------------------------ projection (per substep)


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
        ax, ay, az, bx, by, bz, cx, cy, cz = _corners(corners, t)
        nx, ny, nz = _cross(bx - ax, by - ay, bz - az, cx - ax, cy - ay, cz - az)
        length2 = nx * nx + ny * ny + nz * nz
        if length2 > _TINY * _TINY * _TINY:
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
    inverse = 1.0 / length if length > _TINY else 0.0
    return nx * inverse, ny * inverse, nz * inverse


@kernel
def _feature_normal(region, t, s, nx, ny, nz, triangles, triangle_edges, vertex_normal,
                    vertex_normal_end, edge_normal, edge_normal_end):
    """Pseudo-normal of the closest feature (``closest_on_triangle`` region) at fraction s."""
    if region == 0:
        return nx, ny, nz
    if region <= 3:
        return _unit_at(vertex_normal, vertex_normal_end, triangles[t, region - 1], s)
    return _unit_at(edge_normal, edge_normal_end, triangle_edges[t, region - 4], s)


@kernel
def _friction(dx, dy, dz, nx, ny, nz, depth, static, dynamic):
    """Position-level Coulomb friction (Macklin et al. 2014 eq. 24): the correction that
    undoes (static) or shortens by dynamic * depth (sliding) the tangential part of the
    relative displacement (dx, dy, dz) of a substep whose normal correction was ``depth``."""
    along = dx * nx + dy * ny + dz * nz
    tx, ty, tz = dx - along * nx, dy - along * ny, dz - along * nz
    slip = math.sqrt(tx * tx + ty * ty + tz * tz)
    if not slip > 0.0:
        return 0.0, 0.0, 0.0
    scale = 1.0 if slip < static * depth else min(dynamic * depth / slip, 1.0)
    return -scale * tx, -scale * ty, -scale * tz


@kernel
def collider_contacts(x, v, w, radius, velocity_scale, fraction, corners, face_normal,
                      vertices, vertices_end, triangle_motion, triangles, triangle_edges,
                      triangle_collider, vertex_normal, vertex_normal_end, edge_normal,
                      edge_normal_end, s1, collider_params, offsets, candidates, push_max,
                      distance, moved, only, selective, max_motion, extra):
    """Project every particle out of the collider triangles it may touch, at the end of the
    substep that ends at frame fraction s1 (``fraction`` = 1 / substeps).

    x, v (N, 3) [m], [m/s] in place; w (N,) [1/kg] (pinned particles are left alone); radius (N,)
    [m]; corners (T, 9) [m] the triangles' corners at s1 (contiguous: the hot loop reads one row per
    candidate instead of gathering three vertices), face_normal (T, 3) their unit normals at s1
    (zero for a collapsed triangle), vertices / vertices_end at the start and end of the frame,
    triangle_motion (T, 3) [m] each triangle's centroid displacement over a substep, triangles (T,
    3), triangle_edges (T, 3), triangle_collider (T,), the pseudo-normals of ``mesh_normals`` at the
    start and end of the frame; collider_params (C, 4): thickness [m], mu_s, mu_k, closed (1.0) of
    each collider; offsets/candidates from ``collider_candidates``; push_max [m] the largest
    correction beyond the substep's approach; distance (K,) scratch (squared distances [m^2], or
    lower bounds of them); moved (N,) set to 1 where a particle moved; with ``selective``, only
    particles flagged in ``only`` (N,) are looked at; max_motion [m] the largest motion of a
    collider vertex over a substep (0 for static colliders); extra (N,) [m] a move of this
    substep to count as approach besides the particle's path (what the rope's re-solve moved it,
    else 0).

    The contact of each particle is, first, a triangle it crossed this substep (its path
    relative to the triangle, from x_prev to x, goes through it; from outside for a closed
    mesh), else its nearest triangle: C = d - (r + thickness) with d signed (inside a closed
    mesh, or the far side of a shell, is negative). Then the other triangles it is still
    within r + thickness of, from outside (concave corners), and friction.
    """
    inverse_scale = 1.0 / velocity_scale
    for i in range(x.shape[0]):
        k0 = offsets[i]
        k1 = offsets[i + 1]
        if k0 == k1 or not w[i] > 0.0 or (selective and only[i] == 0):
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
        best = -1
        best_d2 = np.inf
        best_hit = 2.0
        hit = -1
        qx = qy = qz = u0 = u1 = u2 = 0.0
        region = 0
        for k in range(k0, k1):
            t = candidates[k]
            nx, ny, nz = face_normal[t, 0], face_normal[t, 1], face_normal[t, 2]
            if nx == 0.0 and ny == 0.0 and nz == 0.0:
                distance[k] = np.inf  # collapsed while deforming: no normal, skip it
                continue
            ax, ay, az, bx, by, bz, cx, cy, cz = _corners(corners, t)
            plane = (px - ax) * nx + (py - ay) * ny + (pz - az) * nz
            if plane * plane >= best_d2 and not may_cross:
                # its plane is no nearer than the best triangle: neither is the triangle
                distance[k] = plane * plane
                continue
            fx, fy, fz, b0, b1, b2, feature = closest_on_triangle(px, py, pz, ax, ay, az, bx,
                                                                  by, bz, cx, cy, cz)
            d2 = (px - fx) ** 2 + (py - fy) ** 2 + (pz - fz) ** 2
            distance[k] = d2
            if d2 < best_d2:
                best, best_d2 = t, d2
                qx, qy, qz, u0, u1, u2, region = fx, fy, fz, b0, b1, b2, feature
            # relative path of this substep: the triangle's motion (its centroid's) removed
            if not may_cross:
                continue
            yx = ox + triangle_motion[t, 0]
            yy = oy + triangle_motion[t, 1]
            yz = oz + triangle_motion[t, 2]
            reach = r + collider_params[triangle_collider[t], 0]
            if (px - yx) ** 2 + (py - yy) ** 2 + (pz - yz) ** 2 > reach * reach:
                closed = collider_params[triangle_collider[t], 3] > 0.5
                if not closed or (yx - ax) * nx + (yy - ay) * ny + (yz - az) * nz > 0.0:
                    crossing = _segment_crosses(yx, yy, yz, x[i], ax, ay, az, bx, by, bz,
                                                cx, cy, cz)
                    if crossing >= 0.0 and crossing < best_hit:
                        best_hit, hit = crossing, t
        if best < 0:
            continue
        primary = hit if hit >= 0 else best
        collider = triangle_collider[primary]
        contact = r + collider_params[collider, 0]
        closed = collider_params[collider, 3] > 0.5
        i0, i1, i2 = triangles[primary, 0], triangles[primary, 1], triangles[primary, 2]
        ax, ay, az = corners[primary, 0], corners[primary, 1], corners[primary, 2]
        fx, fy, fz = face_normal[primary, 0], face_normal[primary, 1], face_normal[primary, 2]
        if hit >= 0:  # move with the triangle's centroid, leave on the side it came from
            u0 = u1 = u2 = 1.0 / 3.0
            qx, qy, qz = ax, ay, az
        mx = my = mz = 0.0  # the contact point's motion over the substep (none if static)
        if max_motion > 0.0:
            mx = fraction * (u0 * (vertices_end[i0, 0] - vertices[i0, 0]) + u1 * (
                vertices_end[i1, 0] - vertices[i1, 0]) + u2 * (
                vertices_end[i2, 0] - vertices[i2, 0]))
            my = fraction * (u0 * (vertices_end[i0, 1] - vertices[i0, 1]) + u1 * (
                vertices_end[i1, 1] - vertices[i1, 1]) + u2 * (
                vertices_end[i2, 1] - vertices[i2, 1]))
            mz = fraction * (u0 * (vertices_end[i0, 2] - vertices[i0, 2]) + u1 * (
                vertices_end[i1, 2] - vertices[i1, 2]) + u2 * (
                vertices_end[i2, 2] - vertices[i2, 2]))
        yx, yy, yz = ox + mx, oy + my, oz + mz
        ex, ey, ez = px - qx, py - qy, pz - qz
        gap = math.sqrt(ex * ex + ey * ey + ez * ez)
        if hit >= 0 or (not closed and region == 0):
            side = (yx - qx) * fx + (yy - qy) * fy + (yz - qz) * fz
            if side == 0.0:
                side = ex * fx + ey * fy + ez * fz
            sign = -1.0 if side < 0.0 else 1.0
            nx, ny, nz = sign * fx, sign * fy, sign * fz
            signed = ex * nx + ey * ny + ez * nz
        elif closed:
            gx, gy, gz = _feature_normal(region, primary, s1, fx, fy, fz, triangles,
                                         triangle_edges, vertex_normal, vertex_normal_end,
                                         edge_normal, edge_normal_end)
            sign = -1.0 if ex * gx + ey * gy + ez * gz < 0.0 else 1.0
            if gap > _TINY:
                nx, ny, nz = sign * ex / gap, sign * ey / gap, sign * ez / gap
            else:
                nx, ny, nz = gx, gy, gz
            signed = sign * gap
        else:  # a shell's rim (edge or corner): round
            if gap > _TINY:
                nx, ny, nz = ex / gap, ey / gap, ez / gap
            else:
                nx, ny, nz = fx, fy, fz
            signed = gap
        if signed >= contact:
            continue
        approach = max(-((px - yx) * nx + (py - yy) * ny + (pz - yz) * nz), 0.0) + extra[i]
        depth = min(contact - signed, approach + push_max)
        # only the part that undoes this substep's approach changes the velocity: the rest
        # is a gentle push-out that must not launch the rope
        kept = min(depth, approach)
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
            if not (gap > _TINY and gap < reach):
                continue
            if collider_params[triangle_collider[t], 3] > 0.5:
                hx, hy, hz = _feature_normal(feature, t, s1, hx, hy, hz,
                                             triangles, triangle_edges, vertex_normal,
                                             vertex_normal_end, edge_normal, edge_normal_end)
                if ex * hx + ey * hy + ez * hz <= 0.0:
                    continue  # this face sees the point from inside: not a contact
            elif ex * (ox - gx) + ey * (oy - gy) + ez * (oz - gz) <= 0.0:
                continue  # the far side of a shell: the primary contact handles it
            push = reach - gap
            px += push * ex / gap
            py += push * ey / gap
            pz += push * ez / gap
            vx += push * ex / gap
            vy += push * ey / gap
            vz += push * ez / gap
            depth += push
        tx, ty, tz = _friction(px - ox - mx, py - oy - my, pz - oz - mz, nx, ny, nz, depth,
                               collider_params[collider, 1], collider_params[collider, 2])
        px += tx
        py += ty
        pz += tz
        v[i, 0] += (vx + tx) * velocity_scale
        v[i, 1] += (vy + ty) * velocity_scale
        v[i, 2] += (vz + tz) * velocity_scale
        x[i, 0], x[i, 1], x[i, 2] = px, py, pz
        moved[i] = 1


@kernel
def plane_contacts(x, v, w, radius, velocity_scale, planes, push_max, moved, only,
                   selective, extra):
    """Keep every free particle above each plane: C = (x - p) . n - (r + thickness) >= 0.

    planes (P, 9): point (3) [m], unit normal (3), thickness [m], mu_s, mu_k. Same push-out
    cap, friction, ``only`` and ``extra`` as ``collider_contacts``; planes are static."""
    inverse_scale = 1.0 / velocity_scale
    for i in range(x.shape[0]):
        if not w[i] > 0.0 or (selective and only[i] == 0):
            continue
        for p in range(planes.shape[0]):
            nx, ny, nz = planes[p, 3], planes[p, 4], planes[p, 5]
            signed = ((x[i, 0] - planes[p, 0]) * nx + (x[i, 1] - planes[p, 1]) * ny
                      + (x[i, 2] - planes[p, 2]) * nz)
            contact = radius[i] + planes[p, 6]
            if signed >= contact:
                continue
            dx = v[i, 0] * inverse_scale
            dy = v[i, 1] * inverse_scale
            dz = v[i, 2] * inverse_scale
            approach = max(-(dx * nx + dy * ny + dz * nz), 0.0) + extra[i]
            depth = min(contact - signed, approach + push_max)
            kept = min(depth, approach)
            tx, ty, tz = _friction(dx + depth * nx, dy + depth * ny, dz + depth * nz, nx, ny,
                                   nz, depth, planes[p, 7], planes[p, 8])
            x[i, 0] += depth * nx + tx
            x[i, 1] += depth * ny + ty
            x[i, 2] += depth * nz + tz
            v[i, 0] += (kept * nx + tx) * velocity_scale
            v[i, 1] += (kept * ny + ty) * velocity_scale
            v[i, 2] += (kept * nz + tz) * velocity_scale
            moved[i] = 1


@kernel
def _perpendicular(ax, ay, az, bx, by, bz):
    """A unit vector normal to both a and b (any normal to a if they are parallel)."""
    nx, ny, nz = _cross(ax, ay, az, bx, by, bz)
    length = math.sqrt(nx * nx + ny * ny + nz * nz)
    if not length > _TINY * _TINY:
        # a against the axis it is least aligned with
        if abs(ax) <= abs(ay) and abs(ax) <= abs(az):
            nx, ny, nz = _cross(ax, ay, az, 1.0, 0.0, 0.0)
        elif abs(ay) <= abs(az):
            nx, ny, nz = _cross(ax, ay, az, 0.0, 1.0, 0.0)
        else:
            nx, ny, nz = _cross(ax, ay, az, 0.0, 0.0, 1.0)
        length = math.sqrt(nx * nx + ny * ny + nz * nz)
        if not length > 0.0:
            return 0.0, 0.0, 1.0
    return nx / length, ny / length, nz / length


@kernel
def segment_contacts(x, v, w, radius, velocity_scale, edges, pairs, push_max, friction,
                     moved, only, selective):
    """Push apart rope segments closer than the sum of their radii, Gauss-Seidel in pair
    order: C = |p - q| - (r_a(s) + r_b(t)) >= 0 with p = a0 + s (a1 - a0), q = b0 + t (b1 - b0)
    the closest points. The gradient of C is n at p, -n at q, spread to the ends with the
    barycentric weights, so

        W = (1 - s)^2 w_a0 + s^2 w_a1 + (1 - t)^2 w_b0 + t^2 w_b1,   dlambda = -C / W,
        dx_a0 = (1 - s) w_a0 n dlambda, ...,   dx_b1 = -t w_b1 n dlambda.

    Friction (one coefficient for sticking and sliding) acts on the relative tangential
    displacement of the closest points the same way. Push-out cap and velocity rule as in
    ``collider_contacts``; coincident segments separate along a fixed perpendicular. With
    ``selective``, only pairs with a particle flagged in ``only`` (N,) are looked at; the
    particles moved are flagged in ``moved``."""
    inverse_scale = 1.0 / velocity_scale
    for k in range(pairs.shape[0]):
        a0, a1 = edges[pairs[k, 0], 0], edges[pairs[k, 0], 1]
        b0, b1 = edges[pairs[k, 1], 0], edges[pairs[k, 1], 1]
        if selective and only[a0] == 0 and only[a1] == 0 and only[b0] == 0 and only[b1] == 0:
            continue
        # most candidate pairs are apart in any one substep: midpoints farther than the half
        # lengths plus the radii rule the pair out for the price of two square roots
        half_a2 = 0.25 * ((x[a1, 0] - x[a0, 0]) ** 2 + (x[a1, 1] - x[a0, 1]) ** 2
                          + (x[a1, 2] - x[a0, 2]) ** 2)
        half_b2 = 0.25 * ((x[b1, 0] - x[b0, 0]) ** 2 + (x[b1, 1] - x[b0, 1]) ** 2
                          + (x[b1, 2] - x[b0, 2]) ** 2)
        mid2 = 0.25 * ((x[a0, 0] + x[a1, 0] - x[b0, 0] - x[b1, 0]) ** 2
                       + (x[a0, 1] + x[a1, 1] - x[b0, 1] - x[b1, 1]) ** 2
                       + (x[a0, 2] + x[a1, 2] - x[b0, 2] - x[b1, 2]) ** 2)
        bound = (math.sqrt(half_a2) + math.sqrt(half_b2) + max(radius[a0], radius[a1])
                 + max(radius[b0], radius[b1]))
        if mid2 >= bound * bound:
            continue
        s, t = closest_on_segments(x, a0, a1, b0, b1)
        dx = (x[a0, 0] + s * (x[a1, 0] - x[a0, 0])) - (x[b0, 0] + t * (x[b1, 0] - x[b0, 0]))
        dy = (x[a0, 1] + s * (x[a1, 1] - x[a0, 1])) - (x[b0, 1] + t * (x[b1, 1] - x[b0, 1]))
        dz = (x[a0, 2] + s * (x[a1, 2] - x[a0, 2])) - (x[b0, 2] + t * (x[b1, 2] - x[b0, 2]))
        gap = math.sqrt(dx * dx + dy * dy + dz * dz)
        contact = (radius[a0] + s * (radius[a1] - radius[a0])
                   + radius[b0] + t * (radius[b1] - radius[b0]))
        c0, c1, c2, c3 = 1.0 - s, s, -(1.0 - t), -t  # gradient weights of the four ends
        # relative displacement of the closest points over the substep
        rx = ry = rz = 0.0
        for end, c in ((a0, c0), (a1, c1), (b0, c2), (b1, c3)):
            rx += c * v[end, 0] * inverse_scale
            ry += c * v[end, 1] * inverse_scale
            rz += c * v[end, 2] * inverse_scale
        # Passed through each other in this substep (the rope's own solve can snap a taut
        # rope through a heavy one)? Then the gap at the substep's start, d - r, points the
        # other way and the segments overlap sideways: the contact is on the side they came
        # from, at the signed distance along that normal.
        px, py, pz = dx - rx, dy - ry, dz - rz
        before = math.sqrt(px * px + py * py + pz * pz)
        crossed = False
        if px * dx + py * dy + pz * dz < 0.0 and before > _TINY:
            nx, ny, nz = px / before, py / before, pz / before
            signed = dx * nx + dy * ny + dz * nz
            lx, ly, lz = dx - signed * nx, dy - signed * ny, dz - signed * nz
            crossed = lx * lx + ly * ly + lz * lz < contact * contact
        if crossed:
            gap = signed
        elif gap >= contact:
            continue
        elif gap > _TINY:
            nx, ny, nz = dx / gap, dy / gap, dz / gap
        else:
            nx, ny, nz = _perpendicular(x[a1, 0] - x[a0, 0], x[a1, 1] - x[a0, 1],
                                        x[a1, 2] - x[a0, 2], x[b1, 0] - x[b0, 0],
                                        x[b1, 1] - x[b0, 1], x[b1, 2] - x[b0, 2])
        W = c0 * c0 * w[a0] + c1 * c1 * w[a1] + c2 * c2 * w[b0] + c3 * c3 * w[b1]
        if not W > 0.0:
            continue
        approach = max(-(rx * nx + ry * ny + rz * nz), 0.0)
        depth = min(contact - gap, approach + push_max)
        kept = min(depth, approach)
        fx, fy, fz = _friction(rx + depth * nx, ry + depth * ny, rz + depth * nz, nx, ny, nz,
                               depth, friction, friction)
        # the move of the four ends per unit of correction of the closest points' gap
        jx = (depth * nx + fx) / W
        jy = (depth * ny + fy) / W
        jz = (depth * nz + fz) / W
        kx = (kept * nx + fx) / W * velocity_scale
        ky = (kept * ny + fy) / W * velocity_scale
        kz = (kept * nz + fz) / W * velocity_scale
        for end, c in ((a0, c0), (a1, c1), (b0, c2), (b1, c3)):
            scale = c * w[end]
            x[end, 0] += scale * jx
            x[end, 1] += scale * jy
            x[end, 2] += scale * jz
            v[end, 0] += scale * kx
            v[end, 1] += scale * ky
            v[end, 2] += scale * kz
            if scale != 0.0:
                moved[end] = 1


@kernel
def gather_moved(buffer, particle_base, moved, x, v, lanes):
    """Copy x, v of the particles flagged in ``moved`` into the lane buffer (``particle_base``
    (N,) the buffer index of field 0 of each particle, -1 outside the lanes) and clear the
    flags: after contacts only the particles they moved need to go back."""
    for i in range(moved.shape[0]):
        if moved[i]:
            moved[i] = 0
            base = particle_base[i]
            if base >= 0:
                for c in range(3):
                    buffer[base + (PARTICLE_X + c) * lanes] = x[i, c]
                    buffer[base + (PARTICLE_V + c) * lanes] = v[i, c]
