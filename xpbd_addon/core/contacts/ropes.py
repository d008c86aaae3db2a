"""Rope-rope contacts of one frame (``RopeContacts``): which segment pairs the contacts test.

A full search (``_find_pairs``: every segment, through ``kernels_segments``' grid) follows
each particle's predicted motion over a horizon; after that, the segments at particles that
strayed from their prediction are searched again alone (``_update_pairs``), and a frame that
starts where the last one ended goes on with its pairs (``_resume_pairs``). See
``frame.FrameContacts`` and docs/collisions.md ("Broad phase").
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from .. import groups
from ..workspace import PairCarry, PairGrid, PairPrediction, Workspace
from . import constants
from .constants import (
    EXTRA_GRID,
    HORIZON_REACH,
    MAX_BOX_CELLS,
    PARTIAL_EXTRA,
    PARTIAL_PAIR_TESTS,
    PARTIAL_SEARCH,
)
from .kernels_segments import (
    clear_flags,
    flagged,
    frames_past_end,
    left_prediction,
    mark_moved,
    merge_pairs,
    moved_boxes,
    moving,
    predict_segments,
    restart_prediction,
    segment_bounds,
    segment_boxes,
    segment_grid,
    segment_motion,
    segment_pairs,
    segments_at,
)
from .prediction import MotionPrediction


class FoundPairs(NamedTuple):
    """The last partial rope-rope search (``_update_pairs``)."""

    before: np.ndarray
    """int64 (K, 2) the pairs it was merged into"""
    after: np.ndarray
    """int64 (K', 2) the pairs after the merge"""
    found: np.ndarray
    """int64 (F, 2) the pairs it found"""


class RopeContacts:
    """The rope-rope candidate pairs of one frame and their searches (fields in
    ``__init__``); the contacts themselves are ``kernels_contact.segment_contacts``, run by
    ``FrameContacts.project``."""

    __slots__ = ("model", "motion", "edge_chain", "edge_arc", "self_slack", "segment_reach",
                 "segment_skip", "every_segment", "no_bound", "no_segments", "no_grid",
                 "moved_box", "extra_segments", "extra_count", "current_segments",
                 "particle_segments", "pair_marker", "pair_mark", "predicted_stamp",
                 "stamp_mark", "extra_lo", "extra_hi", "predicted_position",
                 "predicted_velocity", "pairs", "found_pairs", "pair_grid", "prediction",
                 "pair_from", "pair_until", "shared_motion", "pair_strayed", "moving_flags",
                 "path_velocity", "refreshes", "resumed_pairs", "rope_segments", "carry_reach")

    def __init__(self, model: Any, workspace: Workspace, motion: MotionPrediction,
                 x: np.ndarray, verified_end: np.ndarray | None) -> None:
        """The pairs at the frame's start: the last frame's, carried in the ``workspace``
        (``verified_end``: its end state, if already found equal to x), or a full search."""
        count, edges = model.particle_count, model.edge_index
        topology = model.contact_topology
        self.model, self.motion = model, motion
        self.edge_chain, self.edge_arc = topology.edge_chain, topology.edge_arc
        """The rope of each segment and the arc length of its ends (``ContactTopology``)"""
        self.self_slack = topology.self_slack
        """(N,) [m] how far a particle may stray from its prediction"""
        self.segment_reach, self.segment_skip = topology.segment_reach, topology.segment_skip
        """(M,) [m] each segment's reach and skip distance"""
        self.rope_segments = groups.rope_segments(edges, self.edge_chain, self.edge_arc,
                                                  self.segment_reach, self.segment_skip)
        """The same as the pair search takes them (``groups.rope_segments``)"""
        self.every_segment, self.no_bound = topology.every_segment, topology.no_bound
        self.no_segments = np.zeros(0, dtype=np.int64)
        self.no_grid = groups.extra_grid(self.no_segments, self.no_segments, self.no_segments,
                                         np.int64(0))
        """An empty grid: ``segment_pairs`` without one for its extra segments"""
        self.moved_box = np.zeros(len(edges), dtype=np.uint8)
        """Segments searched again since the last full search (their boxes moved)"""
        self.extra_segments = np.empty(len(edges), dtype=np.int64)
        self.extra_count = 0
        """Those segments: extra_segments[:extra_count], in the order they moved"""
        self.current_segments = np.zeros(len(edges), dtype=np.uint8)
        """Scratch flags of the segments a partial search is searching (cleared after)"""
        self.particle_segments = (topology.segment_start, topology.segments)
        """Each particle's segments (``ContactTopology``)"""
        self.pair_marker = np.full(len(edges), -1, dtype=np.int64)
        self.pair_mark = 0
        """``segment_pairs``' seen-marks (entries below pair_mark), kept between calls"""
        self.predicted_stamp = np.zeros(count, dtype=np.int64)
        self.stamp_mark = 0
        """Which rows of predicted_position a partial search has computed: stamp == mark"""
        self.extra_lo = np.empty((len(edges), 3))
        self.extra_hi = np.empty((len(edges), 3))
        """[m] the boxes of the segments searched again"""
        self.predicted_position = np.empty_like(x)
        self.predicted_velocity = np.empty_like(x)
        """[m], [m/s] scratch of a partial search's predicted segment ends"""
        self.pairs = np.zeros((0, 2), dtype=np.int64)
        """int64 (K, 2) the candidate segment pairs"""
        self.found_pairs: FoundPairs | None = None
        """(pairs before, pairs after, pairs found) of the last partial search"""
        empty = np.zeros((0, 3))
        self.pair_grid = PairGrid(empty, empty, self.no_segments, self.no_segments,
                                  self.no_segments, np.int64(0), 0.0)
        """The boxes and grid of the last full search"""
        self.prediction = PairPrediction(empty, empty, empty, np.zeros(0))
        """The motion the pairs were found for (each particle's, from when it was last
        searched)"""
        self.pair_from = self.pair_until = 0.0
        """[s] into the frame: when the last full search was made, how long its pairs hold"""
        self.shared_motion = (np.zeros(3), np.zeros(3))
        """([m/s], [m/s^2]) the motion shared by every particle in the last full search"""
        self.pair_strayed = np.zeros(count, dtype=np.uint8)
        """(N,) flags of the particles that left their rope-rope prediction"""
        self.moving_flags = np.zeros(count, dtype=np.uint8)
        """(N,) scratch flags of the predictions that move"""
        self.path_velocity = np.empty_like(x)
        """The prediction's velocity through x_from and x [m/s] (rows searched)"""
        self.refreshes = 0
        """How often the search was redone within the frame (diagnostics)"""
        self.resumed_pairs = False
        """Whether the frame went on with the last one's pairs (diagnostics)"""
        radius = float(np.mean(model.particle_radius)) if count else 0.0
        self.carry_reach = (constants.CARRY_REACH * radius, HORIZON_REACH * radius)
        """[m] how far most particles, and every one, may move over a look ahead past the
        frame's end (``frames_past_end``)"""
        carry, workspace.pair_carry = workspace.pair_carry, None  # the frame changes it
        if carry is None or not self._resume_pairs(x, carry, verified_end):
            self._find_pairs(x, 0.0)

    def carry(self, end: np.ndarray) -> PairCarry:
        """What the next frame goes on with if it starts at ``end`` (N, 3) [m]."""
        return PairCarry(end, self.self_slack, self.pairs, self.pair_grid, self.prediction,
                         self.pair_from, self.pair_until, self.shared_motion, self.moved_box,
                         self.extra_lo, self.extra_hi, self.extra_segments, self.extra_count,
                         self.motion.dt)

    def _resume_pairs(self, x: np.ndarray, carry: PairCarry,
                      verified_end: np.ndarray | None) -> bool:
        """Go on with the rope-rope pairs the last frame ended with (``finish``), if this
        frame starts where it ended and its last full search had no shared motion. Where
        their horizon reaches past this frame's end (``_horizon_end``), only the segments at
        particles off their prediction are searched again. Otherwise the pairs and boxes of
        particles predicted still hold for any horizon, so only the segments at particles
        predicted to move, or off their prediction, are searched again, for the whole new
        frame and past it where they move slowly. False: a full search is due."""
        same = carry.x_end is verified_end or np.array_equal(carry.x_end, x)
        if not (same and np.array_equal(carry.self_slack, self.self_slack)):
            return False
        shared = carry.shared_motion
        if np.any(shared[0]) or np.any(shared[1]):
            return False
        x0, v0, a0, since = carry.prediction
        since -= carry.span  # the times of the last frame, from this one's start
        self.pairs, self.pair_grid, self.prediction = carry.pairs, carry.grid, carry.prediction
        self.pair_from = carry.pair_from - carry.span
        until = carry.pair_until - carry.span
        self.shared_motion = shared
        self.moved_box, self.extra_lo, self.extra_hi = (carry.moved_box, carry.extra_lo,
                                                        carry.extra_hi)
        self.extra_segments, self.extra_count = carry.extra_segments, carry.extra_count
        left_prediction(x, x0, v0, a0, since, 0.0, self.self_slack,
                                      self.pair_strayed)
        if until >= self.motion.dt * (1.0 - 1e-9):
            self.pair_until = until  # the boxes hold every prediction through this frame
        else:
            self.pair_strayed |= self._moving(v0, a0)
            self.pair_until = self._horizon_end(0.0, self.motion.velocity,
                                                self.motion.acceleration)
        if self.pair_strayed.any() and not self._update_pairs(
                x, 0.0, self.pair_strayed, self.motion.velocity):
            return False
        self.resumed_pairs = True
        return True

    def _find_pairs(self, x: np.ndarray, elapsed: float,
                    velocity: np.ndarray | None = None) -> None:
        """Rope-rope candidates of every segment from the state x at ``elapsed`` [s] into
        the frame, for the horizon ``kernels_segments.segment_motion`` picks; the motion
        predicted with ``velocity`` (N, 3) [m/s] (default: the prediction's)."""
        model = self.model
        edges = model.edge_index
        acceleration = self.motion.acceleration
        if velocity is None:
            velocity = self.motion.velocity
        remaining = self.motion.dt - elapsed
        end, grow, cell, horizon, shared_v, shared_a = segment_motion(
            x, velocity, acceleration, model.particle_radius, self.self_slack,
            remaining, self.motion.h, edges, HORIZON_REACH)
        if horizon == remaining and not (np.any(shared_v) or np.any(shared_a)):
            # no shared motion (which a next frame cannot go on with): past the frame's
            # end where the particles move slowly
            until = self._horizon_end(elapsed, velocity, acceleration)
            if until > self.motion.dt:
                end, grow, cell, horizon, shared_v, shared_a = segment_motion(
                    x, velocity, acceleration, model.particle_radius, self.self_slack,
                    until - elapsed, self.motion.h, edges, HORIZON_REACH)
        every = self.every_segment
        lo, hi = segment_boxes(edges, every, x, end, grow)
        start, ids, oversize, mask = segment_grid(lo, hi, cell, float(MAX_BOX_CELLS))
        self.pair_grid = PairGrid(lo, hi, start, ids, oversize, mask, cell)
        self.moved_box[:] = 0
        bound = segment_bounds(edges, x, velocity, acceleration, shared_v, shared_a,
                                   horizon, self.segment_reach)
        self.extra_count = 0
        self.pairs = segment_pairs(
            groups.query_boxes(every, lo, hi), groups.pair_grid(*self.pair_grid),
            float(MAX_BOX_CELLS), True, self.moved_box,
            groups.extra_boxes(self.no_segments, self.extra_lo, self.extra_hi), self.no_grid,
            self.moved_box, self.rope_segments, bound,
            groups.pair_motion(x, velocity, acceleration, horizon),
            groups.lazy_prediction(False, x, velocity, self.no_bound, self.predicted_stamp, 0.0,
                                   0),
            *self._marks(len(every)))
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
        model = self.model
        edges = model.edge_index
        if ids is None:
            ids = flagged(strayed)
        incident_start, incident = self.particle_segments
        current = self.current_segments
        query, fresh = segments_at(ids, incident_start, incident, self.moved_box, current)
        extra_count = self.extra_count + fresh
        # many segments searched again since the last full search get a grid of their own
        # (else each query tests them all)
        gridded = extra_count > EXTRA_GRID
        if extra_count * PARTIAL_EXTRA > len(edges) or (
                not gridded and len(query) * extra_count > PARTIAL_PAIR_TESTS):
            clear_flags(query, current)
            return False
        if self.pair_until > self.motion.dt:
            # the new predictions hold until the pairs' horizon: no farther than the frame's
            # end plus what keeps every one of them within reach (the others' boxes hold
            # through a shorter horizon too)
            self.pair_until = min(self.pair_until, self._horizon_end(
                now, velocity, self.motion.acceleration, ids, spare=len(ids)))
        x0, v0, a0, since = self.prediction
        restart_prediction(ids, x, velocity, self.motion.acceleration, now, x0, v0, a0, since)
        position, velocity = self.predicted_position, self.predicted_velocity
        self.stamp_mark += 1
        mark = self.stamp_mark
        predict_segments(query, edges, x0, v0, a0, since, now, self.predicted_stamp, mark,
                             position, velocity)
        shared_v, shared_a = self.shared_motion
        horizon = self.pair_until - now
        query_lo, query_hi = moved_boxes(
            query, edges, position, velocity, a0, horizon, now - self.pair_from,
            self.pair_until - self.pair_from, shared_v, shared_a, model.particle_radius,
            self.self_slack)
        self.extra_lo[query] = query_lo
        self.extra_hi[query] = query_hi
        self.extra_count = mark_moved(query, self.moved_box, self.extra_segments,
                                          self.extra_count)
        extra = self.extra_segments[:self.extra_count]
        if gridded:
            extra_grid = segment_grid(self.extra_lo[extra], self.extra_hi[extra],
                                          self.pair_grid.cell, float(MAX_BOX_CELLS))
        else:
            extra_grid = self.no_grid
        # few pairs are tested here: the exact test alone (no quick bound over all segments)
        bound = self.no_bound
        found = segment_pairs(
            groups.query_boxes(query, query_lo, query_hi), groups.pair_grid(*self.pair_grid),
            float(MAX_BOX_CELLS), False, self.moved_box,
            groups.extra_boxes(extra, self.extra_lo, self.extra_hi), extra_grid, current,
            self.rope_segments, bound, groups.pair_motion(position, velocity, a0, horizon),
            groups.lazy_prediction(True, x0, v0, since, self.predicted_stamp, now, mark),
            *self._marks(len(query)))
        merged_into = self.pairs
        self.pairs = merge_pairs(self.pairs, current, found)
        self.found_pairs = FoundPairs(merged_into, self.pairs, found)
        clear_flags(query, current)
        return True

    def refresh(self, x: np.ndarray, v: np.ndarray, now: float, begun: float) -> None:
        """The broad-phase check at ``now`` [s] into the frame, the substep under way having
        begun at ``begun`` [s]: a search again (partial, or full if due) when the pairs'
        horizon is past or some particle strayed farther than its slack from its
        prediction."""
        x0, v0, a0, since = self.prediction
        # the pairs must hold now
        expired = now > self.pair_until + 1e-9 * self.motion.dt
        strayed = left_prediction(x, x0, v0, a0, since, now,
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
                    self.pair_until = self.motion.dt
                    strayed = int(np.count_nonzero(self.pair_strayed))
            full = full or strayed * PARTIAL_SEARCH >= len(x)
            if not full:
                ids = flagged(self.pair_strayed)
                self.motion.measure(x, v, ids)
                self._path_velocity(x, ids)
                full = not self._update_pairs(self.motion.x_from, begun, self.pair_strayed,
                                              self.path_velocity, ids)
            if full:
                self.motion.measure(x, v, None)
                self._path_velocity(x, None)
                self._find_pairs(self.motion.x_from, begun, self.path_velocity)

    def _horizon_end(self, now: float, velocity: np.ndarray, acceleration: np.ndarray,
                     ids: np.ndarray | None = None, *, spare: int | None = None) -> float:
        """[s] into the frame: the end of a search's horizon made at ``now`` [s] with the
        predictions ``velocity``, ``acceleration`` (N, 3) [m/s], [m/s^2] of the particles
        ``ids`` (all: None), when their motion does not cut it short: the frame's end, or
        whole frames past it (up to ``CARRY_FRAMES``) while all but ``spare`` (default: 1 in
        ``CARRY_SPARE``) of them move less than ``CARRY_REACH`` radii and every one less
        than ``HORIZON_REACH`` radii (``kernels_segments.frames_past_end``)."""
        dt = self.motion.dt
        if constants.CARRY_FRAMES <= 0:
            return dt
        if ids is None:
            ids = self.motion.every_particle
        if spare is None:
            spare = len(ids) // constants.CARRY_SPARE
        reach, far = self.carry_reach
        frames = frames_past_end(velocity, acceleration, ids, dt - now, dt,
                                 constants.CARRY_FRAMES, reach, far, spare)
        return dt * (1 + frames)

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
        moving(velocity, acceleration, self.moving_flags)
        return self.moving_flags

    def _path_velocity(self, x: np.ndarray, ids: np.ndarray | None) -> None:
        """The velocity of a prediction from x_from at the substep's start that passes
        through x now: (x - x_from) / h - a h / 2, for the particles ``ids`` (all: None)."""
        rows = slice(None) if ids is None else ids
        self.path_velocity[rows] = ((x[rows] - self.motion.x_from[rows]) * (1.0 / self.motion.h)
                                    - (0.5 * self.motion.h) * self.motion.acceleration[rows])
