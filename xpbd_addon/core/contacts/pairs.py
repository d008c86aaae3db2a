"""The rope-rope half of ``contacts.FrameContacts``: which segment pairs the contacts test.

A full search (``_find_pairs``: every segment, through ``kernels_segments``' grid) follows
each particle's predicted motion over a horizon; after that, the segments at particles that
strayed from their prediction are searched again alone (``_update_pairs``), and a frame that
starts where the last one ended goes on with its pairs (``_resume_pairs``). See
``contacts.FrameContacts`` and docs/collisions.md ("Broad phase").
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ..workspace import PairCarry, PairGrid, PairPrediction
from .scene import MAX_BOX_CELLS


class FoundPairs(NamedTuple):
    """The last partial rope-rope search (``_update_pairs``)."""

    before: np.ndarray
    """int64 (K, 2) the pairs it was merged into"""
    after: np.ndarray
    """int64 (K', 2) the pairs after the merge"""
    found: np.ndarray
    """int64 (F, 2) the pairs it found"""

SELF_SKIP = 1.5
"""Segments of one rope closer than SELF_SKIP (r_a + r_b) along it never collide: a straight
rope would touch itself there, and only a kink sharper than a rope can bend brings them
together (the pairs i, i + 2 of a rope sampled every 2 r, which at rest cost as much as all
real contacts)."""

HORIZON_REACH = 8.0
"""A full rope-rope search looks ahead until the particles' motion relative to each other
reaches this many radii (at most the rest of the frame): longer, and boxes and candidate
pairs grow with the motion."""

SELF_MARGIN = 0.5
"""Margin of rope-rope contacts, as a fraction of the radius: how far a particle may stray
from its predicted path before the rope-rope broad phase is redone."""


PARTIAL_PAIR_TESTS = 600_000
"""Most box tests of a partial rope-rope search (segments searched now x segments searched
since the last full search) before a full search is cheaper: about 3.5 ns a test, against
3-6 ms for a full search of 10k segments (with 200k, a landing heap did 8 full searches a
frame)."""

EXTRA_GRID = 128
"""A partial rope-rope search puts the segments searched again since the last full search
in a grid of their own once they are more than this many (brute force below)."""

PARTIAL_EXTRA = 2
"""A partial rope-rope search is declined once more than 1 in PARTIAL_EXTRA segments were
searched again since the last full search (the grid's boxes are then mostly stale)."""

STILL = 1e-9
"""A particle predicted to move less than this [m] over a frame is predicted still."""

PARTIAL_SEARCH = 4
"""A broad phase is redone for the strayed particles only while they are fewer than 1 in
PARTIAL_SEARCH of all (more, and one search for everything costs less)."""


class PairSearch:
    """Rope-rope broad phase state and searches; mixed into ``FrameContacts``, whose
    ``__init__`` sets the arrays used here (prediction, pair grid, slack, scratch)."""

    acceleration: Any
    dt: Any
    edge_arc: Any
    edge_chain: Any
    every_segment: Any
    extra_hi: Any
    extra_lo: Any
    h: Any
    model: Any
    moved_box: Any
    pair_mark: Any
    pair_marker: Any
    current_segments: Any
    extra_count: Any
    extra_segments: Any
    found_pairs: Any
    particle_segments: Any
    predicted_stamp: Any
    stamp_mark: Any
    no_bound: Any
    no_segments: Any
    pair_from: Any
    pair_grid: Any
    pair_strayed: Any
    pair_until: Any
    pairs: Any
    path_velocity: Any
    predicted_position: Any
    predicted_velocity: Any
    prediction: Any
    prediction_velocity: Any
    refreshes: Any
    resumed_pairs: Any
    segment_reach: Any
    segment_skip: Any
    segments: Any
    self_slack: Any
    verified_end: Any
    shared_motion: Any
    x_from: Any

    moving_flags: Any
    no_grid: Any

    def _measure(self, x: np.ndarray, v: np.ndarray, ids: np.ndarray | None) -> None:
        raise NotImplementedError  # ``FrameContacts._measure``

    def _resume_pairs(self, x: np.ndarray, carry: PairCarry) -> bool:
        """Go on with the rope-rope pairs the last frame ended with (``finish``), if this
        frame starts where it ended and its last full search had no shared motion: the
        pairs and boxes of particles predicted still hold for any horizon, so only the
        segments at particles predicted to move, or off their prediction, are searched
        again, for the whole new frame. False: a full search is due."""
        same = carry.x_end is self.verified_end or np.array_equal(carry.x_end, x)
        if not (same and np.array_equal(carry.self_slack, self.self_slack)):
            return False
        shared = carry.shared_motion
        if np.any(shared[0]) or np.any(shared[1]):
            return False
        x0, v0, a0, since = carry.prediction
        since -= carry.span  # the times of the last frame, from this one's start
        self.pairs, self.pair_grid, self.prediction = carry.pairs, carry.grid, carry.prediction
        self.pair_from, self.pair_until = carry.pair_from - carry.span, self.dt
        self.shared_motion = shared
        self.moved_box, self.extra_lo, self.extra_hi = (carry.moved_box, carry.extra_lo,
                                                        carry.extra_hi)
        self.extra_segments, self.extra_count = carry.extra_segments, carry.extra_count
        self.segments.left_prediction(x, x0, v0, a0, since, 0.0, self.self_slack,
                                      self.pair_strayed)
        self.pair_strayed |= self._moving(v0, a0)
        if self.pair_strayed.any() and not self._update_pairs(
                x, 0.0, self.pair_strayed, self.prediction_velocity):
            return False
        self.resumed_pairs = True
        return True

    def _find_pairs(self, x: np.ndarray, elapsed: float,
                    velocity: np.ndarray | None = None) -> None:
        """Rope-rope candidates of every segment from the state x at ``elapsed`` [s] into
        the frame, for the horizon ``kernels_segments.segment_motion`` picks; the motion
        predicted with ``velocity`` (N, 3) [m/s] (default: the prediction's)."""
        model, seg = self.model, self.segments
        edges = model.edge_index
        acceleration = self.acceleration
        if velocity is None:
            velocity = self.prediction_velocity
        end, grow, cell, horizon, shared_v, shared_a = seg.segment_motion(
            x, velocity, acceleration, model.particle_radius, self.self_slack,
            self.dt - elapsed, self.h, edges, HORIZON_REACH)
        every = self.every_segment
        lo, hi = seg.segment_boxes(edges, every, x, end, grow)
        start, ids, oversize, mask = seg.segment_grid(lo, hi, cell, float(MAX_BOX_CELLS))
        self.pair_grid = PairGrid(lo, hi, start, ids, oversize, mask, cell)
        self.moved_box[:] = 0
        bound = seg.segment_bounds(edges, x, velocity, acceleration, shared_v, shared_a,
                                   horizon, self.segment_reach)
        self.extra_count = 0
        self.pairs = seg.segment_pairs(
            every, lo, hi, *self.pair_grid, float(MAX_BOX_CELLS), True, self.moved_box,
            self.no_segments, self.extra_lo, self.extra_hi, *self.no_grid, self.moved_box, edges,
            self.edge_chain, self.edge_arc, self.segment_reach, self.segment_skip, bound, x,
            velocity, acceleration, horizon, False,
            (x, velocity, self.no_bound, self.predicted_stamp, 0.0, 0), *self._marks(len(every)))
        self.pair_from = elapsed
        self.pair_until = elapsed + horizon
        self.shared_motion = (shared_v, shared_a)
        self.prediction = PairPrediction(x.copy(), velocity.copy(), acceleration.copy(),
                                         np.full(len(x), elapsed))

    def _update_pairs(self, x: np.ndarray, now: float, strayed: np.ndarray,
                      velocity: np.ndarray, ids: np.ndarray | None = None) -> bool:
        """Search again only the segments at the ``strayed`` particles (flags (N,); ``ids``,
        their indices, if known), which get a new prediction from x at ``now`` [s] with
        ``velocity`` (N, 3) [m/s]; False (nothing done) when a full search is due because
        too many segments would be searched by brute force. Costs what the strayed
        particles cost: no pass over every particle or segment but the merge of the pairs."""
        model, seg = self.model, self.segments
        edges = model.edge_index
        if ids is None:
            ids = seg.flagged(strayed)
        incident_start, incident = self.particle_segments
        current = self.current_segments
        query, fresh = seg.segments_at(ids, incident_start, incident, self.moved_box, current)
        extra_count = self.extra_count + fresh
        # many segments searched again since the last full search get a grid of their own
        # (else each query tests them all)
        gridded = extra_count > EXTRA_GRID
        if extra_count * PARTIAL_EXTRA > len(edges) or (
                not gridded and len(query) * extra_count > PARTIAL_PAIR_TESTS):
            seg.clear_flags(query, current)
            return False
        x0, v0, a0, since = self.prediction
        seg.restart_prediction(ids, x, velocity, self.acceleration, now, x0, v0, a0, since)
        position, velocity = self.predicted_position, self.predicted_velocity
        self.stamp_mark += 1
        mark = self.stamp_mark
        seg.predict_segments(query, edges, x0, v0, a0, since, now, self.predicted_stamp, mark,
                             position, velocity)
        shared_v, shared_a = self.shared_motion
        horizon = self.pair_until - now
        query_lo, query_hi = seg.moved_boxes(
            query, edges, position, velocity, a0, horizon, now - self.pair_from,
            self.pair_until - self.pair_from, shared_v, shared_a, model.particle_radius,
            self.self_slack)
        self.extra_lo[query] = query_lo
        self.extra_hi[query] = query_hi
        self.extra_count = seg.mark_moved(query, self.moved_box, self.extra_segments,
                                          self.extra_count)
        extra = self.extra_segments[:self.extra_count]
        if gridded:
            extra_grid = seg.segment_grid(self.extra_lo[extra], self.extra_hi[extra],
                                          self.pair_grid.cell, float(MAX_BOX_CELLS))
        else:
            extra_grid = self.no_grid
        # few pairs are tested here: the exact test alone (no quick bound over all segments)
        bound = self.no_bound
        found = seg.segment_pairs(
            query, query_lo, query_hi, *self.pair_grid, float(MAX_BOX_CELLS), False,
            self.moved_box, extra, self.extra_lo, self.extra_hi, *extra_grid, current, edges,
            self.edge_chain, self.edge_arc, self.segment_reach, self.segment_skip, bound,
            position, velocity, a0, horizon, True,
            (x0, v0, since, self.predicted_stamp, now, mark), *self._marks(len(query)))
        merged_into = self.pairs
        self.pairs = seg.merge_pairs(self.pairs, current, found)
        self.found_pairs = FoundPairs(merged_into, self.pairs, found)
        seg.clear_flags(query, current)
        return True

    def _refresh_pairs(self, x: np.ndarray, v: np.ndarray, now: float, begun: float) -> None:
        """``FrameContacts.refresh`` for the rope-rope pairs at ``now`` [s], the substep
        under way having begun at ``begun`` [s]."""
        x0, v0, a0, since = self.prediction
        # the pairs must hold now
        expired = now > self.pair_until + 1e-9 * self.dt
        strayed = self.segments.left_prediction(x, x0, v0, a0, since, now,
                                                self.self_slack, self.pair_strayed)
        if expired or strayed:
            self.refreshes += 1
            full = False
            if expired:
                # past the horizon only the boxes of moving particles are stale, when
                # the last full search had no shared motion (``_resume_pairs``): those
                # are searched again, for the rest of the frame
                shared_v, shared_a = self.shared_motion
                full = bool(np.any(shared_v) or np.any(shared_a))
                if not full:
                    self.pair_strayed |= self._moving(v0, a0)
                    self.pair_until = self.dt
                    strayed = int(np.count_nonzero(self.pair_strayed))
            full = full or strayed * PARTIAL_SEARCH >= len(x)
            if not full:
                ids = self.segments.flagged(self.pair_strayed)
                self._measure(x, v, ids)
                self._path_velocity(x, ids)
                full = not self._update_pairs(self.x_from, begun, self.pair_strayed,
                                              self.path_velocity, ids)
            if full:
                self._measure(x, v, None)
                self._path_velocity(x, None)
                self._find_pairs(self.x_from, begun, self.path_velocity)

    def _marks(self, count: int) -> tuple[np.ndarray, int]:
        """``segment_pairs``' seen-marks for a query of ``count`` segments: the marker
        array and its first mark (raised past the query's)."""
        if self.pair_mark + count >= 1 << 62:
            self.pair_marker[:] = -1
            self.pair_mark = 0
        mark = self.pair_mark
        self.pair_mark += count
        return self.pair_marker, mark

    def _moving(self, velocity: np.ndarray, acceleration: np.ndarray) -> np.ndarray:
        """(N,) uint8 flags of the predictions that are not still (nonzero v or a)."""
        self.segments.moving(velocity, acceleration, self.moving_flags)
        return self.moving_flags

    def _path_velocity(self, x: np.ndarray, ids: np.ndarray | None) -> None:
        """The velocity of a prediction from x_from at the substep's start that passes
        through x now: (x - x_from) / h - a h / 2, for the particles ``ids`` (all: None)."""
        rows = slice(None) if ids is None else ids
        self.path_velocity[rows] = ((x[rows] - self.x_from[rows]) * (1.0 / self.h)
                                    - (0.5 * self.h) * self.acceleration[rows])
