"""Contacts: colliders (triangle meshes, planes) and rope-rope, each substep.

``frame.FrameContacts``: one frame's contacts, made of ``prediction.MotionPrediction`` (the
motion both broad phases predict), ``colliders.ColliderContacts`` (meshes and planes, with
``scene``: the colliders joined into one soup, and ``edges.EdgeContacts``: the rope's
segments against the meshes' edges) and ``ropes.RopeContacts`` (the rope-rope broad phase).
``constants``: their tuning. Kernels: ``kernels_contact`` (projection, friction),
``kernels_collider`` / ``kernels_resting`` (mesh narrow phase),
``kernels_broadphase`` (collider candidates), ``kernels_pairs`` / ``kernels_segments``
(rope-rope candidates and predictions), ``kernels_edges`` / ``kernels_edge_search``
(segments against edges, their candidates), ``kernels_geometry`` (closest points).

The classes are imported on first use (PEP 562): their modules import numba, which the
core loads on the first ``step`` only; ``constants`` is read when a Model is made.
"""

from __future__ import annotations

import importlib
from typing import Any

from .constants import HORIZON_REACH, SELF_MARGIN, SELF_SKIP

__all__ = ["ColliderContacts", "FrameContacts", "HORIZON_REACH", "RopeContacts", "SELF_MARGIN",
           "SELF_SKIP"]

_LAZY = {"FrameContacts": ".frame", "ColliderContacts": ".colliders", "RopeContacts": ".ropes"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value
