"""Array helpers of the contact kernels, written out where numba's own cost seconds of
compile time on a first use.

numba compiles a slice assignment between arrays (``a[:n] = b``) with its shape check, whose
error message (integers formatted into a string) took 1.9 s to compile the first time a
process met it, and ``np.sort`` 1.3 s: a platform without precompiled kernels paid both
before a first rope over a prop could play (``python3 build.py bench first_use --prop``,
docs/benchmarks.md). These loops compile in a fraction of that and run as fast.

A counter started as ``count = 0`` and passed to a kernel is typed first as the literal 0,
then as int64, and numba compiles the callee for both (0.1-0.8 s each): the callers start
such counters as ``np.int64(0)``.
"""

from __future__ import annotations

import numpy as np

from ..jit import kernel


@kernel
def doubled(values, count):
    """A new 1-D array of twice the length of ``values`` (K,), its first ``count`` entries
    those of ``values`` (a list grown when full)."""
    out = np.empty(max(2 * values.shape[0], 1), dtype=values.dtype)
    for k in range(count):
        out[k] = values[k]
    return out


@kernel
def heapsort(a):
    """Sort the 1-D array a in place, ascending (numba's own sorts, median, percentile and
    argsort cost seconds of compile time each, this a fraction of one)."""
    n = a.shape[0]
    for start in range(n // 2 - 1, -1, -1):
        _sift(a, start, n)
    for end in range(n - 1, 0, -1):
        a[0], a[end] = a[end], a[0]
        _sift(a, np.int64(0), end)  # (not a literal 0: one compile of _sift)


@kernel
def _sift(a, root, end):
    while True:
        child = 2 * root + 1
        if child >= end:
            return
        if child + 1 < end and a[child] < a[child + 1]:
            child += 1
        if not a[root] < a[child]:
            return
        a[root], a[child] = a[child], a[root]
        root = child
