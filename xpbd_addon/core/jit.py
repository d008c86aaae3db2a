"""How every kernel of the core is compiled (imports numba: only the kernel modules use it)."""

from __future__ import annotations

from numba import njit


def kernel(function):
    """``njit`` as every kernel here is compiled: cached on disk, numpy error model (no
    per-division branch, which stops LLVM vectorising), GIL released."""
    return njit(cache=True, error_model="numpy", nogil=True)(function)


def parallel_kernel(function):
    """``kernel`` with ``prange`` loops spread over threads."""
    return njit(cache=True, error_model="numpy", nogil=True, parallel=True)(function)


def inline_kernel(function):
    """``kernel`` inlined into its callers at numba's level: LLVM does not inline a helper
    as large as a node of the chain solve, and a call in the lane loop keeps the loop
    scalar (measured: 15x slower)."""
    return njit(cache=True, error_model="numpy", nogil=True, inline="always")(function)
