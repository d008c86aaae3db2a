"""How every kernel of the core is compiled (imports numba: only the kernel modules use it)."""

from __future__ import annotations

from numba import njit, types
from numba.extending import overload

from . import kernel_cache

# Before any kernel module defines (and so may load from the cache) a kernel.
kernel_cache.check()


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


def lane_flag(value, lanes):
    """``value`` (a constant bool in a kernel) as a compile-time literal where ``lanes`` > 1
    and as a run-time bool where ``lanes`` is 1 (at a call of another kernel:
    ``_forward(..., lane_flag(True, lanes), lanes)``).

    Why: a kernel called with a literal is compiled once per value. The lane kernels need
    the literal (a run-time flag keeps the 16-lane loop scalar, measured), but one lane has
    no vector loop to keep, and there each variant only costs compile time: numba's typing
    and lowering of the inlined chain solve, about 0.6 s per variant on the 2-core machine,
    which a new user waits for (docs/benchmarks.md, first use). The same arithmetic either
    way (selects on the flag): the same bits. A flag tested in a one-lane kernel's innermost
    loop, where LLVM cannot hoist it, costs some run time: ``_back``'s ``estimate`` as a
    run-time flag makes a 12-point rope's frame 4 % slower (25 -> 26 us at S = 20, measured
    in one process) and its first frame 0.3 s sooner from an empty cache."""
    return value


@overload(lane_flag, inline="always", prefer_literal=True)
def _lane_flag(value, lanes):
    # Typed with the literal types (prefer_literal): the choice is made per lane count at
    # compile time, and the inlined body keeps the literal where it returns ``value``.
    if isinstance(lanes, types.IntegerLiteral) and lanes.literal_value == 1:
        return lambda value, lanes: value == True  # noqa: E712 - a run-time bool, not literal
    return lambda value, lanes: value


def optional_item(values, index):
    """``values[index]``, or None where ``values`` is None, decided when the kernel is
    compiled: a kernel that receives the None prunes its ``if flag is not None`` branches
    (numba's dead-branch pruning on None arguments), so what they call is never compiled.
    Used for the per-block flags of a feature no rope of the scene uses (``LanePlan``)."""
    return None if values is None else values[index]


@overload(optional_item, inline="always")
def _optional_item(values, index):
    if isinstance(values, types.NoneType):
        return lambda values, index: None
    return lambda values, index: values[index]
