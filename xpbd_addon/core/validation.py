"""Input checking for the core: every public entry point converts and checks its arguments here.

Each helper returns a fresh, C-contiguous array of the dtype the kernels expect, or raises
``ValueError`` whose message starts with the argument's name, so a caller (the Blender side, a
test, a script) can tell the user exactly what was wrong.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = [
    "as_float_array",
    "as_index_pairs",
    "as_nonnegative_float",
    "as_positive_float",
    "as_substeps",
]


def _shape_text(shape: Sequence[int | None]) -> str:
    inner = ", ".join("N" if s is None else str(s) for s in shape)
    return f"({inner},)" if len(shape) == 1 else f"({inner})"


def as_float_array(
    value: Any,
    name: str,
    shape: Sequence[int | None],
    *,
    nonnegative: bool = False,
) -> np.ndarray:
    """Return ``value`` as a new float64 array of ``shape`` (``None`` matches any length).

    Raises ValueError naming ``name`` if it cannot be converted, has the wrong shape, holds NaN
    or inf, or (with ``nonnegative``) a negative entry.
    """
    try:
        array = np.array(value, dtype=np.float64, copy=True)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{name}: cannot be converted to a float array ({error})") from None
    if array.ndim != len(shape) or any(
        want is not None and got != want for got, want in zip(array.shape, shape, strict=True)
    ):
        raise ValueError(
            f"{name}: expected shape {_shape_text(shape)}, got {tuple(array.shape)}"
        )
    if not np.all(np.isfinite(array)):
        bad = int(np.flatnonzero(~np.isfinite(array.reshape(-1)))[0])
        raise ValueError(f"{name}: contains NaN or inf (first at flat index {bad})")
    if nonnegative and array.size and array.min() < 0.0:
        bad = int(np.flatnonzero(array.reshape(-1) < 0.0)[0])
        value = array.reshape(-1)[bad]
        raise ValueError(f"{name}: must not be negative (flat index {bad} is {value!r})")
    return array  # a fresh np.array copy is already C-contiguous (and keeps 0-d as 0-d)


def as_index_pairs(value: Any, name: str, count: int) -> np.ndarray:
    """Return ``value`` as an (M, 2) int64 array of indices into ``count`` particles.

    Whole-numbered floats are accepted (some exporters write indices as floats); anything else
    that is not an integer, an index out of ``[0, count)``, or an edge from a particle to itself
    raises ValueError naming ``name``.
    """
    try:
        raw = np.array(value, copy=True)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{name}: cannot be converted to an index array ({error})") from None
    if raw.size == 0:
        return np.zeros((0, 2), dtype=np.int64)
    if raw.ndim != 2 or raw.shape[1] != 2:
        raise ValueError(f"{name}: expected shape (M, 2), got {tuple(raw.shape)}")
    if raw.dtype.kind in "iu":
        pairs = raw.astype(np.int64)
    elif raw.dtype.kind == "f":
        if not np.all(np.isfinite(raw)) or not np.all(raw == np.round(raw)):
            raise ValueError(f"{name}: indices must be whole numbers")
        pairs = raw.astype(np.int64)
    else:
        raise ValueError(f"{name}: indices must be integers, got dtype {raw.dtype}")
    out_of_range = (pairs < 0) | (pairs >= count)
    if out_of_range.any():
        row = int(np.flatnonzero(out_of_range.any(axis=1))[0])
        raise ValueError(
            f"{name}: edge {row} = {tuple(int(i) for i in pairs[row])} is out of range "
            f"for {count} particles"
        )
    loops = pairs[:, 0] == pairs[:, 1]
    if loops.any():
        row = int(np.flatnonzero(loops)[0])
        raise ValueError(f"{name}: edge {row} connects particle {int(pairs[row, 0])} to itself")
    return np.ascontiguousarray(pairs)


def _as_scalar(value: Any, name: str) -> float:
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name}: expected a number, got {value!r}")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: expected a number, got {value!r}") from None
    if not math.isfinite(number):
        raise ValueError(f"{name}: must be finite, got {number!r}")
    return number


def as_nonnegative_float(value: Any, name: str) -> float:
    """A finite number >= 0, else ValueError naming ``name``."""
    number = _as_scalar(value, name)
    if number < 0.0:
        raise ValueError(f"{name}: must not be negative, got {number!r}")
    return number


def as_positive_float(value: Any, name: str) -> float:
    """A finite number > 0, else ValueError naming ``name``."""
    number = _as_scalar(value, name)
    if number <= 0.0:
        raise ValueError(f"{name}: must be greater than zero, got {number!r}")
    return number


def as_substeps(value: Any, name: str = "substeps") -> int:
    """A whole number >= 1, else ValueError naming ``name``."""
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name}: expected a whole number, got {value!r}")
    try:
        number = int(value)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{name}: expected a whole number, got {value!r}") from None
    if number != value:
        raise ValueError(f"{name}: expected a whole number, got {value!r}")
    if number < 1:
        raise ValueError(f"{name}: must be at least 1, got {number}")
    return number
