"""The collider candidates of a model's particles or segments, as the broad phase leaves
them (``scene.MeshScene.find_candidates``, ``edges.EdgeContacts.search``)."""

from __future__ import annotations

import numpy as np

from .. import groups
from .kernels_broadphase import append_lists


class CandidateLists:
    """The collider candidates of a model's particles (``MeshScene.find_candidates``)."""

    def __init__(self, count: int) -> None:
        self.spans = np.zeros((count, 2), dtype=np.int64)
        """Particle i's candidate triangles are candidates[spans[i, 0]:spans[i, 1]], (N, 2)"""
        self.candidates = np.zeros(0, dtype=np.int64)
        """The lists' entries: the first ``used`` are written, the rest is room to append"""
        self.used = 0
        self.live = 0
        """How many entries of ``candidates`` the spans point to (the rest: replaced lists)"""
        self.distance = np.zeros(0)
        """Scratch of the narrow phase, one entry per candidate"""

    def group(self) -> tuple:
        """The lists as the kernels take them (``groups.lists``)."""
        return groups.lists(self.spans, self.candidates, self.distance)

    def take(self, rows: np.ndarray | None, offsets: np.ndarray, found: np.ndarray) -> None:
        """A search's lists (CSR ``offsets``, ``found``): of every row (``rows`` None), or
        appended for the ``rows`` (sorted ids) searched again, their old lists left unused."""
        if rows is None:
            self.spans = np.stack([offsets[:-1], offsets[1:]], axis=1)
            self.candidates = found
            self.used = self.live = len(found)
        else:
            self.candidates, self.used, change = append_lists(
                rows, offsets, found, self.spans, self.candidates, self.used)
            self.live += change
