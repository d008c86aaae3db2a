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
from .kernels_rod import _bend_vector, _frame_between, _tangent, _twist


@kernel
def _cross(u, v):
    return (u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0])


@kernel
def _dot(u, v):
    return u[0] * v[0] + u[1] * v[1] + u[2] * v[2]


@kernel
def _twist_pull(x, m1, twist_rest, stiffness, a, p, b, inv_mass, out):
    """The twist's pull, -w_i k_p (phi_p - tau_p) grad_i phi_p: with kb = 2 e_a x e_p /
    (|e_a| |e_p| + e_a . e_p), grad phi_p is -kb / (2 |e_a|) at the point before,
    kb / (2 |e_a|) - kb / (2 |e_p|) at p and kb / (2 |e_p|) after (Bergou et al. 2008, the
    twist's gradient)."""
    t_a = _tangent(x, a, p)
    t_p = _tangent(x, p, b)
    torque = stiffness * (_twist(t_a, t_p, m1, a, p) - twist_rest[p])
    ea = (x[p, 0] - x[a, 0], x[p, 1] - x[a, 1], x[p, 2] - x[a, 2])
    ep = (x[b, 0] - x[p, 0], x[b, 1] - x[p, 1], x[b, 2] - x[p, 2])
    la = math.sqrt(_dot(ea, ea))
    lp = math.sqrt(_dot(ep, ep))
    den = la * lp + _dot(ea, ep)
    if la == 0.0 or lp == 0.0 or den <= 1e-12 * la * lp:
        return
    kb = _cross(ea, ep)
    for c in range(3):
        before = kb[c] / (den * la)
        after = kb[c] / (den * lp)
        out[a, c] += inv_mass[a] * torque * before
        out[p, c] -= inv_mass[p] * torque * (before - after)
        out[b, c] -= inv_mass[b] * torque * after


@kernel
def _bend_turn_pull(x, rest, m1, bend_rest, alpha, k, a, p, b, inv_mass, out):
    """The bending target's turn: E_b = |d_p - b_p|^2 / (2 alpha) depends on x through the
    frame b_p is written in. The point's frame (t, m1, m2) turns by Omega = t x dt about
    its bisector's tilt plus a spin (kb . (dt_a - dt_p)) / 4 about t (the holonomy of
    carrying each segment's normal to t; kb = 2 t_a x t / (1 + t_a . t)), so with
    c = b_p x (d_p - b_p) / alpha,

        dE_b = -Omega . c = G_a . dt_a + G_p . dt_p,
        G_a,p = -(c x t) / |t_a + t_p| +- (t . c) kb / 4,

    and dt_e = (I - t_e t_e^T)(dx_end - dx_start) / l_e carries it to the particles (checked
    against finite differences of E_b with the frames carried, tests/core/test_rod.py)."""
    t_a = _tangent(x, a, p)
    t_p = _tangent(x, p, b)
    t, n1, n2 = _frame_between(t_a, t_p, m1, a, p)
    d = _bend_vector(x, rest, k, a, p, b)
    target = (bend_rest[p, 0] * n1[0] + bend_rest[p, 1] * n2[0] + bend_rest[p, 2] * t[0],
              bend_rest[p, 0] * n1[1] + bend_rest[p, 1] * n2[1] + bend_rest[p, 2] * t[1],
              bend_rest[p, 0] * n1[2] + bend_rest[p, 1] * n2[2] + bend_rest[p, 2] * t[2])
    c = _cross(target, (d[0] - target[0], d[1] - target[1], d[2] - target[2]))
    sum_norm = math.sqrt((t_a[0] + t_p[0]) ** 2 + (t_a[1] + t_p[1]) ** 2
                         + (t_a[2] + t_p[2]) ** 2)
    la = math.sqrt((x[p, 0] - x[a, 0]) ** 2 + (x[p, 1] - x[a, 1]) ** 2
                   + (x[p, 2] - x[a, 2]) ** 2)
    lp = math.sqrt((x[b, 0] - x[p, 0]) ** 2 + (x[b, 1] - x[p, 1]) ** 2
                   + (x[b, 2] - x[p, 2]) ** 2)
    if sum_norm == 0.0 or la == 0.0 or lp == 0.0:
        return
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
        end_a = (g_a[i] - along_a * t_a[i]) / (la * alpha)
        end_p = (g_p[i] - along_p * t_p[i]) / (lp * alpha)
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
            stiffness = twist_k[k]
            if not math.isinf(stiffness):
                _twist_pull(x, m1, twist_rest, stiffness, a, p, b, inv_mass, out)
            alpha = bend_compliance[p]
            if alpha > 0.0 and (bend_rest[p, 0] != 0.0 or bend_rest[p, 1] != 0.0
                                or bend_rest[p, 2] != 0.0):
                _bend_turn_pull(x, rest, m1, bend_rest, alpha, k, a, p, b, inv_mass, out)
