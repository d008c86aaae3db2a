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

import numpy as np

from ..jit import kernel
from .kernels_collider import (
    CACHE_NOTHING,
    CACHE_UNKNOWN,
    collider_contacts,
    face_normals,
    friction_correction,
    push_out,
)
from .kernels_geometry import cross3, mesh_normals, segments_clear, segments_gap
from .kernels_resting import (
    GEOMETRY_ROWS,
    fill_resting,
    resting_contacts,
    resting_static,
    resting_two_faces,
)

__all__ = ["CACHE_NOTHING", "CACHE_UNKNOWN", "GEOMETRY_ROWS", "collider_contacts", "face_normals",
           "fill_resting", "mesh_normals", "plane_contacts", "resting_contacts",
           "resting_static", "resting_two_faces", "segment_contacts", "contact_motion"]

_TINY = 1e-12

CLEARANCE_SLACK = 1e-6
"""[m] added to what a pair's ends can have moved before its last test's margin lets it be
passed over (``segment_contacts``): far above the rounding of the gaps it compares."""


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
                     moved, only, selective, reach, clearance, backward):
    """Push apart rope segments closer than the sum of their radii, Gauss-Seidel in pair
    order (last to first if ``backward``: the caller alternates, since one fixed order drags
    a rope lying across others towards its later segments):

        C = |p - q| - (r_a(s) + r_b(t)) >= 0,  p = a0 + s (a1 - a0), q = b0 + t (b1 - b0)

    with p, q the closest points. The gradient of C is n at p, -n at q, spread to the ends with the
    barycentric weights, so

        W = (1 - s)^2 w_a0 + s^2 w_a1 + (1 - t)^2 w_b0 + t^2 w_b1,   dlambda = -C / W,
        dx_a0 = (1 - s) w_a0 n dlambda, ...,   dx_b1 = -t w_b1 n dlambda.

    Friction (one coefficient for sticking and sliding) acts on the relative tangential
    displacement of the closest points the same way. Push-out cap and velocity rule as in
    ``collider_contacts``; coincident segments separate along a fixed perpendicular. With
    ``selective``, only pairs with a particle flagged in ``only`` (N,) are looked at; the
    particles moved are flagged in ``moved``. Returns how many pairs were in contact.

    ``clearance`` = (margin (K,) [m], motion (N, 2) [m]): what each pair's last test left
    clear (``pair_clearance``), and each particle's move since the base positions those
    margins are measured from and its move in the substep (``contact_motion``; raised here as
    the contacts move particles). A pair whose margin exceeds what its ends can have moved
    since cannot be touching, within ``reach`` or crossed, so it is passed over: the same as
    testing it (which would change nothing), for a fraction of the cost. A pair ruled out by
    its midpoints (``segments_clear``) gets its margin from the bound that test gives, the
    rest from their gap. ``reach`` [m]: the margins also keep the pair that far from
    touching (the holds of ``solve.kernels_held`` pass over pairs by them)."""
    inverse_scale = 1.0 / velocity_scale
    margin, motion = clearance
    acted = 0
    last = pairs.shape[0] - 1
    for index in range(pairs.shape[0]):
        k = last - index if backward else index
        a0, a1 = edges[pairs[k, 0], 0], edges[pairs[k, 0], 1]
        b0, b1 = edges[pairs[k, 1], 0], edges[pairs[k, 1], 1]
        if selective and only[a0] == 0 and only[a1] == 0 and only[b0] == 0 and only[b1] == 0:
            continue
        drift = pair_moved(motion, 0, a0, a1, b0, b1)
        if margin[k] > drift + pair_moved(motion, 1, a0, a1, b0, b1) + CLEARANCE_SLACK:
            continue
        apart, clear = segments_clear(x, radius, a0, a1, b0, b1)
        if apart:
            margin[k] = clear - drift - reach  # (``pair_clearance`` with a bound of the gap)
            continue
        s, t, dx, dy, dz, gap, contact = segments_gap(x, radius, a0, a1, b0, b1)
        margin[k] = pair_clearance(radius, a0, a1, b0, b1, gap, drift, reach)
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
        shift = math.sqrt(jx * jx + jy * jy + jz * jz)
        speed = math.sqrt(kx * kx + ky * ky + kz * kz) * inverse_scale
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
                motion[end, 0] += abs(scale) * shift
                motion[end, 1] += abs(scale) * speed
        acted += 1
    return acted


@kernel
def pair_moved(motion, column, a0, a1, b0, b1):
    """How far the pair of segments (a0, a1), (b0, b1) can have come nearer by the moves in
    ``motion[:, column]`` [m] (``contact_motion``): a segment's closest point moves at most
    as far as its farther-moving end, so the larger move of each segment's ends, summed.
    The one bound of a pair's drift the contacts and the holds (``solve.kernels_held``)
    pass pairs over by."""
    return (max(motion[a0, column], motion[a1, column])
            + max(motion[b0, column], motion[b1, column]))


@kernel
def pair_clearance(radius, a0, a1, b0, b1, gap, drift, reach):
    """What a pair's test at ``gap`` [m] leaves clear (``segment_contacts``' margin [m]):
    the gap less the most the pair's contact distance can be (the larger radius of each
    segment's ends), less ``reach`` [m], less ``drift`` [m] (how far the ends had moved from
    their base positions: the gap is bounded from there). A segment's closest point moves
    at most as far as its farther-moving end, so later, with the ends moved by ``drift'``
    from the base, the gap is at least margin + contact + reach - drift'; while margin
    exceeds drift' plus the ends' moves in the substep (which bound how far the pair can
    have passed through itself), the pair is clear of touching, of ``reach`` and of
    crossing."""
    return gap - drift - reach - (max(radius[a0], radius[a1]) + max(radius[b0], radius[b1]))


@kernel
def contact_motion(x, v, base, inverse_scale, motion):
    """Each particle's move from ``base`` (N, 3) [m] to x, and its velocity's move in a
    substep, |v| / velocity_scale [m], into ``motion`` (N, 2): bounds of how far a pair's
    ends can have moved since it was last tested (``segment_contacts``' clearance), taken
    at the start of each pass over the pairs. On flat views (C-contiguous arrays), so that
    the loop vectorises (a quarter of the time of the (N, 3) indexing)."""
    p, q, u, m = x.reshape(-1), base.reshape(-1), v.reshape(-1), motion.reshape(-1)
    for i in range(np.uint64(x.shape[0])):
        j = i * np.uint64(3)
        j1, j2 = j + np.uint64(1), j + np.uint64(2)
        dx = p[j] - q[j]
        dy = p[j1] - q[j1]
        dz = p[j2] - q[j2]
        k = i * np.uint64(2)
        m[k] = math.sqrt(dx * dx + dy * dy + dz * dz)
        m[k + np.uint64(1)] = math.sqrt(u[j] * u[j] + u[j1] * u[j1]
                                        + u[j2] * u[j2]) * inverse_scale


@kernel
def carry_margins(pairs, margin, new_pairs, new_margin):
    """The margins (``segment_contacts``' clearance) of ``new_pairs`` (K', 2) from those of
    ``pairs`` (K, 2) and ``margin`` (K,) [m]: a pair of both lists keeps its margin, a new
    one gets -inf (tested at its next pass); into ``new_margin`` (K',). Both lists in
    increasing (first, second) order, as the searches keep them. A margin is a bound from
    the base positions, whichever list the pair was tested in: valid while those stay."""
    k = 0
    for j in range(new_pairs.shape[0]):
        a, b = new_pairs[j, 0], new_pairs[j, 1]
        while k < pairs.shape[0] and (pairs[k, 0] < a or (pairs[k, 0] == a
                                                          and pairs[k, 1] < b)):
            k += 1
        same = k < pairs.shape[0] and pairs[k, 0] == a and pairs[k, 1] == b
        new_margin[j] = margin[k] if same else -np.inf
