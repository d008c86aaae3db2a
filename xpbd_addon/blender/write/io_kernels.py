"""numba helpers of the write-back: world positions to the object-space float32 buffer, and
the measures of the safety net (``checks.check_energy``), which runs on every simulated frame.

The per-frame conversion of every particle into object space was the largest cost of the
handler besides the solver (numpy: ~0.15 ms at 10k points in temporaries and a float64 to
float32 pass; BLAS matmul slower still inside Blender). One fused loop writes the buffer that
``foreach_set`` takes, in place.

Like the core's kernels, every input is an argument (``cache=True`` freezes globals), and this
module is imported lazily, after the numba cache folder is set (``environment``) and numba has
loaded (``dependencies.load_numba``).
"""

from __future__ import annotations

from numba import njit


@njit(cache=True, error_model="numpy", nogil=True)
def world_to_local(x, inverse, pinned_ids, rest, out):  # pragma: no cover - compiled
    """out[i, 0:3] = inverse * x[i] for every particle, then the pinned rows back to ``rest``.

    x: world positions [m], float64 [N, 3]; inverse: 4x4 float64 (world to object);
    pinned_ids: int64 [P]; rest: object-space rest [m], float32 [N, >= 3];
    out: float32 [N, >= 3], columns past 3 (a NURBS weight) are left as they are.
    """
    m = inverse
    for i in range(x.shape[0]):
        px = x[i, 0]
        py = x[i, 1]
        pz = x[i, 2]
        out[i, 0] = m[0, 0] * px + m[0, 1] * py + m[0, 2] * pz + m[0, 3]
        out[i, 1] = m[1, 0] * px + m[1, 1] * py + m[1, 2] * pz + m[1, 3]
        out[i, 2] = m[2, 0] * px + m[2, 1] * py + m[2, 2] * pz + m[2, 3]
    for j in range(pinned_ids.shape[0]):
        p = pinned_ids[j]
        out[p, 0] = rest[p, 0]
        out[p, 1] = rest[p, 1]
        out[p, 2] = rest[p, 2]


@njit(cache=True, error_model="numpy", nogil=True)
def first_overstretched(x, edges, rest_length, factor, slack):  # pragma: no cover - compiled
    """Index of the first edge longer than ``factor * rest_length + slack`` [m], or -1.

    x: world positions [m], float64 [N, 3]; edges: int64 [M, 2]; rest_length: [m] float64
    [M]. One pass without temporaries: numpy's gathers cost ~0.4 ms at 10k edges here.
    """
    for e in range(edges.shape[0]):
        a = edges[e, 0]
        b = edges[e, 1]
        dx = x[a, 0] - x[b, 0]
        dy = x[a, 1] - x[b, 1]
        dz = x[a, 2] - x[b, 2]
        limit = factor * rest_length[e] + slack
        if dx * dx + dy * dy + dz * dz > limit * limit:
            return e
    return -1


@njit(cache=True, error_model="numpy", nogil=True)
def kinetic_potential(x, v, inv_mass, gx, gy, gz):  # pragma: no cover - compiled
    """Kinetic + gravitational energy [J] of the free particles (inverse mass > 0 [1/kg]):
    x [m], v [m/s] float64 [N, 3], gravity (gx, gy, gz) [m/s^2]."""
    total = 0.0
    for i in range(x.shape[0]):
        w = inv_mass[i]
        if w > 0.0:
            m = 1.0 / w
            total += m * (0.5 * (v[i, 0] * v[i, 0] + v[i, 1] * v[i, 1] + v[i, 2] * v[i, 2])
                          - (x[i, 0] * gx + x[i, 1] * gy + x[i, 2] * gz))
    return total


@njit(cache=True, error_model="numpy", nogil=True)
def beyond(values, limit):  # pragma: no cover - compiled
    """``np.abs(values).max() >= limit`` for a flat float64 array (False when it holds a NaN,
    as there), without the temporary, whose fresh pages cost ~80 us per frame inside Blender
    at 10k points. Integer counts: the loop vectorises (a float max would not)."""
    over = 0
    nan = 0
    for k in range(values.shape[0]):
        a = abs(values[k])
        over += a >= limit
        nan += a != a
    return over > 0 and nan == 0


@njit(cache=True, error_model="numpy", nogil=True)
def all_finite(x, v):  # pragma: no cover - compiled
    """No NaN or inf in x nor v (flat float64 arrays of one length): one pass for both, no
    temporaries (x * 0 is 0 exactly for finite x, NaN otherwise)."""
    bad = 0
    for k in range(x.shape[0]):
        bad += (x[k] * 0.0 != 0.0) + (v[k] * 0.0 != 0.0)
    return bad == 0


def warm() -> None:
    """Compile (or load from the cache) ``world_to_local`` for the argument types the
    write-back passes and the safety net's measures (``checks``), ahead of the first frame
    (``preparation``); no Blender data needed."""
    import numpy as np

    x = np.zeros((2, 3))
    rest = np.zeros((2, 4), dtype=np.float32)
    out = np.zeros((2, 4), dtype=np.float32)
    # The inverse matrix comes from mathutils (pins.affine_inverse) in Fortran order.
    for inverse in (np.eye(4), np.asfortranarray(np.eye(4))):
        world_to_local(x, inverse, np.zeros(1, dtype=np.int64), rest, out)
    edges = np.zeros((1, 2), dtype=np.int64)
    first_overstretched(x, edges, np.ones(1), 100.0, 1.0)
    kinetic_potential(x, x, np.ones(2), 0.0, 0.0, -9.81)
    beyond(x.reshape(-1), 1e7)
    all_finite(x.reshape(-1), x.reshape(-1))


def warm_tessellation() -> None:
    """Compile (or load) a deforming collider's quad cuts (``tessellation``), for a rope
    with mesh colliders (``preparation``): half a second of compiling that a first rope
    without them does not wait for (docs/benchmarks.md, first use)."""
    import numpy as np

    from ..read import tessellation  # one quad, as read

    tessellation.quad_triangles(np.eye(4, 3, dtype=np.float32), np.arange(4, dtype=np.int32),
                                np.zeros(2, dtype=np.int32))
