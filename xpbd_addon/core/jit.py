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
