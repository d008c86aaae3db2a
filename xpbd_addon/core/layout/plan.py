"""How ``step`` runs a Model: the static plans made with it (which kernel solves which
particles and edges, the lane layout and its initial buffers) and the contacts' static
topology. Never written after they are made: what a step writes is the workspace's."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from . import topology
from .reach import MIN_MARGIN, SELF_MARGIN, SELF_SKIP


class PlannedModel(Protocol):
    """What the plans are made from: the arrays of a ``model.Model`` (declared here so that
    this module, which the Model uses, does not import it)."""

    @property
    def particle_count(self) -> int: ...
    @property
    def edge_count(self) -> int: ...
    @property
    def edge_index(self) -> np.ndarray: ...
    @property
    def edge_rest_length(self) -> np.ndarray: ...
    @property
    def edge_compliance(self) -> np.ndarray: ...
    @property
    def particle_inv_mass(self) -> np.ndarray: ...
    @property
    def particle_radius(self) -> np.ndarray: ...
    @property
    def particle_bend_compliance(self) -> np.ndarray | None: ...
    @property
    def self_collision(self) -> bool: ...
    @property
    def solver(self) -> str: ...
    @property
    def decomposition(self) -> topology.Decomposition: ...

LANE_MIN_CHAINS = 8
"""Chains below which the lane kernel is not used: a few short ropes waste most of the 16
lanes, and the plain sweep is faster there (measured: 1 rope x 12 points)."""


DIRECT_MIN_LANE_CHAINS = 4
"""Chains from which the direct solve interleaves 16 per block; fewer get a block each."""


@dataclass(frozen=True, slots=True)
class LanePlan:
    """The static layout of the lane kernels (chains interleaved in blocks): where each chain
    particle and edge sits in the lane buffers, and their initial contents. The buffers a
    step writes are the workspace's copies (``Workspace.lane_particles``/``lane_edges``)."""

    layout: topology.LaneLayout
    particle_rows: np.ndarray
    """float64 (layout.particle_buffer_size,), read-only: the particle lane buffer as a step
    starts it (inverse masses, bending compliance, tether sides; positions and velocities
    are copied in by the kernels)"""
    edge_rows: np.ndarray
    """float64 (layout.edge_buffer_size,), read-only: the edge lane buffer (rest lengths [m],
    compliances [m/N], active flags, inverse rest lengths [1/m])"""
    block_leading: np.ndarray | None
    """bool (B,): some chain of the block has free particles before its first pin; None if
    none has (then not compiled: ``jit.optional_item``)"""
    block_bending: np.ndarray | None
    """bool (B,): some chain of the block has bending stiffness; None if none has (the
    kernels then compile without the bending solve: ``jit.optional_item``)"""
    order_base: np.ndarray
    """int64 (P,): the layout's particle_base sorted, so copies between the buffer and x, v
    stream through the buffer (a third faster than in particle order at 10k particles)"""
    order_particles: np.ndarray
    """int64 (P,): the particle of each entry of ``order_base``"""
    block_start: np.ndarray
    """int64 (B + 1,): block b's particles are entries block_start[b]:block_start[b + 1] of
    the ``order_`` arrays"""
    particle_block: np.ndarray
    """int64 (N,): the block of each particle, -1 outside the lanes"""
    particle_rope: np.ndarray
    """int64 (N,): the rope (chain) of each particle, -1 outside the lanes: the units of
    sleeping (``kernels_sleep``)"""
    rope_block: np.ndarray
    """int64 (R,): the block of each rope"""


@dataclass(frozen=True, slots=True, eq=False)
class SolvePlan:
    """How ``step`` runs a model: which particles and edges go to which kernel. Static (made
    with the Model, never written)."""

    lanes: LanePlan | None
    """The chains in the lane kernels, or None: everything is swept"""
    lane_solver: str
    """"direct" or "sweep": how the lanes are solved"""
    sweep_particles: np.ndarray
    """int64: the particles the sequential sweep moves"""
    sweep_edges: np.ndarray
    """int64 (K, 2): the edges it sweeps, in sweep order"""
    sweep_rest_length: np.ndarray
    """(K,) [m] their rest lengths"""
    sweep_compliance: np.ndarray
    """(K,) [m/N] their compliances"""
    pinned: np.ndarray = field(repr=False)
    """int64: the pinned (inverse mass 0) particles, indices for ``step``'s per-call pin
    copies (a boolean mask costs a pass over all N particles each time)"""
    self_contacts: bool = False
    """self-collision is on and some particle has a radius: every frame runs the contacts"""


@dataclass(frozen=True, slots=True, eq=False)
class ContactTopology:
    """What the contacts derive from the edges and radii alone (static)."""

    segment_start: np.ndarray
    """int64 (N + 1,): particle i's segments are ``segments[segment_start[i]:
    segment_start[i + 1]]`` (increasing)"""
    segments: np.ndarray
    """int64 (2 M,): the segments at each particle"""
    every_segment: np.ndarray
    """int64 (M,): 0 .. M - 1"""
    no_bound: np.ndarray
    """(M,) +inf: an unbounded quick-test bound per segment"""
    every_particle: np.ndarray
    """int64 (N,): 0 .. N - 1"""
    edge_chain: np.ndarray | None
    """int64 (M,): the chain (rope) of each segment, -1 outside chains; None without
    self-collision"""
    edge_arc: np.ndarray | None
    """(M, 2) [m]: rest arc length of each segment's two ends along its chain"""
    self_slack: np.ndarray | None
    """(N,) [m]: how far a particle may stray from its rope-rope prediction
    (``reach.SELF_MARGIN`` r, at least ``reach.MIN_MARGIN``)"""
    segment_reach: np.ndarray | None
    """(M,) [m]: the larger radius + slack of each segment's two ends"""
    segment_skip: np.ndarray | None
    """(M,) [m]: ``reach.SELF_SKIP`` times the larger radius of its ends"""


def contact_topology(model: PlannedModel) -> ContactTopology:
    """The model's ``ContactTopology`` (made once, with the Model)."""
    ends = model.edge_index.reshape(-1)
    order = np.argsort(ends, kind="stable")
    start = np.zeros(model.particle_count + 1, dtype=np.int64)
    np.cumsum(np.bincount(ends, minlength=model.particle_count), out=start[1:])
    edge_chain = edge_arc = slack = reach = skip = None
    radius = model.particle_radius
    if model.self_collision and model.edge_count and radius.max() > 0.0:
        d = model.decomposition
        edge_chain, edge_arc = segment_topology(d.chains, d.chain_edges, model.edge_count,
                                                model.edge_rest_length)
        edges = model.edge_index
        slack = np.maximum(SELF_MARGIN * radius, MIN_MARGIN)
        # per segment: the larger radius + slack and skip radius of its ends
        larger = np.maximum(radius[edges[:, 0]], radius[edges[:, 1]])
        reach = larger + np.maximum(slack[edges[:, 0]], slack[edges[:, 1]])
        skip = SELF_SKIP * larger
    return ContactTopology(start, (order // 2).astype(np.int64),
                           np.arange(model.edge_count), np.full(model.edge_count, np.inf),
                           np.arange(model.particle_count), edge_chain, edge_arc, slack,
                           reach, skip)


def segment_topology(chains: list[np.ndarray], chain_edges: list[np.ndarray],
                     edge_count: int, rest_length: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per edge: the chain (rope) it belongs to, or -1, and the rest arc length [m] of its two
    ends along that chain (low, high), so that self-collision can skip the pairs that are
    neighbours along a rope."""
    edge_chain = np.full(edge_count, -1, dtype=np.int64)
    edge_arc = np.zeros((edge_count, 2))
    for index, ids in enumerate(chain_edges):
        if len(ids) == 0:
            continue
        arc = np.concatenate([[0.0], np.cumsum(rest_length[ids])])
        edge_chain[ids] = index
        edge_arc[ids, 0] = arc[:-1]
        edge_arc[ids, 1] = arc[1:]
    return edge_chain, edge_arc


def solve_plans(model: PlannedModel) -> tuple[SolvePlan, SolvePlan]:
    """(the reference plan: everything swept, the plan ``step`` runs)."""
    d = model.decomposition
    all_particles = np.arange(model.particle_count, dtype=np.int64)
    ids = d.sweep_edge_ids
    pinned = np.flatnonzero(model.particle_inv_mass == 0.0).astype(np.int64)
    self_contacts = bool(model.self_collision
                         and model.particle_radius.max(initial=0.0) > 0.0)
    reference = SolvePlan(
        lanes=None,
        lane_solver="sweep",
        sweep_particles=all_particles,
        sweep_edges=d.sweep_edges,
        sweep_rest_length=model.edge_rest_length[ids].copy(),
        sweep_compliance=model.edge_compliance[ids].copy(),
        pinned=pinned,
        self_contacts=self_contacts,
    )
    if not d.chains or (model.solver == "sweep" and len(d.chains) < LANE_MIN_CHAINS):
        return reference, reference
    # 16 ropes interleaved per block pay from about 4 ropes on (measured); below that one
    # rope per block (a lane count of 1) wastes no work on padding lanes. The sweep keeps
    # 16 lanes: it uses its sequential kernel for so few ropes.
    few = len(d.chains) < DIRECT_MIN_LANE_CHAINS and model.solver == "direct"
    layout = topology.lane_layout(d.chains, d.chain_edges,
                                  lanes=1 if few else topology.LANES)
    particles = np.zeros(layout.particle_buffer_size)
    edges = np.zeros(layout.edge_buffer_size)
    lanes = layout.lanes
    particles[layout.particle_base + topology.PARTICLE_W * lanes] = model.particle_inv_mass[
        layout.particles
    ]
    rest = model.edge_rest_length[layout.edge_ids]
    edges[layout.edge_base + topology.EDGE_REST * lanes] = rest
    edges[layout.edge_base + topology.EDGE_COMPLIANCE * lanes] = model.edge_compliance[
        layout.edge_ids
    ]
    edges[layout.edge_base + topology.EDGE_ACTIVE * lanes] = 1.0
    edges[layout.edge_base + topology.EDGE_INVERSE_REST * lanes] = np.divide(
        1.0, rest, out=np.zeros_like(rest), where=rest > 0.0)
    # Bending rows: none (compliance -1) everywhere, spares included, then the
    # interior points of every chain get theirs.
    fields = particles.reshape(-1, topology.PARTICLE_STRIDE, lanes)
    fields[:, topology.PARTICLE_BEND_COMPLIANCE, :] = -1.0
    bending = np.zeros(len(layout.block_length), dtype=np.bool_)
    if model.particle_bend_compliance is not None:
        # a point at a zero-length segment has no tangent there: no bending row (its
        # coefficient 1/L would be infinite; 0 makes the row pull the other segment shut)
        zero = np.unique(model.edge_index[model.edge_rest_length == 0.0])
        interior = _interior_points(d.chains, layout) & ~np.isin(layout.particles, zero)
        particles[layout.particle_base[interior] + topology.PARTICLE_BEND_COMPLIANCE
                  * lanes] = model.particle_bend_compliance[layout.particles[interior]]
    sides = _tether_sides(d.chains, model.particle_inv_mass, layout)
    particles[layout.particle_base + topology.PARTICLE_TETHER * lanes] = sides
    block_of_particle = np.searchsorted(layout.block_particle_offset.astype(np.int64),
                                        layout.particle_base, side="right") - 1
    leading = np.zeros(len(layout.block_length), dtype=np.bool_)
    leading[block_of_particle[sides < 0]] = True
    if model.particle_bend_compliance is not None:
        bending[block_of_particle[interior]] = True
    general_ids = d.general_edges
    order = np.argsort(layout.particle_base, kind="stable")
    order_base = layout.particle_base[order].astype(np.int64)
    order_particles = layout.particles[order].astype(np.int64)
    block_start = np.append(np.searchsorted(
        order_base, layout.block_particle_offset.astype(np.int64)), len(order_base))
    particle_block = np.full(model.particle_count, -1, dtype=np.int64)
    particle_block[order_particles] = np.searchsorted(
        block_start, np.arange(len(order_base)), side="right") - 1
    particle_rope = np.full(model.particle_count, -1, dtype=np.int64)
    particle_rope[np.concatenate(d.chains)] = np.repeat(
        np.arange(len(d.chains)), [len(chain) for chain in d.chains])
    rope_block = particle_block[[int(chain[0]) for chain in d.chains]].astype(np.int64)
    particles.flags.writeable = False  # static: each workspace writes its own copy
    edges.flags.writeable = False
    return reference, SolvePlan(
        lanes=LanePlan(layout, particles, edges, leading if leading.any() else None,
                       bending if bending.any() else None,
                       order_base, order_particles, block_start.astype(np.int64), particle_block,
                       particle_rope, rope_block),
        lane_solver=model.solver,
        sweep_particles=d.general_particles,
        sweep_edges=model.edge_index[general_ids].copy(),
        sweep_rest_length=model.edge_rest_length[general_ids].copy(),
        sweep_compliance=model.edge_compliance[general_ids].copy(),
        pinned=pinned,
        self_contacts=self_contacts,
    )


def _tether_sides(chains, inv_mass, layout) -> np.ndarray:
    """Per chain particle (in ``layout.particles`` order): +1 if it hangs beyond the chain's
    last pin, -1 if before its first pin, 0 between pins or on a chain without pins."""
    order = {}
    for chain in chains:
        pinned = np.flatnonzero(inv_mass[chain] == 0.0)
        side = np.zeros(len(chain))
        if len(pinned):
            side[pinned[-1] + 1:] = 1.0
            side[:pinned[0]] = -1.0
        for particle, value in zip(chain.tolist(), side.tolist(), strict=True):
            order[particle] = value
    return np.array([order[p] for p in layout.particles.tolist()])


def _interior_points(chains, layout) -> np.ndarray:
    """Mask over ``layout.particles``: points that are neither end of their chain."""
    interior = set()
    for chain in chains:
        interior.update(chain[1:-1].tolist())
    return np.array([p in interior for p in layout.particles.tolist()], dtype=np.bool_)
