"""The rod's pull on the centreline (``core.rod``): the forces on the particles that come from
the segments' frames being carried along with them.

A segment's material frame turns with its tangent (parallel transport in time), so moving a
particle turns the frames of its segments, and with them what the rod's twist and its bending
target (``kernels_rod``, b_p = B1 m1 + B2 m2 + B3 t) are measured against. The direct solve
holds the frames fixed over a substep; these kernels add what that leaves out, the gradient
of the twist and bending energies through the frames, as accelerations [m/s^2] for the next
substep's predict. Without the bending part a rod's forces are not the gradient of its
energy: a coil hanging from its axis tilted by about 19 degrees and rose instead of
stretching, and where it settled depended on the substep count.
"""

from __future__ import annotations

import math

from ..jit import kernel
from .kernels_rod import (
    _angle_about,
    _bend_vector,
    _normal_to,
    _row,
    _transport,
    kink_fade,
    kink_fade_slope,
)


@kernel
def _cross(u, v):
    return (u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0])


@kernel
def _dot(u, v):
    return u[0] * v[0] + u[1] * v[1] + u[2] * v[2]


@kernel
def _point_pull(x, rest, m1, bend_rest, twist_rest, alpha, stiffness, k, a, p, b, inv_mass,
                out):
    """The pulls at point p (rope position k) between segments (a, p) and (p, b).

    The twist's: -w_i grad_i (f(c) k_p (phi_p - tau_p)^2 / 2), c = t_a . t_p the cosine of
    the point's kink and f the fade (``kernels_rod.kink_fade``), so f k_p (phi_p - tau_p)
    grad_i phi_p and k_p (phi_p - tau_p)^2 / 2 f'(c) grad_i c, with grad c = -(t_p - c t_a) /
    |e_a| at the point before, (t_p - c t_a) / |e_a| - (t_a - c t_p) / |e_p| at p and
    (t_a - c t_p) / |e_p| after. With kb = 2 e_a x e_p / (|e_a|
    |e_p| + e_a . e_p), grad phi_p is -kb / (2 |e_a|) at the point before, kb / (2 |e_a|) -
    kb / (2 |e_p|) at p and kb / (2 |e_p|) after (Bergou et al. 2008, the twist's
    gradient). phi_p is measured at the bisector t: carrying m1_a from t_a to t_p is carrying
    it to t and on about the same axis, so it is the angle from m1_a carried to t to m1_p
    carried to t, the vectors the point's frame is made of.

    The bending target's turn: E_b = |d_p - b_p|^2 / (2 alpha) depends on x through the frame
    b_p is written in. The point's frame (t, m1, m2) turns by Omega = t x dt about its
    bisector's tilt plus a spin (kb . (dt_a - dt_p)) / 4 about t (the holonomy of carrying
    each segment's normal to t; here kb = 2 t_a x t / (1 + t_a . t)), so with
    c = b_p x (d_p - b_p) / alpha,

        dE_b = -Omega . c = G_a . dt_a + G_p . dt_p,
        G_a,p = -(c x t) / |t_a + t_p| +- (t . c) kb / 4,

    and dt_e = (I - t_e t_e^T)(dx_end - dx_start) / l_e carries it to the particles (checked
    against finite differences of E_b + E_t with the frames carried, tests/core/test_rod.py).
    ``alpha`` 0: no bending pull; ``stiffness`` inf: no twist pull."""
    ea = (x[p, 0] - x[a, 0], x[p, 1] - x[a, 1], x[p, 2] - x[a, 2])
    ep = (x[b, 0] - x[p, 0], x[b, 1] - x[p, 1], x[b, 2] - x[p, 2])
    la = math.sqrt(_dot(ea, ea))
    lp = math.sqrt(_dot(ep, ep))
    if la == 0.0 or lp == 0.0:
        return
    t_a = (ea[0] / la, ea[1] / la, ea[2] / la)
    t_p = (ep[0] / lp, ep[1] / lp, ep[2] / lp)
    sum_norm = math.sqrt((t_a[0] + t_p[0]) ** 2 + (t_a[1] + t_p[1]) ** 2
                         + (t_a[2] + t_p[2]) ** 2)
    if sum_norm == 0.0:
        return  # folded back on itself: no frame
    t = ((t_a[0] + t_p[0]) / sum_norm, (t_a[1] + t_p[1]) / sum_norm,
         (t_a[2] + t_p[2]) / sum_norm)
    bends = alpha > 0.0 and (bend_rest[p, 0] != 0.0 or bend_rest[p, 1] != 0.0
                             or bend_rest[p, 2] != 0.0)
    if bends:
        u_a = _transport(t_a, t, _row(m1, a))
        u_p = _transport(t_p, t, _row(m1, p))
    if not math.isinf(stiffness):
        den = la * lp + _dot(ea, ep)
        if den > 1e-12 * la * lp:
            # (without the frame, one transport: m1_a carried to t_p against m1_p)
            phi = (_angle_about(t, u_a, u_p) if bends else
                   _angle_about(t_p, _transport(t_a, t_p, _row(m1, a)), _row(m1, p)))
            cosine = _dot(t_a, t_p)
            off = phi - twist_rest[p]
            torque = stiffness * kink_fade(cosine) * off
            kink = 0.5 * stiffness * off * off * kink_fade_slope(cosine)
            kb = _cross(ea, ep)
            for c in range(3):
                before = torque * kb[c] / (den * la) + kink * (t_p[c] - cosine * t_a[c]) / la
                after = torque * kb[c] / (den * lp) + kink * (t_a[c] - cosine * t_p[c]) / lp
                out[a, c] += inv_mass[a] * before
                out[p, c] -= inv_mass[p] * (before - after)
                out[b, c] -= inv_mass[b] * after
    if not bends:
        return
    n1 = _normal_to(t, (u_a[0] + u_p[0], u_a[1] + u_p[1], u_a[2] + u_p[2]))
    n2 = _cross(t, n1)
    d = _bend_vector(x, rest, k, a, p, b)
    cosine = _dot(t_a, t_p)
    fade = kink_fade(cosine)
    rest_bend = (bend_rest[p, 0] * n1[0] + bend_rest[p, 1] * n2[0] + bend_rest[p, 2] * t[0],
                 bend_rest[p, 0] * n1[1] + bend_rest[p, 1] * n2[1] + bend_rest[p, 2] * t[1],
                 bend_rest[p, 0] * n1[2] + bend_rest[p, 1] * n2[2] + bend_rest[p, 2] * t[2])
    target = (fade * rest_bend[0], fade * rest_bend[1], fade * rest_bend[2])
    # dE_b/dc = -(d - b_p) . (B1 m1 + B2 m2 + B3 t) f'(c) / alpha, through grad c as the twist's
    kink = -(_dot((d[0] - target[0], d[1] - target[1], d[2] - target[2]), rest_bend)
             * kink_fade_slope(cosine))
    c = _cross(target, (d[0] - target[0], d[1] - target[1], d[2] - target[2]))
    tilt = _cross(c, t)
    spin = 0.25 * _dot(t, c) / (1.0 + _dot(t_a, t))
    kb = _cross(t_a, t)
    g_a = (-tilt[0] / sum_norm + 2.0 * spin * kb[0], -tilt[1] / sum_norm + 2.0 * spin * kb[1],
           -tilt[2] / sum_norm + 2.0 * spin * kb[2])
    g_p = (-tilt[0] / sum_norm - 2.0 * spin * kb[0], -tilt[1] / sum_norm - 2.0 * spin * kb[1],
           -tilt[2] / sum_norm - 2.0 * spin * kb[2])
    along_a = _dot(g_a, t_a)
    along_p = _dot(g_p, t_p)
    for i in range(3):
        # dE/dx at the end of each segment (its start takes the opposite); force = -dE/dx
        end_a = (g_a[i] - along_a * t_a[i] + kink * (t_p[i] - cosine * t_a[i])) / (la * alpha)
        end_p = (g_p[i] - along_p * t_p[i] + kink * (t_a[i] - cosine * t_p[i])) / (lp * alpha)
        out[a, i] += inv_mass[a] * end_a
        out[p, i] += inv_mass[p] * (end_p - end_a)
        out[b, i] -= inv_mass[b] * end_p


@kernel
def add_frame_accelerations(x, particles, starts, rest, m1, bend_rest, twist_rest,
                            bend_compliance, twist_k, inv_mass, out):
    """Add the rod's pull on the centreline through its frames to ``out`` (N, 3) [m/s^2]:
    the twist's (points with a finite ``twist_k`` [N m]) and the bending target's turn
    (points with ``bend_compliance`` alpha_b > 0 [1/(N m)] and a rest bend)."""
    for r in range(starts.shape[0] - 1):
        for k in range(starts[r] + 1, starts[r + 1] - 1):
            a, p, b = particles[k - 1], particles[k], particles[k + 1]
            _point_pull(x, rest, m1, bend_rest, twist_rest, bend_compliance[p], twist_k[k], k,
                        a, p, b, inv_mass, out)
