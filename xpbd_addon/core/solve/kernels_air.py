"""Air drag on rope segments as on cylinders (``core.air``): the kernel.

Per segment e of current length l and unit direction t, and per end p of it with radius r_p,
the relative velocity of the air u = w_p - v_p (wind minus the particle's velocity) is split
into its normal part u_n = u - (u . t) t and tangential part u_t = (u . t) t; the half
segment next to p (length l / 2) pushes p with

    F = (l / 2) * 0.5 rho d (C_n |u_n| u_n + pi C_t |u_t| u_t),     d = 2 r_p,

Morison's drag on a slender cylinder, normal on the projected area d per length, tangential
as skin friction on the wetted surface pi d per length (the convention of cable dynamics
codes, e.g. OrcaFlex's axial drag). The forces of a particle's two half segments add up.

The velocity change over a substep h is a = F / m taken explicitly, but bounded so that it
never carries the particle past the air: v' = v + tau a with tau = min(h, (a . u) / |a|^2).
(a . u) / |a|^2 is the step that brings u to its component orthogonal to a, the closest u
gets to 0 along a; since a . u >= 0 (every term is c |u_k|^3 >= 0), |u'| <= |u| always, so
drag never raises the kinetic energy relative to the air, at any strength, and a rope at
rest in a steady wind feels exactly F (tau = h) whenever h |a| <= (a . u) / |a| (for the
normal drag alone: h C |u| <= 1 with C = rho d C_n / (2 mu), mu the mass per length).
"""

from __future__ import annotations

import math

from ..jit import kernel


@kernel
def drag_accelerations(x, v, wind, edges, radius, inv_mass, density, normal_drag,
                       tangential_drag, h, force, out):
    """The accelerations [m/s^2] of air drag over a substep of h [s] (see the module), in
    ``out`` (N, 3): tau a / h per free particle, 0 for pinned ones (inv_mass 0).

    x [m], v [m/s], wind [m/s] (N, 3); edges int64 (M, 2); radius [m] (N,); inv_mass [1/kg]
    (N,); density rho [kg/m^3]; normal_drag C_n, tangential_drag C_t (dimensionless);
    force (N, 3) scratch [N]. Zero-length segments push nothing (no direction)."""
    n = x.shape[0]
    skin = math.pi * tangential_drag
    for i in range(n):
        for c in range(3):
            force[i, c] = 0.0
    for e in range(edges.shape[0]):
        a = edges[e, 0]
        b = edges[e, 1]
        t0 = x[b, 0] - x[a, 0]
        t1 = x[b, 1] - x[a, 1]
        t2 = x[b, 2] - x[a, 2]
        length = math.sqrt(t0 * t0 + t1 * t1 + t2 * t2)
        if length == 0.0:
            continue
        t0 /= length
        t1 /= length
        t2 /= length
        for k in range(2):
            p = a if k == 0 else b
            # 0.5 rho d (l / 2) with d = 2 r_p
            q = 0.5 * density * radius[p] * length
            u0 = wind[p, 0] - v[p, 0]
            u1 = wind[p, 1] - v[p, 1]
            u2 = wind[p, 2] - v[p, 2]
            along = u0 * t0 + u1 * t1 + u2 * t2
            n0 = u0 - along * t0
            n1 = u1 - along * t1
            n2 = u2 - along * t2
            normal = q * normal_drag * math.sqrt(n0 * n0 + n1 * n1 + n2 * n2)
            tangential = q * skin * abs(along) * along
            force[p, 0] += normal * n0 + tangential * t0
            force[p, 1] += normal * n1 + tangential * t1
            force[p, 2] += normal * n2 + tangential * t2
    for i in range(n):
        w = inv_mass[i]
        a0 = force[i, 0] * w
        a1 = force[i, 1] * w
        a2 = force[i, 2] * w
        aa = a0 * a0 + a1 * a1 + a2 * a2
        if aa == 0.0:
            out[i, 0] = 0.0
            out[i, 1] = 0.0
            out[i, 2] = 0.0
            continue
        au = (a0 * (wind[i, 0] - v[i, 0]) + a1 * (wind[i, 1] - v[i, 1])
              + a2 * (wind[i, 2] - v[i, 2]))
        # tau / h: the explicit step, cut where it would carry the particle past the air
        scale = min(1.0, au / (aa * h))
        out[i, 0] = a0 * scale
        out[i, 1] = a1 * scale
        out[i, 2] = a2 * scale


@kernel
def add_work(x, before, drag, mass, work):
    """Add the work [J] of the accelerations ``drag`` (N, 3) [m/s^2] on particles of mass
    ``mass`` (N,) [kg] moving from ``before`` to x (N, 3) [m], m a . (x - before), to
    ``work`` (N,)."""
    for i in range(x.shape[0]):
        work[i] += mass[i] * ((x[i, 0] - before[i, 0]) * drag[i, 0]
                              + (x[i, 1] - before[i, 1]) * drag[i, 1]
                              + (x[i, 2] - before[i, 2]) * drag[i, 2])
