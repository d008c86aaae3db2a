"""The contacts of one frame: the collider contacts and the rope-rope contacts, their
broad phases following one motion prediction, and the substep projection.

``solver`` creates a ``FrameContacts`` for each frame with colliders or self-collision and
calls ``project`` at the end of every substep. The parts: ``prediction.MotionPrediction``
(the motion both broad phases predict), ``colliders.ColliderContacts`` (meshes and planes),
``ropes.RopeContacts`` (segment pairs); the maths is in ``kernels_contact`` (narrow phase and
projection), ``kernels_broadphase`` and ``kernels_segments``. What the contacts carry to the
next frame (candidates) lives in the state's workspace and changes no bit, so the particle
state x, v (with ``State.rest``, the ropes at rest) is all a cache or bake needs.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..collision import Collider, Plane
from ..sleep import WAKE_SPEED
from ..workspace import Workspace
from .colliders import ColliderContacts
from .constants import (
    AGAIN_TOLERANCE,
    CLEARANCE_PAIRS,
    CONTACT_PASSES,
    HOLD_REACH,
    SPARSE_AWAKE,
)
from .kernels_contact import carry_margins, contact_motion, segment_contacts
from .kernels_wake import (
    awake_pairs,
    awake_particles,
    wake_near_moving,
    wake_near_moving_ropes,
)
from .prediction import MotionPrediction
from .ropes import RopeContacts


class FrameContacts:
    """The contacts of one frame: broad phase from the state at its start, then ``project``
    at the end of every substep.

    Both broad phases follow a prediction of each particle's motion (``MotionPrediction``).
    Collider candidates are found along the predicted path over the rest of the frame plus
    a margin; rope-rope candidates for the pairs whose predicted paths come within their
    radii plus a slack (``SELF_MARGIN`` r), in a frame moving with the shared motion. A rope
    pushed by a collider, caught on something or whipped leaves its prediction: after every
    substep ``refresh`` redoes a broad phase from the current state when some particle
    strayed farther than the margin from its path's chord (colliders), or than its slack
    from where it was predicted to be (rope-rope). The candidates thus always hold every
    contact that can happen, and the search is redone only where the prediction failed.

    Ropes at rest sleep through the frame (``fall_asleep``, at its start): the contacts are
    then for the awake particles only, a sleeping rope a static body to them."""

    __slots__ = ("model", "workspace", "substeps", "dt", "h", "velocity_scale",
                 "motion", "colliders", "ropes", "no_pairs", "moved", "touched", "collided",
                 "awake", "awake_count", "awake_ropes", "particle_rope", "rope_block",
                 "awake_blocks", "pairs_seen", "awake_pairs", "inverse_mass", "sleeping",
                 "woken", "hold_reach", "clear_margin", "clear_pairs",
                 "clear_base", "clear_motion")

    def __init__(self, model: Any, workspace: Workspace, x: np.ndarray, v: np.ndarray,
                 pin_end: np.ndarray, dt: float, substeps: int, gravity: np.ndarray,
                 meshes: list[Collider], planes: list[Plane], velocity_scale: float, *,
                 accelerations: np.ndarray | None = None) -> None:
        count = model.particle_count
        self.model, self.workspace = model, workspace
        """The rope; the state's workspace (where the carried candidates come and go)"""
        self.substeps, self.dt, self.h = substeps, dt, dt / substeps
        """Substeps, frame [s], substep [s]"""
        self.velocity_scale = velocity_scale
        """exp(-damping h) / h [1/s]: a contact's dx adds dx velocity_scale to v"""
        self.motion = MotionPrediction(model, x, v, pin_end, dt, substeps, gravity,
                                       velocity_scale, accelerations=accelerations)
        """The motion the broad phases predict"""
        self.colliders = ColliderContacts(model, workspace, self.motion, x, meshes, planes)
        """The meshes and planes"""
        radius = model.particle_radius
        self_collision = bool(model.self_collision and model.edge_count and radius.max() > 0.0)
        self.ropes = (RopeContacts(model, workspace, self.motion, x,
                                   self.colliders.verified_end) if self_collision else None)
        """The rope-rope pairs, or None without self-collision"""
        self.no_pairs = np.zeros((0, 2), dtype=np.int64)
        """The pairs without self-collision"""
        self.moved = np.zeros(count, dtype=np.uint8)
        """(N,) flags of the particles the contacts moved this substep"""
        self.touched = np.zeros(count, dtype=np.uint8)
        """(N,) scratch flags of the particles the rope-rope contacts moved in a pass"""
        self.collided = np.zeros(count, dtype=np.uint8)
        """(N,) scratch flags of the particles a pass moved"""
        self.awake: np.ndarray | None = None
        """(N,) uint8 flags of the particles awake, once some ropes sleep (``fall_asleep``);
        None: all awake"""
        self.awake_count = count
        """How many particles are awake"""
        self.awake_ropes = self.particle_rope = self.rope_block = self.no_pairs
        """(R,) flags of the ropes awake; (N,) each particle's rope; (R,) each rope's block
        (set by ``fall_asleep``)"""
        self.awake_blocks = self.no_pairs
        """(B,) the solver's flags of the blocks awake (set by ``fall_asleep``)"""
        self.pairs_seen: np.ndarray | None = None
        """The pairs ``awake_pairs`` was made from"""
        self.awake_pairs = self.no_pairs
        """The pairs with an awake segment end"""
        self.inverse_mass = model.particle_inv_mass
        """(N,) [1/kg] the particles' inverse masses for the rope-rope contacts: 0 for those
        asleep"""
        self.sleeping = 0
        """How many ropes sleep through the frame (diagnostics)"""
        self.woken = 0
        """How many ropes at rest long enough to sleep were kept awake at the frame's start
        (a pair to an awake rope, a moving candidate; diagnostics)"""
        self.hold_reach = HOLD_REACH * float(radius.max()) if len(radius) else 0.0
        """[m] how near touching a pair of segments is held in the ropes' solve"""
        self.clear_margin = np.zeros(0)
        """(>= K,) [m] what each pair of ``clear_pairs`` was left clear by its last test,
        measured from ``clear_base`` (``segment_contacts``' clearance)"""
        self.clear_pairs: np.ndarray | None = None
        """The pairs ``clear_margin`` holds margins of"""
        pair_count = count if self.ropes is not None else 0
        self.clear_base = np.zeros((pair_count, 3))
        """(N, 3) [m] the positions the margins are measured from: where the particles were
        when the pairs were first tested"""
        self.clear_motion = np.zeros((pair_count, 2))
        """(N, 2) [m] each particle's move from ``clear_base`` and its move in the substep
        (``kernels_contact.contact_motion``)"""

    @property
    def pairs(self) -> np.ndarray:
        """int64 (K, 2) the rope-rope candidate pairs"""
        return self.ropes.pairs if self.ropes is not None else self.no_pairs

    @property
    def resumed(self) -> bool:
        """Whether the frame went on with the last one's collider candidates (diagnostics)"""
        return self.colliders.resumed

    @property
    def resumed_pairs(self) -> bool:
        """Whether the frame went on with the last one's rope-rope pairs (diagnostics)"""
        return self.ropes is not None and self.ropes.resumed_pairs

    @property
    def refreshes(self) -> int:
        """How often a broad phase was redone within the frame (diagnostics)"""
        return self.colliders.refreshes + (self.ropes.refreshes if self.ropes else 0)

    def finish(self, x: np.ndarray) -> None:
        """Keep the candidates for the state's next frame: the rope-rope pairs, and the
        collider candidates when the colliders are static. A frame that starts where this
        one ends goes on with them (and with the nearest-triangle cache), searching again
        only where a particle leaves its prediction. The contacts give the same bits for
        any candidates that hold every contact within reach (sorted lists and pairs, a
        cut-off at ``beyond``), so this changes nothing but the cost: a frame computed after
        a jump, from a cached state, is the same as one played in order."""
        end = x.copy()  # one copy for both carries (the next frame compares it once)
        if self.ropes is not None:
            self.workspace.pair_carry = self.ropes.carry(end)
        carry = self.colliders.carry(end)
        if carry is not None:
            self.workspace.collider_carry = carry

    def project(self, x: np.ndarray, v: np.ndarray, substep: int) -> np.ndarray:
        """Contacts at the end of ``substep`` (0-based), in place on x, v (N, 3), after the
        broad-phase check (``refresh``); returns the (N,) uint8 flags of the particles moved
        (the caller clears them)."""
        self.refresh(x, v, substep)
        pairs = self._contact_pairs()
        model, colliders = self.model, self.colliders
        w, radius = self.inverse_mass, model.particle_radius
        s1 = (substep + 1) / self.substeps
        if colliders.scene is not None:
            colliders.scene.at(s1, self.substeps)
        # Gauss-Seidel over the kinds of contact. Rope-rope contacts push particles into the
        # colliders and the colliders push them back (a heap on the ground), so with them
        # a second pass follows, the colliders in it only for what the ropes moved again.
        touched, collided = self.touched, self.collided
        awake = self.awake
        passes = CONTACT_PASSES if len(pairs) else 1
        # Gauss-Seidel over the rope pairs in one fixed order is biased: with friction, a
        # rope lying across others crawled along itself towards its last point (0.5 mm/s on
        # a flat floor). So a substep's two passes sweep the pairs in opposite directions,
        # and the substeps alternate which comes first (with the first pass alone
        # alternating, a rope crossing one other rocked on it and never slept).
        for index in range(passes):
            # the second pass: all rope pairs again, then the colliders for what the ropes
            # moved (a second pass at the pairs the colliders moved alone lets a rope lying
            # on another slide off it); the first, with ropes asleep, for the awake ones
            selective = index > 0 or awake is not None
            only = touched if index > 0 or awake is None else awake
            acted = 0
            if len(pairs):
                acted = segment_contacts(x, v, w, radius, self.velocity_scale,
                                         model.edge_index, pairs, self.motion.push,
                                         model.self_friction, touched, collided, False,
                                         self.hold_reach, self._clearance(pairs, x, v),
                                         (substep + index) % 2 == 1)
            if index > 0 and not acted:
                break  # the ropes moved nothing: the selective colliders have nothing to do
            if colliders.live:
                colliders.meshes(x, v, s1, collided, only, selective, colliders.no_extra,
                                 dense=index == 0 and self._mostly_awake())
            colliders.planes(x, v, collided, only, selective, colliders.no_extra)
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
        model, colliders = self.model, self.colliders
        w, radius = self.inverse_mass, model.particle_radius
        s1 = (substep + 1) / self.substeps
        touched = self.touched
        # only what the re-solve moved by more than a sliver of the radius, or the ropes then
        # pushed, can have come into a contact (the rest left the first pass clear of them)
        only = (extra > AGAIN_TOLERANCE * radius).view(np.uint8)
        if self.awake is not None:
            np.bitwise_and(only, self.awake, out=only)  # (a sleeping rope does not move)
        pairs = self._contact_pairs()
        if len(pairs):
            segment_contacts(x, v, w, radius, self.velocity_scale, model.edge_index, pairs,
                             self.motion.push, 0.0, touched, only, True, self.hold_reach,
                             self._clearance(pairs, x, v), substep % 2 == 1)
            np.bitwise_or(only, touched, out=only)
            np.bitwise_or(self.moved, touched, out=self.moved)
            touched[:] = 0
        if colliders.live:
            colliders.meshes(x, v, s1, self.moved, only, True, extra, frictionless=True)
        colliders.planes(x, v, self.moved, only, True, extra, frictionless=True)
        return self.moved

    def refresh(self, x: np.ndarray, v: np.ndarray, substep: int) -> None:
        """The broad-phase check right before contacts at the end of ``substep``: redo a
        broad phase where a particle left its predicted path (see the class). Checked
        here, the candidates hold every contact of the positions they are used at; a search
        redone here covers the substep's own path too (from where it began, x - v / s),
        which the contacts follow for crossings."""
        now = self.dt * (substep + 1) / self.substeps
        self.colliders.refresh(x, v, now)
        if self.ropes is not None:
            self.ropes.refresh(x, v, now, now - self.h)

    def fall_asleep(self, sleep: Any, x: np.ndarray, v: np.ndarray, awake: np.ndarray,
                    awake_blocks: np.ndarray) -> bool:
        """At the frame's start (x, v (N, 3) [m], [m/s]), the ropes ``sleep``
        (``core.sleep.FrameSleep``) has not flagged awake may sleep: those with a moving
        triangle or collider edge among their candidates, or within reach of a moving rope
        (``sleep.moving``), are woken; the rest sleep through the frame. ``awake`` (N,) and
        ``awake_blocks`` (B,), the solver's flags of the particles and blocks awake, are set
        here. Returns whether some rope sleeps; the contacts are then for the awake
        particles, and a sleeping rope is a static body to them (its particles' inverse mass
        0) until the next frame's start."""
        awake_ropes, moving = sleep.awake_ropes, sleep.moving
        particle_rope, rope_block = sleep.lanes.particle_rope, sleep.lanes.rope_block
        self.awake_ropes, self.particle_rope, self.rope_block = (awake_ropes, particle_rope,
                                                                rope_block)
        ready = len(awake_ropes) - int(np.count_nonzero(awake_ropes))
        scene, lists = self.colliders.scene, self.colliders.lists
        # (a collider moves every particle of the ropes it reaches: ``sleep.whole``)
        whole = sleep.whole
        if scene is not None and scene.moving:
            wake_near_moving(lists.spans, lists.candidates, scene.triangle_moves,
                             particle_rope, whole)
        if self.colliders.edges is not None:
            self.colliders.edges.wake(particle_rope, whole)
        np.bitwise_or(moving, whole, out=moving)
        np.bitwise_or(awake_ropes, moving, out=awake_ropes)
        wake_near_moving_ropes(x, v, sleep.last_speed, particle_rope, self.model.particle_radius,
                               moving, whole, awake_ropes, sleep.fall, self.dt,
                               WAKE_SPEED * sleep.speed)
        self.sleeping = len(awake_ropes) - int(np.count_nonzero(awake_ropes))
        self.woken = ready - self.sleeping
        if not self.sleeping:
            return False
        self.awake, self.awake_blocks = awake, awake_blocks
        self.awake_count = awake_particles(particle_rope, awake_ropes, rope_block, awake,
                                           self.moved, awake_blocks)
        self.moved[:] = 0  # (the first substep copies every particle into the lanes)
        self.inverse_mass = self.model.particle_inv_mass * awake
        self.pairs_seen = None
        return True

    def hold_pairs(self, x: np.ndarray,
                   v: np.ndarray) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
        """What the ropes' solve holds at x, v (N, 3) [m], [m/s] is chosen from
        (``solve.kernels_held``): the pairs the contacts tested this substep, and their
        clearance, the margins their tests left with each particle's move since the base
        (``segment_contacts``). The holds pass over the pairs their margins keep clear and
        hold those of the rest that touch: whatever else the list holds, the same pairs
        (testing every pair again cost the crossed layers as much as their contacts)."""
        pairs = self._contact_pairs()
        if not len(pairs):
            return self.no_pairs, self._untested(0)
        if pairs is not self.clear_pairs:
            return pairs, self._untested(len(pairs))
        contact_motion(x, v, self.clear_base, 1.0 / self.velocity_scale, self.clear_motion)
        return pairs, (self.clear_margin[:len(pairs)], self.clear_motion)

    def _untested(self, count: int) -> tuple[np.ndarray, np.ndarray]:
        """A clearance that passes over none of ``count`` pairs."""
        return np.full(count, -np.inf), self.clear_motion

    def _clearance(self, pairs: np.ndarray, x: np.ndarray,
                   v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``segment_contacts``' clearance for ``pairs`` at x, v (N, 3) [m], [m/s]: their
        margins, and each particle's motion since the base positions (``contact_motion``).
        The frame's first list starts untested, its margins measured from x there (the
        base); a list found again later in the frame keeps the margins of the pairs it
        shares with the last (``carry_margins``: a margin bounds the pair's gap from the
        base, whichever list it was tested in). Passing over the pairs a margin keeps clear
        changes no bit: a frame costs less where ropes lie still on each other, and the
        same where they move."""
        size = max(len(pairs), len(self.clear_margin))
        if len(pairs) * CLEARANCE_PAIRS < len(x):
            # few pairs: testing them all costs less than measuring every particle's motion
            # (and what the tests write here, at motion not measured, is no margin to keep)
            if len(self.clear_margin) < size:
                self.clear_margin = np.empty(2 * size)
            margin = self.clear_margin[:len(pairs)]
            margin[:] = -np.inf
            self.clear_pairs = None
            return margin, self.clear_motion
        if pairs is not self.clear_pairs:
            kept = self.clear_margin
            self.clear_margin = np.empty(2 * size if len(kept) < size else len(kept))
            margin = self.clear_margin[:len(pairs)]
            if self.clear_pairs is None:  # the frame's first: margins from here
                margin[:] = -np.inf
                self.clear_base[:] = x
            else:  # a list found again: the pairs tested before keep their margins
                carry_margins(self.clear_pairs, kept[:len(self.clear_pairs)], pairs, margin)
            self.clear_pairs = pairs
        margin = self.clear_margin[:len(pairs)]
        contact_motion(x, v, self.clear_base, 1.0 / self.velocity_scale, self.clear_motion)
        return margin, self.clear_motion

    def _contact_pairs(self) -> np.ndarray:
        """The rope-rope candidate pairs the contacts test: all, or while some ropes sleep
        those with an awake segment end (a pair found within the frame may join an awake
        rope to a sleeping one: the sleeping one does not move)."""
        pairs = self.pairs
        if self.awake is None:
            return pairs
        if pairs is not self.pairs_seen:
            self.awake_pairs = awake_pairs(pairs, self.model.edge_index, self.awake)
            self.pairs_seen = pairs
        return self.awake_pairs

    def _mostly_awake(self) -> bool:
        return self.awake is None or self.awake_count * SPARSE_AWAKE >= len(self.awake)

    def end_substep(self, v: np.ndarray) -> None:
        """The substep's contacts are done: its end velocities and the particles they moved
        are what the next one's prediction is measured against."""
        self.motion.end_substep(v, self.moved)
