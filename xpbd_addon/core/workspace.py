"""The solver's workspace: everything ``step`` writes besides the state's x and v.

``Model`` is what the rope is (static), ``State`` where it is; a ``Workspace`` holds the
solver's scratch and what it carries from one frame to the next, for one State stepped with
one Model. ``step`` makes it on a state's first step (``State.workspace``) and makes a new one
when the state is stepped with another Model (a changed rope, ``Model.with_changes``), so one
Model can be shared by any number of States, and a State continues across a Model change.

What is carried (the contacts' candidate lists and pairs) is a cost saving only: a frame
goes on with it only if it starts where the last one ended, and the contacts give the same
bits with or without it (tests/core/test_collision_carry.py). A state without a workspace
(a copy, a state made from cached arrays) computes the same frames.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

import numpy as np

from .layout.topology import EDGE_STRIDE, PARTICLE_ACCELERATION

if TYPE_CHECKING:
    from .contacts.candidates import CandidateLists
    from .contacts.scene import MeshScene
    from .layout.plan import SolvePlan


class PlannedModel(Protocol):
    """What a workspace is made for: a ``model.Model``'s particle count and plans (declared
    here so that this module, which the Model's State names, does not import it)."""

    @property
    def particle_count(self) -> int: ...
    @property
    def plan(self) -> SolvePlan: ...
    @property
    def reference_plan(self) -> SolvePlan: ...


class ColliderCarry(NamedTuple):
    """The collider candidates a frame ended with (``contacts.FrameContacts.finish``), for
    the next frame of the same state among the same static colliders."""

    scene: MeshScene
    """The joined static colliders they were found among"""
    settings: tuple[float, float]
    """(collider margin [m], depth reach [m]) they were found with"""
    x_end: np.ndarray
    """(N, 3) [m] the positions the frame ended at: the next must start there"""
    radius: np.ndarray
    """(N,) [m] the particles' radii then"""
    inv_mass: np.ndarray
    """(N,) [1/kg] their inverse masses then"""
    caches: ColliderCaches
    """The candidate lists and nearest-triangle caches themselves"""


class RodSubsteps(NamedTuple):
    """The last answer of ``rod.least_substeps`` and what it was asked for: a frame that
    asks the same (a sleeping or still rod: the same x) takes it without computing it."""

    x: np.ndarray
    """(N, 3) [m] the positions"""
    bend_rest: np.ndarray
    """(N, 3) the rest bends in the frames (``RodState.bend_rest``)"""
    dt: float
    """[s] the frame"""
    substeps: int
    """The answer"""


class ColliderCaches(NamedTuple):
    """A frame's collider candidates and nearest-triangle caches (``FrameContacts``' fields of
    the same names; ``kernels_collider`` / ``kernels_resting`` read and write them)."""

    lists: CandidateLists
    """Candidate triangles of each particle"""
    triangle_chord: tuple[np.ndarray, np.ndarray]
    """((N, 3), (N, 3)) [m] start and end of the chord each particle's candidates cover"""
    triangle_reach: np.ndarray
    """(N,) [m] how far around its chord they reach"""
    nearest: tuple
    """Each particle's nearest-triangle cache (``groups.nearest``: the triangle, where the
    particle was [m], the room [m] around it, ...)"""
    geometry: np.ndarray
    """(GEOMETRY_ROWS, N) each particle's cached triangle, for ``resting_static``"""
    segment_edges: CandidateLists
    """Candidate collider edges of each rope segment (``contacts.edges``)"""


class PairPrediction(NamedTuple):
    """The motion the rope-rope broad phase predicts per particle (``contact_pairs``):
    x(t) = x0 + v0 (t - since) + a0 (t - since)^2 / 2."""

    x0: np.ndarray
    """(N, 3) [m] where the prediction starts"""
    v0: np.ndarray
    """(N, 3) [m/s] its velocity"""
    a0: np.ndarray
    """(N, 3) [m/s^2] its acceleration"""
    since: np.ndarray
    """(N,) [s] when it starts, from the frame's start"""


class PairGrid(NamedTuple):
    """The segment boxes of the last full rope-rope search and their grid
    (``kernels_segments.segment_grid``), in the order ``segment_pairs`` takes them."""

    lo: np.ndarray
    """(M, 3) [m] box corners"""
    hi: np.ndarray
    """(M, 3) [m]"""
    start: np.ndarray
    """Grid cell starts"""
    ids: np.ndarray
    """Segments per cell"""
    oversize: np.ndarray
    """Segments with boxes too big for the grid"""
    mask: Any
    """Hash mask of the cells (an int64 scalar)"""
    cell: float
    """Cell size [m]"""


class PairCarry(NamedTuple):
    """The rope-rope pairs a frame ended with (``contacts.FrameContacts.finish``)."""

    x_end: np.ndarray
    """(N, 3) [m] the positions the frame ended at"""
    self_slack: np.ndarray
    """(N,) [m] the slack the pairs were found with"""
    pairs: np.ndarray
    """int64 (K, 2) candidate segment pairs"""
    grid: PairGrid
    """The boxes and grid of the last full search"""
    prediction: PairPrediction
    """The motion predicted then"""
    pair_from: float
    """[s] from the last frame's start: when the last full search was made"""
    pair_until: float
    """[s] from the last frame's start: until when its pairs hold (past its end, where the
    particles move slowly)"""
    shared_motion: tuple[np.ndarray, np.ndarray]
    """((3,) [m/s], (3,) [m/s^2]) the motion shared by all particles in that search"""
    moved_box: np.ndarray
    """uint8 (M,) segments searched again since the last full search"""
    extra_lo: np.ndarray
    """(M, 3) [m] their boxes"""
    extra_hi: np.ndarray
    """(M, 3) [m]"""
    extra_segments: np.ndarray
    """int64 (M,) those segments, the first ``extra_count``"""
    extra_count: int
    """How many"""
    span: float
    """[s] the frame's length"""


@dataclass(eq=False, slots=True)
class Workspace:
    """Scratch and carried data of ``step`` for one State and one Model.

    Made by ``Workspace.for_model``; ``step`` keeps it on ``State.workspace``."""

    model: PlannedModel
    """The Model it was made for (a state stepped with another gets a new workspace)"""
    lane_particles: np.ndarray
    """float64 (layout.particle_buffer_size,) the lane kernels' particle buffer
    (``topology``'s fields: positions [m], velocities [m/s], substep start positions,
    inverse masses, bending and tether rows); x and v are copied in and out every frame, the
    rest starts as ``model.plan.lanes.particle_rows``. Empty without lanes."""
    lane_edges: np.ndarray
    """float64 (layout.edge_buffer_size,) the lane kernels' edge buffer (rest lengths [m],
    compliances [m/N], multipliers); starts as ``model.plan.lanes.edge_rows``"""
    lane_holds: np.ndarray
    """int64 (1 + the number of edge slots,) how many of ``lane_edges``' slots hold a contact
    between ropes (``solve.kernels_held``), then those slots: what is let go at a frame's
    end is only what was held, and a frame cut short leaves the list to the next"""
    sweep_scratch: np.ndarray
    """(N, 3) [m] the sequential sweep's substep start positions x_prev"""
    sweep_multipliers: np.ndarray
    """(K,) [kg m] the sequential sweep's multipliers lambda over ``model.plan``'s K swept
    edges (reset every substep)"""
    reference_multipliers: np.ndarray
    """(M,) [kg m] the same for ``model.reference_plan`` (``step_sequential``; the same
    array when the two plans are one)"""
    no_accelerations: np.ndarray
    """(N, 3) [m/s^2] zeros, read-only: the sequential sweep's external accelerations in a
    frame without any"""
    lane_accelerations: bool = False
    """The lane buffer's ``PARTICLE_ACCELERATION`` rows hold some frame's ``accelerations``
    (else they are zero)"""
    collider_carry: ColliderCarry | None = None
    """The collider candidates the last frame with static colliders ended with, or None"""
    pair_carry: PairCarry | None = None
    """The rope-rope pairs the last frame with self-collision ended with, or None"""
    rod_substeps: RodSubsteps | None = None
    """The rod's last least substep count (``rod.least_substeps``), or None"""
    hold_scratch: tuple = ()
    """The holds' scratch (``solve.kernels_held.hold_contacts``): each segment's flag and
    first contact, and where its hold goes in the lane buffer (``kernels_held.hold_scratch``);
    made at the first hold"""

    @classmethod
    def for_model(cls, model: PlannedModel) -> Workspace:
        """A fresh workspace for ``model``: lane buffers as the plan starts them, scratch
        allocated, nothing carried."""
        lanes = model.plan.lanes
        if lanes is None:
            particles, edges = np.zeros(0), np.zeros(0)
        else:
            particles, edges = lanes.particle_rows.copy(), lanes.edge_rows.copy()
        no_accelerations = np.zeros((model.particle_count, 3))
        no_accelerations.flags.writeable = False
        multipliers = np.empty(len(model.plan.sweep_edges))
        reference = (multipliers if model.reference_plan is model.plan
                     else np.empty(len(model.reference_plan.sweep_edges)))
        holds = np.zeros(1 + len(edges) // EDGE_STRIDE, dtype=np.int64)  # one a slot at most
        return cls(model, particles, edges, holds, np.empty((model.particle_count, 3)),
                   multipliers, reference, no_accelerations)

    def put_accelerations(self, plan: SolvePlan, accelerations: np.ndarray | None) -> None:
        """Write each chain particle's external acceleration [m/s^2] ((N, 3), None: zero)
        into the lane buffer (``topology.PARTICLE_ACCELERATION``), where the lane kernels'
        predict adds it to gravity."""
        lanes = plan.lanes
        if lanes is None:
            return
        from .solve.kernels_direct_io import put_rows  # (numba: only once a rope steps)

        layout = lanes.layout
        # (a writeable zeros for none: a read-only array would compile the kernel again)
        values = np.zeros_like(self.no_accelerations) if accelerations is None else accelerations
        put_rows(self.lane_particles, layout.particle_base, layout.particles, values,
                 PARTICLE_ACCELERATION, layout.lanes)
        self.lane_accelerations = accelerations is not None
