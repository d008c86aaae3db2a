"""The members of a frame engine ``Run`` (engine.py): (object, simulation) pairs, a function
applied to each so that a failure names its object, and their world matrices."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import sim

Members = list[tuple[Any, sim.RopeSim]]
"""(object, its simulation) pairs of a run, in the run's order; the objects are this
handler call's (a bpy reference is never kept between calls: it may dangle after an undo)."""


class MemberError(Exception):
    """A problem of one member (its pins, transform, geometry): that object fails alone."""

    def __init__(self, obj: Any, error: Exception) -> None:
        super().__init__(str(error))
        self.obj = obj
        self.error = error


def each_member(members: Members, function: Any) -> list[Any]:
    """``function(obj, rope)`` for every member; an exception becomes a MemberError."""
    results = []
    for obj, rope in members:
        try:
            results.append(function(obj, rope))
        except Exception as exc:  # noqa: BLE001 - handed on, naming the object
            raise MemberError(obj, exc) from exc
    return results


def worlds(members: Members, depsgraph: Any) -> list[np.ndarray]:
    """Each member's evaluated world matrix [4, 4] at the depsgraph's frame, checked."""
    def world(obj: Any, _rope: sim.RopeSim) -> np.ndarray:
        matrix = np.array(obj.evaluated_get(depsgraph).matrix_world, dtype=np.float64)
        sim.check_matrix(matrix, obj.name)
        return matrix
    return each_member(members, world)
