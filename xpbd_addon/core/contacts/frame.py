"""The contacts of one frame: broad-phase bookkeeping and the substep projection.

``solver`` creates a ``FrameContacts`` for each frame with colliders or self-collision and
calls ``project`` at the end of every substep; the collider soup is ``contact_scene``'s, the
maths is in ``kernels_contact`` (narrow phase and projection), ``kernels_broadphase``
(collider candidates) and ``kernels_segments`` (rope-rope candidates). Contacts keep no
state between frames (only caches derived from unchanged colliders), so the particle state
x, v is all a cache or bake needs.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..collision import Collider, Plane
from ..workspace import ColliderCaches, ColliderCarry, PairCarry, Workspace
from .pairs import (  # noqa: F401 (SELF_SKIP, HORIZON_REACH: also read from here)
    HORIZON_REACH,
    PARTIAL_SEARCH,
    SELF_MARGIN,
    SELF_SKIP,
    STILL,
    FoundPairs,
    PairSearch,
)
from .scene import MIN_MARGIN, CandidateLists, mesh_scene, plane_table


class FrameContacts(PairSearch):
    """The contacts of one frame: broad phase from the state at its start, then ``project``
    at the end of every substep.

    Both broad phases follow a prediction of each particle's motion: it keeps its velocity
    and an acceleration (gravity in flight, zero when resting or hanging, then measured
    over the last substep; pinned particles move linearly to their targets). Collider
    candidates are found along the predicted path over the rest of the frame plus a margin
    (``Model.contact_margin``), so a falling rope needs no bigger search than a resting one;
    rope-rope candidates for the pairs whose predicted paths come within their radii plus a
    slack (``SELF_MARGIN`` r), in a frame moving with the shared motion. A rope pushed by a
    collider, caught on something or whipped leaves its prediction: after every substep
    ``refresh`` redoes a broad phase from the current state when some particle strayed
    farther than the margin from its path's chord (colliders), or than its slack from
    where it was predicted to be (rope-rope). The candidates thus always hold every contact
    that can happen, and the search is redone only where the prediction failed."""

    def __init__(self, model: Any, workspace: Workspace, x: np.ndarray, v: np.ndarray,
                 pin_end: np.ndarray, dt: float, substeps: int, gravity: np.ndarray,
                 meshes: list[Collider], planes: list[Plane], velocity_scale: float,
                 kernels: Any, broad: Any) -> None:
        self.model, self.kernels, self.broad = model, kernels, broad
        self.workspace = workspace
        """Where the carried candidates come from and go (``finish``)"""
        self.frictionless: np.ndarray | None = None
        """The colliders' parameters without friction (``project_again``), made on first use"""
        self.frictionless_planes: np.ndarray | None = None
        """The plane rows without friction, likewise"""
        self.verified_end: np.ndarray | None = None
        """The last frame's end state, once found equal to this frame's start"""
        from . import kernels_segments

        self.segments = kernels_segments
        self.dt, self.substeps, self.gravity = dt, substeps, gravity
        self.velocity_scale = velocity_scale
        self.h = dt / substeps
        self.push_max = model.contact_push_speed * self.h
        self.acceleration_limit = 2.0 * math.sqrt(float(gravity @ gravity))
        """The most acceleration [m/s^2] a measured prediction keeps (``_measure``)"""
        self.free = model.particle_inv_mass > 0.0
        # (read for the pinned particles only)
        self.pin_velocity = np.zeros_like(x)
        pinned = model.pinned
        self.pin_velocity[pinned] = (pin_end[pinned] - x[pinned]) / dt
        self.moved = np.zeros(model.particle_count, dtype=np.uint8)
        self.held = np.zeros(model.particle_count, dtype=np.uint8)
        """Flags of the particles the last substep's contacts moved"""
        self.no_extra = np.zeros(model.particle_count)
        self.touched = np.zeros(model.particle_count, dtype=np.uint8)
        self.collided = np.zeros(model.particle_count, dtype=np.uint8)
        self.scene = mesh_scene(meshes, kernels) if meshes else None
        self.collider_margin = max(model.contact_margin, MIN_MARGIN)
        self.beyond = DEPTH_REACH * self.collider_margin
        """How deep [m] past r + thickness a contact still holds a particle inside a closed
        mesh or behind a shell (the search reaches that much farther than the margin)"""
        carried = None
        if self.scene is not None:
            count = model.particle_count
            carried = self._carried(x)
            if carried is None:
                self.lists = CandidateLists(count)
                # what ``kernels_collider.resting_contacts`` needs to skip the search
                self.cache_triangle = np.full(count, kernels.CACHE_UNKNOWN, dtype=np.int64)
                self.cache_point = np.zeros((count, 3))
                self.cache_room = np.zeros(count)
                self.cache_time = np.zeros(count)
                self.cache_second = np.full(count, kernels.CACHE_UNKNOWN, dtype=np.int64)
                self.cache_room_second = np.zeros(count)
                self.cache_near = np.zeros(count)
                self.geometry = np.zeros((kernels.GEOMETRY_ROWS, count))
                """Each particle's cached triangle, for ``kernels_resting.resting_static``"""
            else:
                self.lists = carried.lists
                self.triangle_chord = carried.triangle_chord
                self.triangle_reach = carried.triangle_reach
                self.cache_triangle = carried.cache_triangle
                self.cache_point = carried.cache_point
                self.cache_room = carried.cache_room
                self.cache_time = carried.cache_time
                self.cache_second = carried.cache_second
                self.cache_room_second = carried.cache_room_second
                self.cache_near = carried.cache_near
                self.geometry = carried.geometry
            self.rest = np.zeros(count, dtype=np.uint8)
            self.geometry_rows = tuple(self.geometry)  # (views made once, not per call)
            self.thickest = float(self.scene.params[:, 0].max())
        self.plane_rows = plane_table(planes)
        self.pairs = np.zeros((0, 2), dtype=np.int64)
        self.found_pairs: FoundPairs | None = None
        """(pairs before, pairs after, pairs found) of the last partial rope-rope search"""
        radius = model.particle_radius
        self.self_collision = bool(model.self_collision and model.edge_count
                                   and radius.max() > 0.0)
        topology = model.contact_topology
        if self.self_collision:
            self.edge_chain, self.edge_arc = topology.edge_chain, topology.edge_arc
            edges = model.edge_index
            self.self_slack = topology.self_slack
            self.segment_reach, self.segment_skip = topology.segment_reach, topology.segment_skip
            self.every_segment, self.no_bound = topology.every_segment, topology.no_bound
            self.no_segments = np.zeros(0, dtype=np.int64)
            self.no_grid = (self.no_segments, self.no_segments, self.no_segments, np.int64(0))
            """An empty grid: ``segment_pairs`` without one for its extra segments"""
            self.moved_box = np.zeros(len(edges), dtype=np.uint8)
            """Segments searched again since the last full search (their boxes moved)"""
            self.extra_segments = np.empty(len(edges), dtype=np.int64)
            self.extra_count = 0
            """Those segments: extra_segments[:extra_count], in the order they moved"""
            self.current_segments = np.zeros(len(edges), dtype=np.uint8)
            """Scratch flags of the segments a partial search is searching (cleared after)"""
            self.particle_segments = (topology.segment_start, topology.segments)
            self.pair_marker = np.full(len(edges), -1, dtype=np.int64)
            self.pair_mark = 0
            """``segment_pairs``' seen-marks (entries below pair_mark), kept between calls"""
            self.predicted_stamp = np.zeros(len(x), dtype=np.int64)
            self.stamp_mark = 0
            """Which rows of predicted_position a partial search has computed: stamp == mark"""
            self.extra_lo = np.empty((len(edges), 3))
            self.extra_hi = np.empty((len(edges), 3))
            self.predicted_position = np.empty_like(x)
            self.predicted_velocity = np.empty_like(x)
        # The motion the broad phases predict: each particle keeps its velocity and an
        # acceleration, pinned ones move linearly to their targets. At the frame's start
        # the acceleration is gravity for what moves faster than one frame of gravity would
        # make it (in flight) and zero for the rest (resting, hanging or held); later it is
        # measured over the last substep (``_measure``).
        self.prediction_velocity = np.empty_like(v)
        self.acceleration = np.empty_like(v)
        self.segments.start_prediction(v, self.pin_velocity, self.free, gravity, dt, STILL,
                                       self.prediction_velocity, self.acceleration)
        self.v_last = v.copy()
        """Velocities at the end of the last substep (or the frame's start) [m/s]"""
        self.strayed = np.zeros(model.particle_count, dtype=np.uint8)
        """Flags of the particles that left their collider chord"""
        self.pair_strayed = np.zeros(model.particle_count, dtype=np.uint8)
        self.moving_flags = np.zeros(model.particle_count, dtype=np.uint8)
        """Flags of the particles that left their rope-rope prediction"""
        self.every_particle = topology.every_particle
        self.x_from = np.empty_like(x)
        """Where the particles began the substep under way [m] (rows ``_measure`` set)"""
        self.path_velocity = np.empty_like(x)
        """The rope-rope prediction's velocity through x_from and x [m/s] (rows searched)"""
        self.awake: np.ndarray | None = None
        """(N,) uint8 flags of the particles awake, once some ropes sleep (``fall_asleep``);
        None: all awake"""
        self.awake_count = model.particle_count
        self.sleeping = 0
        """How many ropes fell asleep after the frame's first substep (diagnostics)"""
        self.woken = 0
        """How many of them woke later in the frame (a new pair or moving candidate)"""
        self.refreshes = 0
        """How often a broad phase was redone within the frame (diagnostics)"""
        self.resumed = carried is not None
        """Whether the frame went on with the last one's collider candidates (diagnostics)"""
        if carried is not None:
            self._resume_triangles(x)
        elif self.scene is not None:
            self._find_triangles(x, 0.0)
        self.resumed_pairs = False
        """Whether the frame went on with the last one's rope-rope pairs (diagnostics)"""
        if self.self_collision:
            carry, workspace.pair_carry = workspace.pair_carry, None  # the frame changes it
            if carry is None or not self._resume_pairs(x, carry):
                self._find_pairs(x, 0.0)

    def _carried(self, x: np.ndarray) -> ColliderCaches | None:
        """The collider candidates the last frame of this model ended with, if this frame
        starts where it ended, among the same static colliders (``finish``); else None.
        Taken once: the frame changes them."""
        carry, self.workspace.collider_carry = self.workspace.collider_carry, None
        if carry is None or self.scene is None or self.scene.moving:
            return None
        model = self.model
        if (carry.scene is not self.scene
                or carry.settings != (self.collider_margin, self.beyond)
                or not np.array_equal(carry.x_end, x)
                or not np.array_equal(carry.radius, model.particle_radius)
                or not np.array_equal(carry.inv_mass, model.particle_inv_mass)):
            return None
        self.verified_end = carry.x_end  # (the rope-rope carry holds the same copy)
        return carry.caches

    def finish(self, x: np.ndarray) -> None:
        """Keep the candidates for the model's next frame: the rope-rope pairs, and the
        collider candidates when the colliders are static. A frame that starts where this
        one ends goes on with them (and with the nearest-triangle cache), searching again
        only where a particle leaves its prediction (``_resume_triangles``,
        ``_resume_pairs``). The contacts give the same bits for any candidates that hold
        every contact within reach (sorted lists and pairs, a cut-off at ``beyond``), so
        this changes nothing but the cost: a frame computed after a jump, from a cached
        state, is the same as one played in order."""
        end = x.copy()  # one copy for both carries (``_carried`` compares it once)
        if self.self_collision:
            self.workspace.pair_carry = PairCarry(
                end, self.self_slack, self.pairs, self.pair_grid, self.prediction,
                self.pair_from, self.shared_motion, self.moved_box, self.extra_lo,
                self.extra_hi, self.extra_segments, self.extra_count, self.dt)
        if self.scene is None or self.scene.moving:
            return
        model = self.model
        self.workspace.collider_carry = ColliderCarry(
            self.scene, (self.collider_margin, self.beyond), end,
            model.particle_radius.copy(), model.particle_inv_mass.copy(),
            ColliderCaches(self.lists, self.triangle_chord, self.triangle_reach,
                           self.cache_triangle, self.cache_point, self.cache_room,
                           self.cache_time, self.cache_second, self.cache_room_second,
                           self.cache_near, self.geometry))

    def _resume_triangles(self, x: np.ndarray) -> None:
        """Go on with the last frame's collider candidates: search again for the particles
        farther than the margin from their chord now, or whose path over this frame leaves
        it (its end), unless so many that one search for all is cheaper."""
        w = self.model.particle_inv_mass
        x0, chord_end = self.triangle_chord
        end = np.empty_like(x)
        self.segments.predicted_end(x, self.prediction_velocity, self.acceleration, self.dt,
                                    end)
        away = np.zeros(len(x), dtype=np.uint8)
        self.broad.left_chord(x, x0, chord_end, w, self.collider_margin, self.strayed)
        self.broad.left_chord(end, x0, chord_end, w, self.collider_margin, away)
        np.bitwise_or(away, self.strayed, out=away)
        only = self.segments.flagged(away)
        if len(only) * PARTIAL_SEARCH >= len(x):
            self._find_triangles(x, 0.0)
        elif len(only):
            self._find_triangles(x, 0.0, only)

    def _measure(self, x: np.ndarray, v: np.ndarray, ids: np.ndarray | None) -> None:
        """Prediction velocity and acceleration from the substep under way, its rope solve
        done (``kernels_segments.measure_motion``: a = (v - v_last) / h, zero where the last
        contacts moved the particle, at most 2 |g|; still below ``STILL``), and where the
        substep began (``x_from`` = x - v / s), for the particles ``ids`` (all: None). Only
        the broad phases use them, for the particles they search again."""
        rows = self.every_particle if ids is None else ids
        self.segments.measure_motion(rows, x, v, self.v_last, self.held, self.free,
                                     self.pin_velocity, self.h, self.acceleration_limit, STILL,
                                     self.dt, 1.0 / self.velocity_scale,
                                     self.prediction_velocity, self.acceleration, self.x_from)

    def _find_triangles(self, x: np.ndarray, elapsed: float, only: np.ndarray | None = None,
                        x_from: np.ndarray | None = None) -> None:
        """Collider candidates from the state x at ``elapsed`` [s] into the frame, along the
        predicted path over the rest of it (a parabola: its chord, grown by its bulge), for
        every particle or only for the particles ``only`` (sorted ids; then only their rows
        are computed, so that a refresh for a few costs what they cost). With ``x_from``
        (N, 3) [m], where the particles began the substep under way, its path is covered
        too: the chord is searched from there, grown by how far x lies off it."""
        model = self.model
        rows = self.every_particle if only is None else only
        if only is None:
            self.triangle_chord = (np.empty_like(x), np.empty_like(x))
            self.triangle_reach = np.empty(len(x))
        x0, chord_end = self.triangle_chord
        self.broad.chord_rows(rows, x, x if x_from is None else x_from, x_from is not None,
                              self.prediction_velocity, self.acceleration, self.dt - elapsed,
                              model.particle_radius, self.collider_margin, self.beyond,
                              self.free, x0, chord_end, self.triangle_reach)
        assert self.scene is not None
        self.scene.find_candidates(x0, chord_end, self.triangle_reach, self.broad, self.lists,
                                   only)
        # the chord the stray test follows starts where the particle is now; new
        # candidates: the nearest triangle must be searched for again
        self.broad.restart_chords(rows, x, x0, self.cache_triangle, self.kernels.CACHE_UNKNOWN)

    def project(self, x: np.ndarray, v: np.ndarray, substep: int) -> np.ndarray:
        """Contacts at the end of ``substep`` (0-based), in place on x, v (N, 3), after the
        broad-phase check (``refresh``); returns the (N,) uint8 flags of the particles moved
        (the caller clears them)."""
        self.refresh(x, v, substep)
        pairs = self._contact_pairs()
        model, k = self.model, self.kernels
        w, radius = model.particle_inv_mass, model.particle_radius
        scene = self.scene
        s1 = (substep + 1) / self.substeps
        if scene is not None:
            scene.at(s1, self.substeps)
        # Gauss-Seidel over the kinds of contact. Rope-rope contacts push particles into the
        # colliders and the colliders push them back (a heap on the ground), so with them
        # a second pass follows, the colliders in it only for what the ropes moved again.
        touched, collided = self.touched, self.collided
        awake = self.awake
        passes = CONTACT_PASSES if len(pairs) else 1
        for index in range(passes):
            # the second pass: all rope pairs again, then the colliders for what the ropes
            # moved (a second pass at the pairs the colliders moved alone lets a rope lying
            # on another slide off it); the first, with ropes asleep, for the awake ones
            selective = index > 0 or awake is not None
            only = touched if index > 0 or awake is None else awake
            acted = 0
            if len(pairs):
                acted = k.segment_contacts(x, v, w, radius, self.velocity_scale,
                                           model.edge_index, pairs, self.push_max,
                                           model.self_friction, touched, collided, False)
            if index > 0 and not acted:
                break  # the ropes moved nothing: the selective colliders have nothing to do
            if scene is not None and self.lists.live:
                self._colliders(x, v, s1, scene.params, collided, only, selective,
                                self.no_extra, index == 0 and self._mostly_awake())
            if len(self.plane_rows):
                k.plane_contacts(x, v, w, radius, self.velocity_scale, self.plane_rows,
                                 self.push_max, collided, only, selective, self.no_extra)
            if len(pairs):
                np.bitwise_or(self.moved, touched, out=self.moved)
                touched[:] = 0
        np.bitwise_or(self.moved, collided, out=self.moved)
        collided[:] = 0
        return self.moved

    def project_again(self, x: np.ndarray, v: np.ndarray, substep: int,
                      extra: np.ndarray) -> np.ndarray:
        """All contacts once more after the rope's re-solve (``kernels_resolve``), one
        pass, without friction: what the rope's constraints undid of the friction stays
        undone. ``extra`` (N,) [m], how far the re-solve moved each particle, counts as
        approach for the colliders (undone in full, with velocity, not at the gentle
        push-out speed). Returns the moved flags, as ``project``."""
        model, k = self.model, self.kernels
        w, radius = model.particle_inv_mass, model.particle_radius
        scene = self.scene
        s1 = (substep + 1) / self.substeps
        touched = self.touched
        # only what the re-solve moved by more than a sliver of the radius, or the ropes then
        # pushed, can have come into a contact (the rest left the first pass clear of them)
        only = (extra > AGAIN_TOLERANCE * radius).view(np.uint8)
        pairs = self._contact_pairs()
        if len(pairs):
            k.segment_contacts(x, v, w, radius, self.velocity_scale, model.edge_index,
                               pairs, self.push_max, 0.0, touched, only, True)
            np.bitwise_or(only, touched, out=only)
            np.bitwise_or(self.moved, touched, out=self.moved)
            touched[:] = 0
        if scene is not None and self.lists.live:
            params = self.frictionless
            if params is None:
                params = scene.params.copy()
                params[:, 1:3] = 0.0
                self.frictionless = params
            self._colliders(x, v, s1, params, self.moved, only, True, extra)
        if len(self.plane_rows):
            rows = self.frictionless_planes
            if rows is None:
                rows = self.plane_rows.copy()
                rows[:, 7:9] = 0.0
                self.frictionless_planes = rows
            k.plane_contacts(x, v, w, radius, self.velocity_scale, rows, self.push_max,
                             self.moved, only, True, extra)
        return self.moved

    def _colliders(self, x: np.ndarray, v: np.ndarray, s1: float, params: np.ndarray,
                   moved: np.ndarray, only: np.ndarray, selective: bool,
                   extra: np.ndarray, dense: bool = False) -> None:
        """The mesh contacts at frame fraction s1 (``kernels_collider``): the particles
        resting on a face first, then the general narrow phase for the rest (``params``
        (C, 4) the colliders' thickness, friction and closed flag; the other arguments as
        ``kernels_collider.collider_contacts``; ``dense``: most particles are chosen)."""
        k, model, scene = self.kernels, self.model, self.scene
        assert scene is not None
        w, radius = model.particle_inv_mass, model.particle_radius
        fraction = 1.0 / self.substeps
        static = scene.max_motion == 0.0
        # the vectorised kernel computes every particle, the scalar one skips those not chosen
        if static and (dense or not selective):
            left = k.resting_static(
                x.reshape(-1), v.reshape(-1), len(x), radius, self.velocity_scale,
                self.push_max, self.thickest, self.beyond, 1.0 if params is scene.params else 0.0,
                only, selective, extra, self.cache_triangle, self.cache_point.reshape(-1),
                self.cache_room, self.cache_near, *self.geometry_rows, moved, self.rest)
        else:
            left = k.resting_contacts(
                x, v, w, radius, self.velocity_scale, fraction, scene.corners,
                scene.face_normal, scene.vertices, scene.vertices_end, scene.triangles,
                scene.triangle_collider, s1, params, self.push_max, self.thickest, self.beyond,
                moved, only, selective, scene.max_motion, extra, self.cache_triangle,
                self.cache_point, self.cache_room, self.cache_time, self.cache_near, self.rest)
        if left:  # those resting on two faces
            left = k.resting_two_faces(
                x, v, radius, self.velocity_scale, fraction, scene.corners, scene.face_normal,
                scene.vertices, scene.vertices_end, scene.triangles, scene.triangle_edges,
                scene.triangle_collider, scene.vertex_normal, scene.vertex_normal_end,
                scene.edge_normal, scene.edge_normal_end, s1, params, self.push_max,
                self.thickest, self.beyond, moved, scene.max_motion, extra,
                self.cache_triangle, self.cache_point, self.cache_room, self.cache_time,
                self.cache_second, self.cache_room_second, self.rest)
        if left:
            k.collider_contacts(
                x, v, w, radius, self.velocity_scale, fraction, scene.corners,
                scene.face_normal, scene.vertices, scene.vertices_end, scene.triangle_motion,
                scene.triangles, scene.triangle_edges, scene.triangle_collider,
                scene.vertex_normal, scene.vertex_normal_end, scene.edge_normal,
                scene.edge_normal_end, s1, params, self.lists.spans, self.lists.candidates,
                self.push_max, self.lists.distance, moved, self.rest, True, scene.max_motion, extra,
                self.thickest, self.beyond, self.cache_triangle, self.cache_point,
                self.cache_room, self.cache_time, self.cache_second, self.cache_room_second,
                self.cache_near)
            if static:  # the triangles it cached, for the next ``resting_static``
                k.fill_resting(self.rest, self.cache_triangle, scene.corners, scene.face_normal,
                               scene.triangle_collider, scene.params, radius, self.geometry)

    def refresh(self, x: np.ndarray, v: np.ndarray, substep: int) -> None:
        """The broad-phase check right before contacts at the end of ``substep``: redo a
        broad phase where a particle left its predicted path (see the class). Checked
        here, the candidates hold every contact of the positions they are used at; a search
        redone here covers the substep's own path too (from where it began, x - v / s),
        which the contacts follow for crossings."""
        w = self.model.particle_inv_mass
        scene = self.scene
        now = self.dt * (substep + 1) / self.substeps
        begun = now - self.h
        if scene is not None:
            x0, x_end = self.triangle_chord
            strayed = self.broad.left_chord(x, x0, x_end, w, self.collider_margin,
                                            self.strayed)
            if strayed:
                self.refreshes += 1
                # the candidate lists are per particle: only the strayed ones need new
                # lists, unless so many strayed that one search for all is cheaper
                only = (self.segments.flagged(self.strayed)
                        if strayed * PARTIAL_SEARCH < len(x) else None)
                self._measure(x, v, only)
                self._find_triangles(x, now, only, self.x_from)
        if self.self_collision:
            self._refresh_pairs(x, v, now, begun)

    def fall_asleep(self, awake_ropes: np.ndarray, particle_rope: np.ndarray,
                    rope_block: np.ndarray, awake: np.ndarray, awake_blocks: np.ndarray) -> None:
        """Some ropes are still after the first substep (``kernels_sleep``): from now on the
        contacts are for the awake particles only. ``awake_ropes`` (R,) flags the ropes
        awake; ``awake`` (N,) and ``awake_blocks`` (B,), the solver's flags of the particles
        and blocks awake, are set from it here, and again whenever a rope wakes
        (``_contact_pairs``)."""
        from ..solve import kernels_sleep

        self.sleep_kernels = kernels_sleep
        self.awake_ropes, self.particle_rope, self.rope_block = (awake_ropes, particle_rope,
                                                                rope_block)
        self.awake, self.awake_blocks = awake, awake_blocks
        self.pairs_seen: np.ndarray | None = None
        self.candidates_seen: np.ndarray | None = None
        self._contact_pairs()
        self.sleeping = int(len(awake_ropes) - np.count_nonzero(awake_ropes))

    def _contact_pairs(self) -> np.ndarray:
        """The rope-rope candidate pairs the contacts test: all, or the awake ones while
        some ropes sleep. New collider candidates (a search for every particle since the
        last call, moving colliders) first wake the ropes near a moving triangle, new pairs
        the ropes they link to awake ones."""
        if self.awake is None:
            return self.pairs
        sleep, edges = self.sleep_kernels, self.model.edge_index
        scene = self.scene
        woke = 0
        if (scene is not None and scene.moving
                and self.lists.candidates is not self.candidates_seen):
            # (a search for every particle since: a sleeping one may have new candidates)
            woke = sleep.wake_near_moving(self.lists.spans, self.lists.candidates,
                                          scene.triangle_moves, self.particle_rope,
                                          self.awake_ropes)
            if self.candidates_seen is not None:
                self.woken += woke
            self.candidates_seen = self.lists.candidates
        if self.pairs is not self.pairs_seen or woke:
            found = self.found_pairs
            if (not woke and found is not None and found.before is self.pairs_seen
                    and found.after is self.pairs and not sleep.links_asleep_to_awake(
                        found.found, edges, self.particle_rope, self.awake_ropes)):
                # one partial search since, whose new pairs link no sleeping rope to an
                # awake one: the wake pass over all pairs (O(K)) has nothing to do
                linked = 0
            else:
                linked = sleep.wake_linked(self.pairs, edges, self.particle_rope,
                                           self.awake_ropes)
            if self.pairs_seen is not None:
                self.woken += linked
            if woke or linked or self.pairs_seen is None:
                self.awake_count = sleep.awake_particles(
                    self.particle_rope, self.awake_ropes, self.rope_block, self.awake,
                    self.moved, self.awake_blocks)
            self.pairs_seen = self.pairs
            if self.awake_count == len(self.awake):  # everything woke
                self.awake = None
                return self.pairs
            self.awake_pairs = sleep.awake_pairs(self.pairs, edges, self.awake)
        return self.awake_pairs

    def _mostly_awake(self) -> bool:
        return self.awake is None or self.awake_count * SPARSE_AWAKE >= len(self.awake)

    def end_substep(self, v: np.ndarray) -> None:
        """The substep's contacts are done: its end velocities and the particles they moved
        are what the next one's prediction is measured against (``_measure``)."""
        np.copyto(self.v_last, v)
        np.copyto(self.held, self.moved)


SPARSE_AWAKE = 4
"""With ropes asleep, the collider contacts skip the sleeping particles one by one (the scalar
kernel) when fewer than 1 in SPARSE_AWAKE are awake, else compute all and keep the awake
ones' (the vectorised kernel, 8 at a time)."""

CONTACT_PASSES = 2
"""Passes over all contacts per substep when rope-rope contacts are on."""

AGAIN_TOLERANCE = 0.01
"""The pass after the rope's re-solve looks at the particles the re-solve moved by more
than this fraction of their radius (and those the ropes pushed): a particle moved less can
sit at most that deep in a collider until the next substep's contacts."""

DEPTH_REACH = 0.5
"""``FrameContacts.beyond`` as a fraction of the collider margin."""
