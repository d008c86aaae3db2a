"""Kernels of the rod model (``core.rod``): a material frame per segment, the bending targets
it gives the direct solve, the twist between segments and plasticity.

Each segment e of a rope carries a unit normal m1_e (perpendicular to its tangent t_e; the
second director is m2_e = t_e x m1_e), stored at the segment's first particle in the rope's
walking order. The frames follow the rope in time by parallel transport (the least rotation
that takes the old tangent to the new one) and turn about their tangents by the twist solve.

A point p between segments a = p - 1 and p has the frame (m1, m2, t) halfway between theirs:
t = (t_a + t_p) / |t_a + t_p|, m1 the mean of both normals carried to t. The bending row of the
direct solve (``kernels_joint``) holds

    C_p = e_p / L_p - e_a / L_a - b_p,   b_p = B1 m1 + B2 m2 + B3 t,

with B the rest bend of p in its own frame (what the modelled shape had): the rest curvature
turns with the rope, so a curl stays a curl. The twist at p is the angle phi_p from m1_a
carried to t_p to m1_p about t_p, its energy f_p k_p (phi_p - tau_p)^2 / 2 with k_p = GJ / l_p
and f_p the kink fade (``kink_fade``).
The discrete elastic rod of Bergou et al. 2008 (material frames over the twist-free frame,
twist as an angle between neighbours), with the frames solved one substep behind the
positions (see docs/physics.md, Rods).

Arrays: ``particles`` (P,) every rope's particles in walking order, rope r being
``particles[starts[r]:starts[r + 1]]``; per-particle arrays are (N, ...) indexed by particle.
"""

from __future__ import annotations

import math

import numpy as np

from ..jit import kernel


@kernel
def _unit(x, y, z):
    n = math.sqrt(x * x + y * y + z * z)
    if n == 0.0:
        return 0.0, 0.0, 0.0
    return x / n, y / n, z / n


@kernel
def _tangent(x, a, b):
    return _unit(x[b, 0] - x[a, 0], x[b, 1] - x[a, 1], x[b, 2] - x[a, 2])


@kernel
def _transport(a, b, u):
    """u carried by the least rotation that takes unit a to unit b (Rodrigues' formula with
    k = a x b, c = a . b: u c + k x u + k (k . u) / (1 + c)). Opposite tangents have no
    least rotation: u loses its part along b."""
    c = a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
    if c <= -0.999999:
        d = u[0] * b[0] + u[1] * b[1] + u[2] * b[2]
        return u[0] - d * b[0], u[1] - d * b[1], u[2] - d * b[2]
    k0 = a[1] * b[2] - a[2] * b[1]
    k1 = a[2] * b[0] - a[0] * b[2]
    k2 = a[0] * b[1] - a[1] * b[0]
    f = (k0 * u[0] + k1 * u[1] + k2 * u[2]) / (1.0 + c)
    return (c * u[0] + k1 * u[2] - k2 * u[1] + k0 * f,
            c * u[1] + k2 * u[0] - k0 * u[2] + k1 * f,
            c * u[2] + k0 * u[1] - k1 * u[0] + k2 * f)


@kernel
def _normal_to(t, u):
    """u without its part along unit t, of unit length (t's least perpendicular if u is
    along t)."""
    d = u[0] * t[0] + u[1] * t[1] + u[2] * t[2]
    n = _unit(u[0] - d * t[0], u[1] - d * t[1], u[2] - d * t[2])
    if n[0] == 0.0 and n[1] == 0.0 and n[2] == 0.0:
        if abs(t[2]) < 0.9:
            return _unit(-t[1], t[0], 0.0)
        return _unit(0.0, -t[2], t[1])
    return n


@kernel
def _turn(t, u, angle):
    """u (perpendicular to unit t) turned by ``angle`` [rad] about t."""
    c = math.cos(angle)
    s = math.sin(angle)
    return (c * u[0] + s * (t[1] * u[2] - t[2] * u[1]),
            c * u[1] + s * (t[2] * u[0] - t[0] * u[2]),
            c * u[2] + s * (t[0] * u[1] - t[1] * u[0]))


@kernel
def _angle_about(t, a, b):
    """The angle [rad] from a to b about unit t (both perpendicular to t)."""
    cx = a[1] * b[2] - a[2] * b[1]
    cy = a[2] * b[0] - a[0] * b[2]
    cz = a[0] * b[1] - a[1] * b[0]
    return math.atan2(t[0] * cx + t[1] * cy + t[2] * cz,
                      a[0] * b[0] + a[1] * b[1] + a[2] * b[2])


@kernel
def _row(m1, p):
    return m1[p, 0], m1[p, 1], m1[p, 2]


KINK_FADE_FROM = -0.5
"""The cosine of a point's kink (120 degrees) from which ``kink_fade`` lets its twist and rest
bend go"""


@kernel
def kink_fade(c):
    """f(c) = 1 for c >= c0 = ``KINK_FADE_FROM``, (1 - u^2)^2 below, u = (c0 - c) / (1 + c0):
    the share of the twist and of the rest bend at a point whose segments' tangents have the
    cosine c. The twist is an angle between frames carried from one segment to the next and
    the rest bend is written in the point's bisector frame; both are undefined where the rope
    folds back on itself (c = -1), and their pulls grow without bound towards it (the
    twist's gradient as |kb| = 2 tan(theta / 2), the bisector's turn as 1 / cos(theta / 2)):
    without a fade the twist's pull was 4.6e3 m/s^2 at 179.9 degrees and 5e16 at 180, and the
    twist energy jumped from 0.00014 J to 1.6 J (tests/core/test_rod_stability.py). f |kb|^2
    is at most 16, 4 times its value at 90 degrees, and f is smooth (f' = 0 at c0, f = f' = 0
    at c = -1).
    It starts beyond 90 degrees so that a modelled right angle keeps its whole stiffness."""
    if c >= KINK_FADE_FROM:
        return 1.0
    u = (KINK_FADE_FROM - c) / (1.0 + KINK_FADE_FROM)
    return (1.0 - u * u) * (1.0 - u * u)


@kernel
def kink_fade_slope(c):
    """df/dc of ``kink_fade``."""
    if c >= KINK_FADE_FROM:
        return 0.0
    u = (KINK_FADE_FROM - c) / (1.0 + KINK_FADE_FROM)
    return 4.0 * u * (1.0 - u * u) / (1.0 + KINK_FADE_FROM)


@kernel
def _cosine(t_a, t_p):
    return t_a[0] * t_p[0] + t_a[1] * t_p[1] + t_a[2] * t_p[2]


@kernel
def _twist(t_a, t_p, m1, a, p):
    """phi [rad] at the point between segments a and p (tangents t_a, t_p): the angle from
    m1_a carried to t_p to m1_p about t_p."""
    return _angle_about(t_p, _transport(t_a, t_p, _row(m1, a)), _row(m1, p))


@kernel
def _point_frame(x, m1, a, p, b):
    """(t, m1, m2) of the point p between segments (a, p) and (p, b)."""
    return _frame_between(_tangent(x, a, p), _tangent(x, p, b), m1, a, p)


@kernel
def _frame_between(t_a, t_p, m1, a, p):
    """(t, m1, m2) halfway between segment a (tangent t_a) and segment p (t_p)."""
    t = _unit(t_a[0] + t_p[0], t_a[1] + t_p[1], t_a[2] + t_p[2])
    if t[0] == 0.0 and t[1] == 0.0 and t[2] == 0.0:
        t = t_p
    u_a = _transport(t_a, t, _row(m1, a))
    u_p = _transport(t_p, t, _row(m1, p))
    mean = (u_a[0] + u_p[0], u_a[1] + u_p[1], u_a[2] + u_p[2])
    n1 = _normal_to(t, mean)
    n2 = (t[1] * n1[2] - t[2] * n1[1], t[2] * n1[0] - t[0] * n1[2],
          t[0] * n1[1] - t[1] * n1[0])
    return t, n1, n2


@kernel
def _bend_vector(x, rest, k, a, p, b):
    """e_p / L_p - e_a / L_a at the point p (rope position k, rest lengths ``rest`` per
    position)."""
    la = rest[k - 1]
    lp = rest[k]
    ia = 1.0 / la if la > 0.0 else 0.0
    ip = 1.0 / lp if lp > 0.0 else 0.0
    return ((x[b, 0] - x[p, 0]) * ip - (x[p, 0] - x[a, 0]) * ia,
            (x[b, 1] - x[p, 1]) * ip - (x[p, 1] - x[a, 1]) * ia,
            (x[b, 2] - x[p, 2]) * ip - (x[p, 2] - x[a, 2]) * ia)


@kernel
def bend_local(x, particles, starts, rest, m1, out):
    """Each interior point's bend vector e_p / L_p - e_a / L_a in its own frame (m1, m2, t),
    into ``out`` (N, 3): what a shape's rest bend is (and where plasticity starts)."""
    for r in range(starts.shape[0] - 1):
        for k in range(starts[r] + 1, starts[r + 1] - 1):
            a, p, b = particles[k - 1], particles[k], particles[k + 1]
            t, n1, n2 = _point_frame(x, m1, a, p, b)
            d = _bend_vector(x, rest, k, a, p, b)
            out[p, 0] = d[0] * n1[0] + d[1] * n1[1] + d[2] * n1[2]
            out[p, 1] = d[0] * n2[0] + d[1] * n2[1] + d[2] * n2[2]
            out[p, 2] = d[0] * t[0] + d[1] * t[1] + d[2] * t[2]


@kernel
def bend_targets(x, particles, starts, m1, bend_rest, out):
    """b_p = f (B1 m1 + B2 m2 + B3 t) [1] of every interior point (f ``kink_fade``), into
    ``out`` (N, 3)."""
    for r in range(starts.shape[0] - 1):
        for k in range(starts[r] + 1, starts[r + 1] - 1):
            a, p, b = particles[k - 1], particles[k], particles[k + 1]
            t_a = _tangent(x, a, p)
            t_p = _tangent(x, p, b)
            t, n1, n2 = _frame_between(t_a, t_p, m1, a, p)
            fade = kink_fade(_cosine(t_a, t_p))
            for c in range(3):
                out[p, c] = fade * (bend_rest[p, 0] * n1[c] + bend_rest[p, 1] * n2[c]
                                    + bend_rest[p, 2] * t[c])


@kernel
def point_normals(x, particles, starts, m1, out):
    """The material normal at every particle into ``out`` (N, 3): at an interior point the
    m1 of its frame (``_frame_between``), at a rope's end its end segment's m1."""
    for r in range(starts.shape[0] - 1):
        first, last = starts[r], starts[r + 1]
        if last - first < 2:
            continue
        _set(out, particles[first], _row(m1, particles[first]))
        _set(out, particles[last - 1], _row(m1, particles[last - 2]))
        for k in range(first + 1, last - 1):
            a, p, b = particles[k - 1], particles[k], particles[k + 1]
            _set(out, p, _point_frame(x, m1, a, p, b)[1])


@kernel
def _set(m1, p, u):
    m1[p, 0] = u[0]
    m1[p, 1] = u[1]
    m1[p, 2] = u[2]


@kernel
def held_frames(x, particles, first, last, anchor, m1, twist_rest):
    """The frames of one rope with its twist at its rest (a rest shape's frames): from
    segment position ``anchor`` (its frame as it is) outwards, each m1 is its neighbour's
    carried to it and turned by the rest twist between them."""
    for k in range(anchor + 1, last - 1):
        a, p, b = particles[k - 1], particles[k], particles[k + 1]
        t_a = _tangent(x, a, p)
        t_p = _tangent(x, p, b)
        u = _transport(t_a, t_p, _row(m1, a))
        _set(m1, p, _normal_to(t_p, _turn(t_p, u, twist_rest[p])))
    for back in range(anchor - first):
        k = anchor - 1 - back
        p, b, c = particles[k], particles[k + 1], particles[k + 2]
        t_b = _tangent(x, b, c)
        t_p = _tangent(x, p, b)
        u = _transport(t_b, t_p, _row(m1, b))
        _set(m1, p, _normal_to(t_p, _turn(t_p, u, -twist_rest[b])))


@kernel
def _twist_solve(x, rod_ropes, rod_twist, rod_frames, first, last, held_start, held_end, h,
                 decay, scratch):
    """One implicit Euler substep of h [s] of the twist angles of one rope (segments at
    positions first .. last - 2): the increments delta_e of every segment's angle solve

        I_e (delta_e - h omega_e) / h^2 + dE_t/d delta_e = 0,
        E_t = sum_p f_p k_p (phi_p + delta_p - delta_a - tau_p)^2 / 2,

    a tridiagonal system (Thomas' algorithm), the segments of held ends fixed. Each m1_e then
    turns by delta_e and omega_e = decay delta_e / h [rad/s]. ``scratch`` (7, P): rows 0-3
    the system's, rows 4-6 each segment's unit tangent at ``x``."""
    particles, starts, rest = rod_ropes
    inertia, twist_k, bend_compliance = rod_twist
    m1, omega, bend_rest, twist_rest = rod_frames
    lower = scratch[0, first:last]
    diagonal = scratch[1, first:last]
    upper = scratch[2, first:last]
    rhs = scratch[3, first:last]
    tangents = scratch[4:7, :]
    n = last - 1 - first
    for j in range(n):
        k = first + j
        e = particles[k]
        diagonal[j] = inertia[k] / (h * h)
        rhs[j] = inertia[k] * omega[e] / h
        lower[j] = 0.0
        upper[j] = 0.0
    for j in range(1, n):  # the point between segments j - 1 and j
        k = first + j
        a, p, b = particles[k - 1], particles[k], particles[k + 1]
        t_a = (tangents[0, k - 1], tangents[1, k - 1], tangents[2, k - 1])
        t_p = (tangents[0, k], tangents[1, k], tangents[2, k])
        phi = _twist(t_a, t_p, m1, a, p)
        stiffness = twist_k[k]
        if not math.isinf(stiffness):  # (inf times a fade of 0 would be nan)
            stiffness *= kink_fade(_cosine(t_a, t_p))
        residual = phi - twist_rest[p]
        diagonal[j] += stiffness
        diagonal[j - 1] += stiffness
        lower[j] = -stiffness
        upper[j - 1] = -stiffness
        rhs[j] -= stiffness * residual
        rhs[j - 1] += stiffness * residual
        alpha = bend_compliance[p]
        fade = kink_fade(_cosine(t_a, t_p))
        b1 = fade * bend_rest[p, 0]
        b2 = fade * bend_rest[p, 1]
        if alpha > 0.0 and (b1 != 0.0 or b2 != 0.0):
            # the bending at p turns with the mean of its segments' turns: its gradient g
            # and Gauss-Newton curvature H in that mean, shared half and half
            t, n1, n2 = _frame_between(t_a, t_p, m1, a, p)
            d = _bend_vector(x, rest, k, a, p, b)
            turned = (b1 * n2[0] - b2 * n1[0], b1 * n2[1] - b2 * n1[1], b1 * n2[2] - b2 * n1[2])
            g = -(d[0] * turned[0] + d[1] * turned[1] + d[2] * turned[2]) / alpha
            quarter = 0.25 * (b1 * b1 + b2 * b2) / alpha
            diagonal[j] += quarter
            diagonal[j - 1] += quarter
            lower[j] += quarter
            upper[j - 1] += quarter
            rhs[j] -= 0.5 * g
            rhs[j - 1] -= 0.5 * g
    if held_start:
        diagonal[0], upper[0], rhs[0] = 1.0, 0.0, 0.0
        if n > 1:
            lower[1] = 0.0
    if held_end:
        diagonal[n - 1], lower[n - 1], rhs[n - 1] = 1.0, 0.0, 0.0
        if n > 1:
            upper[n - 2] = 0.0
    for j in range(1, n):  # forward elimination
        f = lower[j] / diagonal[j - 1]
        diagonal[j] -= f * upper[j - 1]
        rhs[j] -= f * rhs[j - 1]
    rhs[n - 1] /= diagonal[n - 1]
    for back in range(1, n):
        j = n - 1 - back
        rhs[j] = (rhs[j] - upper[j] * rhs[j + 1]) / diagonal[j]
    for j in range(n):
        k = first + j
        e = particles[k]
        t = (tangents[0, k], tangents[1, k], tangents[2, k])
        _set(m1, e, _normal_to(t, _turn(t, _row(m1, e), rhs[j])))
        omega[e] = decay * rhs[j] / h


@kernel
def follow(x_start, x, rod_ropes, rod_twist, rod_frames, held, turn, h, decay, scratch):
    """The frames after a substep that moved the particles from ``x_start`` to ``x`` (N, 3)
    [m]: each segment's m1 parallel-transported from its old tangent to its new one; the
    segment at a held rope end (``held`` (N,) bool at that end's particle: pinned, its roll
    held by what holds it) turned by ``turn`` (N,) [rad] at that particle, the substep's
    share of its object's turn; then one implicit substep of the twist dynamics
    (``_twist_solve``, the held segments fixed; none where ``twist_k`` is inf: the frames
    are only carried; ``inertia`` (P,) [kg m^2] per segment, ``twist_k`` (P,) [N m] per
    point, ``omega`` (N,) [rad/s]; ``core.groups``). ``scratch`` (7, P): the tridiagonal
    system's rows and the segments' tangents."""
    particles, starts, rest = rod_ropes
    inertia, twist_k, bend_compliance = rod_twist
    m1, omega, bend_rest, twist_rest = rod_frames
    for r in range(starts.shape[0] - 1):
        first, last = starts[r], starts[r + 1]
        if last - first < 2:
            continue
        for k in range(first, last - 1):
            e, f = particles[k], particles[k + 1]
            old = _tangent(x_start, e, f)
            new = _tangent(x, e, f)
            _set(m1, e, _normal_to(new, _transport(old, new, _row(m1, e))))
            scratch[4, k], scratch[5, k], scratch[6, k] = new
        head, tail = particles[first], particles[last - 1]
        held_start = held[head]
        held_end = held[tail] and last - first > 1
        if held_start:
            t = _tangent(x, head, particles[first + 1])
            _set(m1, head, _normal_to(t, _turn(t, _row(m1, head), turn[head])))
        if held_end:
            e = particles[last - 2]
            t = _tangent(x, e, tail)
            _set(m1, e, _normal_to(t, _turn(t, _row(m1, e), turn[tail])))
        if math.isinf(twist_k[first + 1] if last - first > 2 else np.inf):
            for k in range(first, last):  # no twist dynamics: the frames are only carried
                omega[particles[k]] = 0.0
        else:
            _twist_solve(x, rod_ropes, rod_twist, rod_frames, first, last, held_start,
                         held_end, h, decay, scratch)


@kernel
def yield_plastic(x, particles, starts, rest, m1, bend_rest, twist_rest, yield_angle,
                  creep):
    """Plasticity after a substep: where a point's bend (in its frame) differs from its rest
    bend by more than ``yield_angle`` (P,) [rad] (per rope position), the rest bend moves
    towards it by the fraction ``creep`` (N,) of the excess (creep = 1 - exp(-rate h)); the
    same for the twist. A yield of inf never yields."""
    for r in range(starts.shape[0] - 1):
        for k in range(starts[r] + 1, starts[r + 1] - 1):
            a, p, b = particles[k - 1], particles[k], particles[k + 1]
            limit = yield_angle[k]
            if math.isinf(limit):
                continue
            t, n1, n2 = _point_frame(x, m1, a, p, b)
            d = _bend_vector(x, rest, k, a, p, b)
            e0 = d[0] * n1[0] + d[1] * n1[1] + d[2] * n1[2] - bend_rest[p, 0]
            e1 = d[0] * n2[0] + d[1] * n2[1] + d[2] * n2[2] - bend_rest[p, 1]
            excess = math.sqrt(e0 * e0 + e1 * e1)  # (the part along t is stretch, not bend)
            if excess > limit:
                f = creep[p] * (1.0 - limit / excess)
                bend_rest[p, 0] += f * e0
                bend_rest[p, 1] += f * e1
            t_a = _tangent(x, a, p)
            t_p = _tangent(x, p, b)
            twist = _twist(t_a, t_p, m1, a, p)
            off = twist - twist_rest[p]
            if abs(off) > limit:
                twist_rest[p] += creep[p] * (off - math.copysign(limit, off))


@kernel
def rod_energy(x, particles, starts, rest, m1, bend_rest, twist_rest, bend_compliance,
               twist_k):
    """(E_b, E_t) [J]: the bending energy against the rest bend, |C_p|^2 / (2 alpha_b) over
    the points with alpha_b > 0, and the twist energy f_p k_p (phi_p - tau_p)^2 / 2 over the
    points with a finite k_p (f_p ``kink_fade``)."""
    bending = 0.0
    twist = 0.0
    for r in range(starts.shape[0] - 1):
        for k in range(starts[r] + 1, starts[r + 1] - 1):
            a, p, b = particles[k - 1], particles[k], particles[k + 1]
            t_a = _tangent(x, a, p)
            t_p = _tangent(x, p, b)
            t, n1, n2 = _frame_between(t_a, t_p, m1, a, p)
            d = _bend_vector(x, rest, k, a, p, b)
            alpha = bend_compliance[p]
            if alpha > 0.0 and rest[k - 1] > 0.0 and rest[k] > 0.0:
                s = 0.0
                fade = kink_fade(_cosine(t_a, t_p))
                for c in range(3):
                    target = fade * (bend_rest[p, 0] * n1[c] + bend_rest[p, 1] * n2[c]
                                     + bend_rest[p, 2] * t[c])
                    s += (d[c] - target) * (d[c] - target)
                bending += 0.5 * s / alpha
            stiffness = twist_k[k]
            if not math.isinf(stiffness):
                phi = _twist(t_a, t_p, m1, a, p)
                off = phi - twist_rest[p]
                twist += 0.5 * stiffness * kink_fade(_cosine(t_a, t_p)) * off * off
    return bending, twist
