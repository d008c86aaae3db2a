"""numba kernels of the contacts: the constraints, and the projection for planes and rope pairs.

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
moved into the surface, relative to it) plus push_max = push speed x h, so a rope that
starts inside a collider is pushed out at that speed instead of being shot out, while a
particle hit by a fast collider is moved the full distance; only the approach and a small
residue of the substep before (2 g h^2) become velocity (``kernels_collider.push_out``).

The mesh side (narrow phase against triangles) is ``kernels_collider``'s. Candidates come from
``kernels_broadphase`` and ``kernels_segments`` (hashed grids, redone only when a particle
strays from its predicted path), so the per-substep work grows with the contacts, not with
particles x triangles. Everything runs in a fixed order on one thread: same input, same
bits.

Every kernel takes all inputs as arguments (``cache=True`` freezes globals); divisions that
could meet zero are guarded, so degenerate input yields no correction instead of NaN.
"""

from __future__ import annotations

import math

from ..jit import kernel
from .kernels_collider import (
    CACHE_NOTHING,
    CACHE_UNKNOWN,
    collider_contacts,
    face_normals,
    friction_correction,
    push_out,
)
from .kernels_geometry import cross3, mesh_normals, segments_apart, segments_gap
from .kernels_resting import (
    GEOMETRY_ROWS,
    fill_resting,
    resting_contacts,
    resting_static,
    resting_two_faces,
)

__all__ = ["CACHE_NOTHING", "CACHE_UNKNOWN", "GEOMETRY_ROWS", "collider_contacts", "face_normals",
           "fill_resting", "mesh_normals", "plane_contacts", "resting_contacts",
           "resting_static", "resting_two_faces", "segment_contacts"]

_TINY = 1e-12


# ------------------------------------------------------------------ projection (per substep)


@kernel
def plane_contacts(x, v, w, radius, velocity_scale, planes, push, moved, only,
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
            depth, kept = push_out(contact - signed, approach, push)
            tx, ty, tz = friction_correction(dx + depth * nx, dy + depth * ny, dz + depth * nz,
                                             nx, ny, nz, depth, planes[p, 7], planes[p, 8])
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
    nx, ny, nz = cross3(ax, ay, az, bx, by, bz)
    length = math.sqrt(nx * nx + ny * ny + nz * nz)
    if not length > _TINY * _TINY:
        # a against the axis it is least aligned with
        if abs(ax) <= abs(ay) and abs(ax) <= abs(az):
            nx, ny, nz = cross3(ax, ay, az, 1.0, 0.0, 0.0)
        elif abs(ay) <= abs(az):
            nx, ny, nz = cross3(ax, ay, az, 0.0, 1.0, 0.0)
        else:
            nx, ny, nz = cross3(ax, ay, az, 0.0, 0.0, 1.0)
        length = math.sqrt(nx * nx + ny * ny + nz * nz)
        if not length > 0.0:
            return 0.0, 0.0, 1.0
    return nx / length, ny / length, nz / length


@kernel
def segment_contacts(x, v, w, radius, velocity_scale, edges, pairs, push, friction,
                     moved, only, selective, near, reach):
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
    particles moved are flagged in ``moved``, and the pairs found within ``reach`` [m] of
    touching (or crossed) in ``near`` (K,) (those the ropes' solve may hold,
    ``solve.kernels_held``). Returns how many pairs were in contact."""
    inverse_scale = 1.0 / velocity_scale
    acted = 0
    for k in range(pairs.shape[0]):
        a0, a1 = edges[pairs[k, 0], 0], edges[pairs[k, 0], 1]
        b0, b1 = edges[pairs[k, 1], 0], edges[pairs[k, 1], 1]
        if selective and only[a0] == 0 and only[a1] == 0 and only[b0] == 0 and only[b1] == 0:
            continue
        if segments_apart(x, radius, a0, a1, b0, b1, 0.0):
            continue
        s, t, dx, dy, dz, gap, contact = segments_gap(x, radius, a0, a1, b0, b1)
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
        if crossed or gap < contact + reach:
            near[k] = 1
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
        depth, kept = push_out(contact - gap, approach, push)
        fx, fy, fz = friction_correction(rx + depth * nx, ry + depth * ny, rz + depth * nz, nx,
                                         ny, nz, depth, friction, friction)
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
        acted += 1
    return acted
