"""numba kernels of the common collider contacts: a particle resting on a face, or two.

A particle that stays over the face of the triangle that was nearest when
``kernels_collider.collider_contacts`` last looked at it, while no other candidate can have
come nearer (their distances, then, bound from below, minus how far the particle and the
collider have moved since: ``room``), has that face as its only contact. A rope lying on
the ground or wrapped round a collider is almost all such particles. Its contact is
computed here with the general kernel's arithmetic for a face contact (``over_face``,
``face_side``, ``friction_correction``, in the same order), so it has the same bits; the
particles that do not qualify are flagged in ``rest`` for the general kernel.

Two variants: ``resting_static``, for static colliders, reads the cached triangle's corners,
normal and contact parameters from per-particle rows (``fill_resting`` copies them when the
cache changes) and has no branch, so LLVM runs it 8 particles at a time (5-7 ns per particle
against 26 for the scalar loop); ``resting_contacts`` for moving colliders, whose triangles
change every substep, gathers them and follows the contact point's motion (and serves the
selective passes, which look at few particles). Then ``resting_two_faces`` takes, of the
particles these hand over, those resting on two faces (a valley, an edge: the cached nearest
face and the cached second nearest triangle, every other candidate out of reach), again in
the general kernel's own arithmetic, step by step.
"""

from __future__ import annotations

import math

import numpy as np

from ..jit import kernel
from .kernels_collider import (
    CACHE_NOTHING,
    ROOM_SAFETY,
    TINY,
    face_side,
    feature_normal,
    friction_correction,
    over_face,
    point_motion,
    push_out,
)
from .kernels_geometry import closest_on_triangle

__all__ = ["fill_resting", "resting_contacts", "resting_static", "resting_two_faces",
           "GEOMETRY_ROWS"]

GEOMETRY_ROWS = 16
"""Rows of the per-particle copy of its cached triangle: corners a, b, c (9) [m], unit
normal (3), contact distance r + thickness [m], mu_s, mu_k, closed (1.0)."""


@kernel
def _out_of_reach(near, drift, r, beyond_contact, path):
    """Whether every collider candidate of a particle is out of reach, of the particle and,
    when its path this substep is longer than r (it may cross a triangle), of the path too:
    ``near`` [m] the cached lower bound of their distances, ``drift`` [m] how far the
    particle and the collider may have moved since, ``beyond_contact`` [m] thickest +
    beyond. ``collider_contacts`` then finds no crossing and no triangle within reach."""
    return near - drift > r + beyond_contact + (path if path > r else 0.0)


@kernel
def fill_resting(flags, cache_triangle, corners, face_normal, triangle_collider,
                 collider_params, radius, geometry):
    """Copy the cached triangle of every particle flagged in ``flags`` (N,) into its column
    of ``geometry`` (GEOMETRY_ROWS, N) (see there), for ``resting_static``."""
    for i in range(flags.shape[0]):
        t = cache_triangle[i]
        if flags[i] == 0 or t < 0:
            continue
        for k in range(9):
            geometry[k, i] = corners[t, k]
        for k in range(3):
            geometry[9 + k, i] = face_normal[t, k]
        collider = triangle_collider[t]
        geometry[12, i] = radius[i] + collider_params[collider, 0]
        geometry[13, i] = collider_params[collider, 1]
        geometry[14, i] = collider_params[collider, 2]
        geometry[15, i] = collider_params[collider, 3]


@kernel
def resting_static(x, v, count, radius, substep, margins, friction, selection, nearest,
                   geometry, rest):
    """``resting_contacts`` for static colliders, without a branch: every quantity is
    computed for every particle and selects keep what applies (8 particles per instruction).

    x, v flat (3 count,) views of the (count, 3) arrays [m], [m/s]; ``geometry``
    (``GEOMETRY_ROWS``, count) ``fill_resting``'s table, one array (its 16 rows as arguments
    cost 0.6 us more per call, measured); friction 1.0, or 0.0 for the
    frictionless pass; the other arguments as ``resting_contacts``. Returns how many
    particles were flagged in ``rest``."""
    s1, fraction, velocity_scale, push, max_motion, triangle_motion = substep
    moved, only, selective, extra = selection
    thickest, beyond = margins
    (cache_triangle, cache_point, cache_room, cache_time, cache_second, cache_room_second,
     cache_near) = nearest
    # the rows of ``geometry``, as ``GEOMETRY_ROWS`` and ``fill_resting`` order them
    ax_, ay_, az_ = geometry[0], geometry[1], geometry[2]
    bx_, by_, bz_ = geometry[3], geometry[4], geometry[5]
    cx_, cy_, cz_ = geometry[6], geometry[7], geometry[8]
    hx_, hy_, hz_ = geometry[9], geometry[10], geometry[11]
    contact_, static_, dynamic_, closed_ = geometry[12], geometry[13], geometry[14], geometry[15]
    point = cache_point.reshape(-1)  # (flat, as x and v: the loop runs 8 particles at once)
    inverse_scale = 1.0 / velocity_scale
    left = 0
    for i in range(np.uint64(count)):
        j = i * np.uint64(3)
        t = cache_triangle[i]
        chosen = (not selective) or only[i] != 0
        r = radius[i]
        px, py, pz = x[j], x[j + np.uint64(1)], x[j + np.uint64(2)]
        ox = px - v[j] * inverse_scale  # x_prev of the substep
        oy = py - v[j + np.uint64(1)] * inverse_scale
        oz = pz - v[j + np.uint64(2)] * inverse_scale
        moved2 = (px - ox) ** 2 + (py - oy) ** 2 + (pz - oz) ** 2
        drift = (abs(px - point[j]) + abs(py - point[j + np.uint64(1)])
                 + abs(pz - point[j + np.uint64(2)]))
        room = cache_room[i] - drift
        # every candidate still out of reach: nothing to do
        far = chosen and t >= 0 and _out_of_reach(cache_near[i], drift, r, thickest + beyond,
                                                  math.sqrt(moved2))
        hx, hy, hz = hx_[i], hy_[i], hz_[i]
        e_ab, e_bc, e_ca, plane = over_face(px, py, pz, ax_[i], ay_[i], az_[i], bx_[i],
                                             by_[i], bz_[i], cx_[i], cy_[i], cz_[i], hx, hy, hz)
        total = e_ab + e_bc + e_ca
        contact = contact_[i]
        nx, ny, nz, signed = face_side(px, py, pz, ox, oy, oz, hx, hy, hz, plane,
                                        closed_[i] > 0.5)
        approach = max(-((px - ox) * nx + (py - oy) * ny + (pz - oz) * nz), 0.0) + extra[i]
        depth, kept = push_out(contact - signed, approach, push)
        fast = (chosen and t >= 0 and room > 0.0 and not math.sqrt(moved2) > r
                and e_ab >= 0.0 and e_bc >= 0.0 and e_ca >= 0.0 and total > 0.0
                and plane * plane < room * room
                and not room < (r + thickest + depth) * (1.0 + ROOM_SAFETY) + ROOM_SAFETY)
        touch = (fast and not plane * plane > (contact + beyond) * (contact + beyond)
                 and signed < contact)
        qx, qy, qz = px + depth * nx, py + depth * ny, pz + depth * nz
        tx, ty, tz = friction_correction(qx - ox, qy - oy, qz - oz, nx, ny, nz, depth,
                                         friction * static_[i], friction * dynamic_[i])
        x[j] = qx + tx if touch else px
        x[j + np.uint64(1)] = qy + ty if touch else py
        x[j + np.uint64(2)] = qz + tz if touch else pz
        v[j] += (kept * nx + tx) * velocity_scale if touch else 0.0
        v[j + np.uint64(1)] += (kept * ny + ty) * velocity_scale if touch else 0.0
        v[j + np.uint64(2)] += (kept * nz + tz) * velocity_scale if touch else 0.0
        moved[i] = 1 if touch else moved[i]
        flag = chosen and t != CACHE_NOTHING and not fast and not far
        rest[i] = 1 if flag else 0
        left += 1 if flag else 0
    return left


@kernel
def resting_contacts(x, v, w, radius, substep, mesh, faces, collider_params, selection,
                     margins, nearest, rest):
    """The contacts of the particles still over the face of the triangle that was nearest
    when ``collider_contacts`` last looked at them; the others are flagged in ``rest`` (N,)
    for it. Returns how many were flagged.

    Arguments as ``collider_contacts``. A particle qualifies when, with room =
    cache_room - |x - cache_point|_1 - max_motion x the substeps since cache_time (every
    other candidate is at least that far: distances change no faster than the particle and
    the collider move), it has not moved farther than r in the substep (no crossing to look
    for), it lies over the cached triangle's face (inside its three edge planes, so the
    nearest point is its projection, at the distance |plane|), |plane| < room (the cached
    triangle is still the nearest), and room >= r + thickest + the correction (no other
    triangle within reach after it: no concave corner). Its contact is then the face's,
    exactly as ``collider_contacts`` computes it for a face: the normal n of the face (of a
    shell: on the side the particle came from), C = plane . n - (r +
    thickness), push-out cap and friction.
    """
    s1, fraction, velocity_scale, push, max_motion, triangle_motion = substep
    vertices, vertices_end, triangles, triangle_collider = mesh
    corners, face_normal = faces
    moved, only, selective, extra = selection
    thickest, beyond = margins
    (cache_triangle, cache_point, cache_room, cache_time, cache_second, cache_room_second,
     cache_near) = nearest
    inverse_scale = 1.0 / velocity_scale
    left = 0
    for i in range(x.shape[0]):
        rest[i] = 0
        t = cache_triangle[i]
        if t == CACHE_NOTHING or (selective and only[i] == 0):
            continue
        r = radius[i]
        px, py, pz = x[i, 0], x[i, 1], x[i, 2]
        ox = px - v[i, 0] * inverse_scale  # x_prev of the substep
        oy = py - v[i, 1] * inverse_scale
        oz = pz - v[i, 2] * inverse_scale
        moved2 = (px - ox) ** 2 + (py - oy) ** 2 + (pz - oz) ** 2
        # the 1-norm bounds the distance moved from above and needs no square root
        drift = (abs(px - cache_point[i, 0]) + abs(py - cache_point[i, 1])
                 + abs(pz - cache_point[i, 2]))
        room = cache_room[i] - drift
        if max_motion > 0.0:
            room -= max_motion * (s1 - cache_time[i]) / fraction
            drift += max_motion * (s1 - cache_time[i]) / fraction
        if t >= 0 and _out_of_reach(cache_near[i], drift, r, thickest + beyond,
                                    math.sqrt(moved2) + max_motion):
            continue  # every candidate out of reach (as ``collider_contacts``)
        if t < 0 or not room > 0.0 or math.sqrt(moved2) + max_motion > r:
            rest[i] = 1
            left += 1
            continue
        ax, ay, az = corners[t, 0], corners[t, 1], corners[t, 2]
        bx, by, bz = corners[t, 3], corners[t, 4], corners[t, 5]
        cx, cy, cz = corners[t, 6], corners[t, 7], corners[t, 8]
        hx, hy, hz = face_normal[t, 0], face_normal[t, 1], face_normal[t, 2]
        e_ab, e_bc, e_ca, plane = over_face(px, py, pz, ax, ay, az, bx, by, bz, cx, cy, cz,
                                             hx, hy, hz)
        total = e_ab + e_bc + e_ca  # twice the area (zero: collapsed, no normal)
        if not (e_ab >= 0.0 and e_bc >= 0.0 and e_ca >= 0.0 and total > 0.0
                and plane * plane < room * room):
            rest[i] = 1
            left += 1
            continue
        collider = triangle_collider[t]
        contact = r + collider_params[collider, 0]
        if plane * plane > (contact + beyond) * (contact + beyond):
            continue  # out of reach (as ``collider_contacts``)
        mx = my = mz = 0.0  # the contact point's motion over the substep (none if static)
        if max_motion > 0.0:
            u0, u1 = e_bc / total, e_ca / total
            u2 = 1.0 - u0 - u1
            mx, my, mz = point_motion(fraction, u0, u1, u2, t, triangles, vertices,
                                       vertices_end)
        yx, yy, yz = ox + mx, oy + my, oz + mz
        nx, ny, nz, signed = face_side(px, py, pz, yx, yy, yz, hx, hy, hz, plane,
                                        collider_params[collider, 3] > 0.5)
        if signed >= contact:
            continue
        approach = max(-((px - yx) * nx + (py - yy) * ny + (pz - yz) * nz), 0.0) + extra[i]
        depth, kept = push_out(contact - signed, approach, push)
        if room < (r + thickest + depth) * (1.0 + ROOM_SAFETY) + ROOM_SAFETY:
            rest[i] = 1  # another triangle may be within reach after the correction
            left += 1
            continue
        px += depth * nx
        py += depth * ny
        pz += depth * nz
        tx, ty, tz = friction_correction(px - ox - mx, py - oy - my, pz - oz - mz, nx, ny, nz,
                                         depth, collider_params[collider, 1],
                                         collider_params[collider, 2])
        x[i, 0], x[i, 1], x[i, 2] = px + tx, py + ty, pz + tz
        v[i, 0] += (kept * nx + tx) * velocity_scale
        v[i, 1] += (kept * ny + ty) * velocity_scale
        v[i, 2] += (kept * nz + tz) * velocity_scale
        moved[i] = 1
    return left


@kernel
def resting_two_faces(x, v, radius, substep, mesh, faces, normals, collider_params, selection,
                      margins, nearest, rest):
    """The particles flagged in ``rest`` that rest on two faces (in a valley, on an edge):
    the cached nearest triangle's face and the cached second nearest triangle, while every
    other candidate stays out of reach (``cache_room_second`` minus the drift, as in
    ``resting_contacts``). Each is handled as ``collider_contacts`` handles it, step by step
    in its arithmetic: the face contact, then the second triangle as its loop over the other
    candidates meets it (the only one that can push), then friction. Handled particles are
    unflagged; returns how many stay flagged (for ``collider_contacts``). Arguments as
    ``collider_contacts`` (``selection``: its ``moved`` and ``extra`` only)."""
    s1, fraction, velocity_scale, push, max_motion, triangle_motion = substep
    vertices, vertices_end, triangles, triangle_collider = mesh
    corners, face_normal = faces
    triangle_edges, vertex_normal, vertex_normal_end, edge_normal, edge_normal_end = normals
    moved, only, selective, extra = selection
    thickest, beyond = margins
    (cache_triangle, cache_point, cache_room, cache_time, cache_second, cache_room_second,
     cache_near) = nearest
    inverse_scale = 1.0 / velocity_scale
    left = 0
    for i in range(x.shape[0]):
        if rest[i] == 0:
            continue
        t = cache_triangle[i]
        t2 = cache_second[i]
        left += 1  # until handled
        if t < 0 or t2 < 0:
            continue
        r = radius[i]
        px, py, pz = x[i, 0], x[i, 1], x[i, 2]
        ox = px - v[i, 0] * inverse_scale  # x_prev of the substep
        oy = py - v[i, 1] * inverse_scale
        oz = pz - v[i, 2] * inverse_scale
        moved2 = (px - ox) ** 2 + (py - oy) ** 2 + (pz - oz) ** 2
        drift = (abs(px - cache_point[i, 0]) + abs(py - cache_point[i, 1])
                 + abs(pz - cache_point[i, 2]))
        if max_motion > 0.0:
            drift += max_motion * (s1 - cache_time[i]) / fraction
        room = cache_room_second[i] - drift
        if not room > 0.0 or math.sqrt(moved2) + max_motion > r:
            continue
        ax, ay, az = corners[t, 0], corners[t, 1], corners[t, 2]
        hx, hy, hz = face_normal[t, 0], face_normal[t, 1], face_normal[t, 2]
        e_ab, e_bc, e_ca, plane = over_face(px, py, pz, ax, ay, az, corners[t, 3],
                                             corners[t, 4], corners[t, 5], corners[t, 6],
                                             corners[t, 7], corners[t, 8], hx, hy, hz)
        total = e_ab + e_bc + e_ca
        if not (e_ab >= 0.0 and e_bc >= 0.0 and e_ca >= 0.0 and total > 0.0
                and plane * plane < room * room):
            continue
        # the second triangle: farther than the first (with a margin, so that the general
        # kernel's own comparison agrees), its distance as that kernel computes it
        bx, by, bz = corners[t2, 0], corners[t2, 1], corners[t2, 2]
        sx, sy, sz, _, _, _, _ = closest_on_triangle(px, py, pz, bx, by, bz, corners[t2, 3],
                                                     corners[t2, 4], corners[t2, 5],
                                                     corners[t2, 6], corners[t2, 7],
                                                     corners[t2, 8])
        second2 = (px - sx) ** 2 + (py - sy) ** 2 + (pz - sz) ** 2
        if not plane * plane * (1.0 + ROOM_SAFETY) + TINY * TINY < second2:
            continue
        collider = triangle_collider[t]
        contact = r + collider_params[collider, 0]
        if plane * plane > (contact + beyond) * (contact + beyond):
            rest[i] = 0  # out of reach: nothing to do (as ``collider_contacts``)
            left -= 1
            continue
        mx = my = mz = 0.0  # the contact point's motion over the substep (none if static)
        if max_motion > 0.0:
            u0, u1 = e_bc / total, e_ca / total
            u2 = 1.0 - u0 - u1
            mx, my, mz = point_motion(fraction, u0, u1, u2, t, triangles, vertices,
                                       vertices_end)
        yx, yy, yz = ox + mx, oy + my, oz + mz
        nx, ny, nz, signed = face_side(px, py, pz, yx, yy, yz, hx, hy, hz, plane,
                                        collider_params[collider, 3] > 0.5)
        if signed >= contact:
            rest[i] = 0  # no contact, and none with the second either (as the general kernel)
            left -= 1
            continue
        approach = max(-((px - yx) * nx + (py - yy) * ny + (pz - yz) * nz), 0.0) + extra[i]
        depth, kept = push_out(contact - signed, approach, push)
        qx, qy, qz = px + depth * nx, py + depth * ny, pz + depth * nz
        vx, vy, vz = kept * nx, kept * ny, kept * nz
        shell = r + collider_params[triangle_collider[t2], 0]
        if not second2 < (shell + depth) * (shell + depth):
            # the second triangle out of reach: a one-face particle whose cache went stale
            # (``resting_contacts`` refused it for the drift), for the general kernel to renew
            continue
        gx, gy, gz = face_normal[t2, 0], face_normal[t2, 1], face_normal[t2, 2]
        if not abs((qx - bx) * gx + (qy - by) * gy + (qz - bz) * gz) >= shell:
            fx, fy, fz, _, _, _, feature = closest_on_triangle(
                qx, qy, qz, bx, by, bz, corners[t2, 3], corners[t2, 4], corners[t2, 5],
                corners[t2, 6], corners[t2, 7], corners[t2, 8])
            ex, ey, ez = qx - fx, qy - fy, qz - fz
            gap = math.sqrt(ex * ex + ey * ey + ez * ez)
            if gap > TINY and gap < shell:
                touching = True
                if collider_params[triangle_collider[t2], 3] > 0.5:
                    gx, gy, gz = feature_normal(feature, t2, s1, gx, gy, gz, triangles,
                                                 triangle_edges, vertex_normal,
                                                 vertex_normal_end, edge_normal,
                                                 edge_normal_end)
                    touching = ex * gx + ey * gy + ez * gz > 0.0
                else:
                    touching = ex * (ox - fx) + ey * (oy - fy) + ez * (oz - fz) > 0.0
                if touching:
                    further = shell - gap
                    qx += further * ex / gap
                    qy += further * ey / gap
                    qz += further * ez / gap
                    vx += further * ex / gap
                    vy += further * ey / gap
                    vz += further * ez / gap
                    depth += further
        if room < (r + thickest + depth) * (1.0 + ROOM_SAFETY) + ROOM_SAFETY:
            continue  # a third triangle may be within reach: the general kernel
        tx, ty, tz = friction_correction(qx - ox - mx, qy - oy - my, qz - oz - mz, nx, ny, nz,
                                         depth, collider_params[collider, 1],
                                         collider_params[collider, 2])
        x[i, 0], x[i, 1], x[i, 2] = qx + tx, qy + ty, qz + tz
        v[i, 0] += (vx + tx) * velocity_scale
        v[i, 1] += (vy + ty) * velocity_scale
        v[i, 2] += (vz + tz) * velocity_scale
        moved[i] = 1
        rest[i] = 0
        left -= 1
    return left
