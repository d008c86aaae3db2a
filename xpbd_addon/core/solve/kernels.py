"""numba kernels of the XPBD substep (Macklin, Müller & Chentanez, "XPBD", MiG 2016).

Every kernel takes all of its inputs as arguments: ``cache=True`` freezes module globals into
the cached machine code, so nothing here may read configurable state. ``error_model="numpy"``
drops the per-division zero check (a branch that stops LLVM vectorising); divisions that could
meet zero are guarded explicitly and return a zero correction instead of NaN.

One substep of length h, for every particle and constraint, reads like the paper:

    predict       v <- v + h g (free particles only),  x_prev <- x,  x <- x + h v
    project       one Gauss-Seidel sweep of the constraints, lambda reset to 0
    update        v <- (x - x_prev) / h * exp(-damping h)   (free particles only)

Pinned particles (w = 0) keep the velocity ``step`` gave them, so they travel in a straight line
to their pin target across the substeps.

Import this module only after ``NUMBA_CACHE_DIR`` is final (see ``core.configure_numba``).
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from ..jit import kernel, parallel_kernel
from ..layout.topology import (
    EDGE_ACTIVE,
    EDGE_COMPLIANCE,
    EDGE_REST,
    EDGE_STRIDE,
    LANES,
    PARTICLE_ACCELERATION,
    PARTICLE_STRIDE,
    PARTICLE_V,
    PARTICLE_W,
    PARTICLE_X,
    PARTICLE_X_PREV,
)

# Unsigned compile-time constants: mixing uint64 indices with int64 literals makes numba
# promote to float64, and signed indices cost LLVM the proof it needs to vectorise.
_L = np.uint64(LANES)
_PS = np.uint64(PARTICLE_STRIDE * LANES)
_ES = np.uint64(EDGE_STRIDE * LANES)
_X = np.uint64(PARTICLE_X * LANES)
_V = np.uint64(PARTICLE_V * LANES)
_XP = np.uint64(PARTICLE_X_PREV * LANES)
_W = np.uint64(PARTICLE_W * LANES)
_A = np.uint64(PARTICLE_ACCELERATION * LANES)
_REST = np.uint64(EDGE_REST * LANES)
_ALPHA = np.uint64(EDGE_COMPLIANCE * LANES)
_ACTIVE = np.uint64(EDGE_ACTIVE * LANES)
_ONE = np.uint64(1)
_ZERO = np.uint64(0)



@kernel
def distance_correction(x0, y0, z0, x1, y1, z1, w0, w1, rest_length, alpha_tilde, lagrange):
    """XPBD distance constraint C = |x0 - x1| - L0 (Macklin et al. 2016 eq. 18).

        n = (x0 - x1) / |x0 - x1|,   dlambda = (-C - alpha_tilde lambda) / (w0 + w1 + alpha_tilde)
        x0 <- x0 + w0 n dlambda,      x1 <- x1 - w1 n dlambda

    with alpha_tilde = alpha / h^2 and ``lagrange`` the multiplier lambda accumulated so far in
    this substep (0 on the first sweep, after the reset). Returns (n dlambda [m], dlambda);
    the caller scales the vector by each end's inverse mass. Coincident ends (no direction)
    and a rigid all-pinned pair (zero denominator) return a zero correction.
    """
    dx = x0 - x1
    dy = y0 - y1
    dz = z0 - z1
    length = math.sqrt(dx * dx + dy * dy + dz * dz)
    denominator = (w0 + w1 + alpha_tilde) * length
    scale = (-(length - rest_length) - alpha_tilde * lagrange) / denominator if (
        denominator > 0.0) else 0.0
    return scale * dx, scale * dy, scale * dz, scale * length


@kernel
def sweep_substeps(x, v, w, particles, edges, rest_length, compliance, gravity, acceleration,
                   h, substeps, iterations, velocity_scale, x_prev, lagrange):
    """All ``substeps`` of one frame for any graph, constraints swept in ``edges`` order.

    x, v (N, 3) [m], [m/s] are updated in place; w (N,) [1/kg]; particles: the ids to integrate;
    edges (M, 2) oriented, in sweep order, with rest_length [m] and compliance alpha [m/N];
    gravity (3,) [m/s^2] and acceleration (N, 3) [m/s^2], each particle's external
    acceleration besides it (zeros: none; g + 0.0 is g exactly); h the substep [s];
    ``iterations`` Gauss-Seidel sweeps per substep, lambda reset at the start of each
    substep; velocity_scale = exp(-damping h) / h [1/s]; x_prev (N, 3) and lagrange (M,)
    scratch. With one iteration this is the plain sequential sweep, the
    reference the lane kernel must match bit for bit.
    """
    inverse_h2 = 1.0 / (h * h)
    for _ in range(substeps):
        for k in range(particles.shape[0]):
            i = particles[k]
            free = w[i] > 0.0
            for c in range(3):
                x_prev[i, c] = x[i, c]
                if free:
                    v[i, c] = v[i, c] + h * (gravity[c] + acceleration[i, c])
                x[i, c] = x[i, c] + h * v[i, c]
        lagrange[:] = 0.0
        for _ in range(iterations):
            for e in range(edges.shape[0]):
                a = edges[e, 0]
                b = edges[e, 1]
                wa = w[a]
                wb = w[b]
                cx, cy, cz, dlambda = distance_correction(
                    x[a, 0], x[a, 1], x[a, 2], x[b, 0], x[b, 1], x[b, 2],
                    wa, wb, rest_length[e], compliance[e] * inverse_h2, lagrange[e],
                )
                lagrange[e] += dlambda
                x[a, 0] += wa * cx
                x[a, 1] += wa * cy
                x[a, 2] += wa * cz
                x[b, 0] -= wb * cx
                x[b, 1] -= wb * cy
                x[b, 2] -= wb * cz
        for k in range(particles.shape[0]):
            i = particles[k]
            if w[i] > 0.0:
                for c in range(3):
                    v[i, c] = (x[i, c] - x_prev[i, c]) * velocity_scale


@kernel
def lane_block(buffer, edge_buffer, particle_offset, edge_offset, length, g0, g1, g2, h,
                substeps, velocity_scale):
    """All substeps of one block of LANES chains (layout in ``topology.LaneLayout``).

    The chain is walked once per substep with predict, project and velocity update fused:
    slot p + 1 is predicted, then the edge (p, p + 1) is projected, then slot p, which no later
    constraint touches, gets its velocity. Each lane does exactly the operations of
    ``sweep_substeps`` in the same order, so the results are bit-identical; the innermost loop
    runs across the lanes, independent ropes, which is what LLVM turns into SIMD code.
    """
    inverse_h2 = 1.0 / (h * h)
    last = length - _ONE
    for _ in range(substeps):
        first = particle_offset
        for lane in range(_L):
            l = np.uint64(lane)  # identity when compiled; keeps uint64 when interpreted
            i = first + l
            free = buffer[i + _W] > 0.0
            buffer[i + _XP] = buffer[i + _X]
            buffer[i + _XP + _L] = buffer[i + _X + _L]
            buffer[i + _XP + _L + _L] = buffer[i + _X + _L + _L]
            if free:
                buffer[i + _V] += h * (g0 + buffer[i + _A])
                buffer[i + _V + _L] += h * (g1 + buffer[i + _A + _L])
                buffer[i + _V + _L + _L] += h * (g2 + buffer[i + _A + _L + _L])
            buffer[i + _X] += h * buffer[i + _V]
            buffer[i + _X + _L] += h * buffer[i + _V + _L]
            buffer[i + _X + _L + _L] += h * buffer[i + _V + _L + _L]
        for slot in range(last):
            p = np.uint64(slot)
            a0 = particle_offset + p * _PS
            b0 = a0 + _PS
            e0 = edge_offset + p * _ES
            for lane in range(_L):
                l = np.uint64(lane)
                a = a0 + l
                b = b0 + l
                e = e0 + l
                # predict slot p + 1
                wb = buffer[b + _W]
                buffer[b + _XP] = buffer[b + _X]
                buffer[b + _XP + _L] = buffer[b + _X + _L]
                buffer[b + _XP + _L + _L] = buffer[b + _X + _L + _L]
                if wb > 0.0:
                    buffer[b + _V] += h * (g0 + buffer[b + _A])
                    buffer[b + _V + _L] += h * (g1 + buffer[b + _A + _L])
                    buffer[b + _V + _L + _L] += h * (g2 + buffer[b + _A + _L + _L])
                buffer[b + _X] += h * buffer[b + _V]
                buffer[b + _X + _L] += h * buffer[b + _V + _L]
                buffer[b + _X + _L + _L] += h * buffer[b + _V + _L + _L]
                # project edge (p, p + 1); padding edges are inactive
                wa = buffer[a + _W] * edge_buffer[e + _ACTIVE]
                wbe = wb * edge_buffer[e + _ACTIVE]
                cx, cy, cz, _ = distance_correction(
                    buffer[a + _X], buffer[a + _X + _L], buffer[a + _X + _L + _L],
                    buffer[b + _X], buffer[b + _X + _L], buffer[b + _X + _L + _L],
                    wa, wbe, edge_buffer[e + _REST], edge_buffer[e + _ALPHA] * inverse_h2, 0.0,
                )
                buffer[a + _X] += wa * cx
                buffer[a + _X + _L] += wa * cy
                buffer[a + _X + _L + _L] += wa * cz
                buffer[b + _X] -= wbe * cx
                buffer[b + _X + _L] -= wbe * cy
                buffer[b + _X + _L + _L] -= wbe * cz
                # slot p is final for this substep
                if buffer[a + _W] > 0.0:
                    buffer[a + _V] = (buffer[a + _X] - buffer[a + _XP]) * velocity_scale
                    buffer[a + _V + _L] = (
                        buffer[a + _X + _L] - buffer[a + _XP + _L]) * velocity_scale
                    buffer[a + _V + _L + _L] = (
                        buffer[a + _X + _L + _L] - buffer[a + _XP + _L + _L]
                    ) * velocity_scale
        tail = particle_offset + last * _PS
        for lane in range(_L):
            l = np.uint64(lane)  # identity when compiled; keeps uint64 when interpreted
            i = tail + l
            if buffer[i + _W] > 0.0:
                buffer[i + _V] = (buffer[i + _X] - buffer[i + _XP]) * velocity_scale
                buffer[i + _V + _L] = (buffer[i + _X + _L] - buffer[i + _XP + _L]) * velocity_scale
                buffer[i + _V + _L + _L] = (
                    buffer[i + _X + _L + _L] - buffer[i + _XP + _L + _L]
                ) * velocity_scale


@kernel
def lane_substeps(buffer, edge_buffer, block_particle_offset, block_edge_offset, block_length,
                  gravity, h, substeps, velocity_scale):
    """``lane_block`` over every block, one after the other (one thread)."""
    for b in range(block_length.shape[0]):
        lane_block(buffer, edge_buffer, block_particle_offset[b], block_edge_offset[b],
                    block_length[b], gravity[0], gravity[1], gravity[2], h, substeps,
                    velocity_scale)


@parallel_kernel
def lane_substeps_parallel(buffer, edge_buffer, block_particle_offset, block_edge_offset,
                           block_length, gravity, h, substeps, velocity_scale):
    """``lane_substeps`` with blocks spread over threads. Blocks share no data, so the result
    is the same for any thread count; worth it only for large scenes (a parallel region costs
    about a millisecond to start here)."""
    for b in prange(block_length.shape[0]):
        lane_block(buffer, edge_buffer, block_particle_offset[b], block_edge_offset[b],
                    block_length[b], gravity[0], gravity[1], gravity[2], h, substeps,
                    velocity_scale)


@kernel
def lane_gather(buffer, particle_base, particles, x, v, lanes):
    """Copy x, v (N, 3) of the chain particles into a lane buffer of ``lanes`` lanes."""
    for k in range(particles.shape[0]):
        i = particles[k]
        base = particle_base[k]
        for c in range(3):
            buffer[base + (PARTICLE_X + c) * lanes] = x[i, c]
            buffer[base + (PARTICLE_V + c) * lanes] = v[i, c]
