"""Split a particle graph into chains (ropes) and everything else, and lay the chains out
for the SIMD-lane kernel.

A *chain* is a connected component that is a simple open path (every particle has at most two
edges and the component is a tree); an isolated particle is a chain of one. Chains are what ropes
are, and they get the fast kernels. Any other component (a closed loop, a tree, a net, a mesh with
faces) is *general* and is swept edge by edge in the order the edges were given.

The Gauss-Seidel sweep order is part of the physics (it decides the result of one sweep), so it
is fixed here once: a chain is walked from its end with the lower particle index, each edge
oriented from the particle nearer that end; general edges keep their input order and
orientation. Every kernel sweeps in exactly this order, which is why they agree bit for bit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

LANES = 16
"""Ropes interleaved per block in the lane kernel (one AVX-512 register of float32, two of
AVX2 float64 per component; LLVM vectorises the innermost lane loop)."""


@dataclass(frozen=True)
class Decomposition:
    """The sweep order of a particle graph.

    ``chains`` lists each chain's particles in walking order; ``chain_edges`` the matching edge
    ids (len(chain) - 1 each); ``general_particles`` / ``general_edges`` the rest, in input
    order. ``sweep_edges`` is every edge, oriented and ordered as all kernels sweep them
    (chains first, then general edges); ``sweep_edge_ids`` maps them to input edge ids.
    """

    chains: list[np.ndarray]
    chain_edges: list[np.ndarray]
    general_particles: np.ndarray
    general_edges: np.ndarray
    sweep_edges: np.ndarray
    sweep_edge_ids: np.ndarray


def _components(particle_count: int, edges: np.ndarray) -> tuple[np.ndarray, int]:
    """Connected-component label per particle (union-find with path halving)."""
    parent = np.arange(particle_count)
    for a, b in edges.tolist():
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        while parent[b] != b:
            parent[b] = parent[parent[b]]
            b = parent[b]
        if a != b:
            if a < b:
                parent[b] = a
            else:
                parent[a] = b
    roots = parent.copy()
    for i in range(particle_count):
        r = i
        while roots[r] != r:
            r = roots[r]
        roots[i] = r
    _, labels = np.unique(roots, return_inverse=True)
    return labels.astype(np.int64), int(labels.max()) + 1 if particle_count else 0


def decompose(particle_count: int, edges: np.ndarray) -> Decomposition:
    """Find the chains of the graph (``edges`` (M, 2) int64, already validated)."""
    edge_count = len(edges)
    labels, component_count = _components(particle_count, edges)
    degree = np.bincount(edges.reshape(-1), minlength=particle_count) if edge_count else np.zeros(
        particle_count, dtype=np.int64
    )
    nodes_per = np.bincount(labels, minlength=component_count)
    edge_labels = labels[edges[:, 0]] if edge_count else np.zeros(0, dtype=np.int64)
    edges_per = np.bincount(edge_labels, minlength=component_count)
    max_degree = np.zeros(component_count, dtype=np.int64)
    np.maximum.at(max_degree, labels, degree)
    is_chain = (edges_per == nodes_per - 1) & (max_degree <= 2)

    # Adjacency in CSR form: for each particle, its (neighbour, edge id) pairs.
    ends = np.concatenate([edges[:, 0], edges[:, 1]])
    others = np.concatenate([edges[:, 1], edges[:, 0]])
    edge_ids = np.concatenate([np.arange(edge_count), np.arange(edge_count)])
    order = np.argsort(ends, kind="stable")
    neighbour = others[order].tolist()
    neighbour_edge = edge_ids[order].tolist()
    start = np.concatenate([[0], np.cumsum(degree)]).tolist()

    # The walking start of each chain: its endpoint with the lowest index (particles are
    # visited in index order, so the first endpoint seen per component is that one).
    chain_start = np.full(component_count, -1, dtype=np.int64)
    endpoint = degree <= 1
    candidates = np.flatnonzero(endpoint & is_chain[labels])
    first = np.unique(labels[candidates], return_index=True)
    chain_start[first[0]] = candidates[first[1]]

    chains: list[np.ndarray] = []
    chain_edges: list[np.ndarray] = []
    sweep: list[tuple[int, int]] = []
    sweep_ids: list[int] = []
    for component in np.flatnonzero(is_chain).tolist():
        current = int(chain_start[component])
        previous_edge = -1
        particles = [current]
        path_edges: list[int] = []
        while True:
            step_to = -1
            for k in range(start[current], start[current + 1]):
                if neighbour_edge[k] != previous_edge:
                    step_to, previous_edge = neighbour[k], neighbour_edge[k]
                    break
            if step_to < 0:
                break
            sweep.append((current, step_to))
            sweep_ids.append(previous_edge)
            path_edges.append(previous_edge)
            particles.append(step_to)
            current = step_to
        chains.append(np.array(particles, dtype=np.int64))
        chain_edges.append(np.array(path_edges, dtype=np.int64))

    general_mask_particles = ~is_chain[labels]
    general_edges = np.flatnonzero(~is_chain[edge_labels]) if edge_count else np.zeros(0, np.int64)
    sweep.extend(map(tuple, edges[general_edges].tolist()))
    sweep_ids.extend(general_edges.tolist())
    return Decomposition(
        chains=chains,
        chain_edges=chain_edges,
        general_particles=np.flatnonzero(general_mask_particles).astype(np.int64),
        general_edges=general_edges.astype(np.int64),
        sweep_edges=np.array(sweep, dtype=np.int64).reshape(-1, 2),
        sweep_edge_ids=np.array(sweep_ids, dtype=np.int64),
    )


PARTICLE_FIELDS: tuple[tuple[str, int, str], ...] = (
    ("X", 3, "position x, y, z [m]"),
    ("V", 3, "velocity x, y, z [m/s]"),
    ("X_PREV", 3, "position at the start of the substep [m] (scratch; lane 0 of the spare "
                  "slot before a block: the direct solve's row counter)"),
    ("W", 1, "inverse mass [1/kg]"),
    ("TETHER", 1, "+1 hangs after the chain's last pin, -1 before its first, else 0"),
    ("BEND_COMPLIANCE", 1, "bending alpha [1/(N m)] at this point, -1 = no bending here"),
    ("BEND_WEIGHT", 1, "h^2 / alpha_b of the bending row here [kg m^2], 0 = none (scratch)"),
    ("BEND_FORCE", 3, "h^2 / alpha_b C_p of the bending row at the current step [kg m] "
                      "(scratch)"),
    # scratch of the joint bending and stretch solve (``kernels_joint``):
    ("JOINT_PHI", 3, "the front's lambda_{i-1}, x_{i+1} fill at node i"),
    ("JOINT_Q", 9, "the coupling of x_{i+1} to x_i, row by row [kg]"),
    ("JOINT_DEN", 1, "1 / den of the elimination at node i"),
    ("JOINT_FRONT", 35, "the front at node i: the fill of the nodes eliminated before on "
                        "(lambda_{i-1}, x_i, x_{i+1}), a symmetric 7x7 (28), and its "
                        "right-hand side (7)"),
    # scratch of the stretch solve (``kernels_chain``):
    ("X_PRED", 3, "the predicted position of the substep [m]"),
    ("K", 6, "the symmetric 3x3 K_i of the block elimination [1/kg]"),
    ("Y", 3, "y_i of the elimination, then dx_i of the back substitution [m]"),
    ("U", 3, "u_i / den_i of the elimination"),
    ("RESIDUAL_MAX", 1, "largest residual from this slot to the chain end (scratch)"),
    ("X_OLD", 3, "the position a substep before [m] (second-order integrator)"),
    ("V_OLD", 3, "the velocity a substep before [m/s] (second-order integrator)"),
    ("ACCELERATION", 3, "external acceleration besides gravity [m/s^2] (wind, force fields: "
                        "``step``'s ``accelerations``), 0 without; added to gravity in the "
                        "predict"),
    ("BEND_TARGET", 3, "the bend b_p the bending row holds (a rod's rest bend in the point's "
                       "frame, ``core.rod``), 0 for a rope: C_p = e_p / L_p - e_a / L_a - b_p"),
)
"""The fields of one particle slot in the lane buffer, in order: (name, floats, meaning);
each float is LANES wide. The offsets below (``PARTICLE_<name>``) and the stride come from
this declaration alone (``_offsets``); the kernels read them by name (``lanes``)."""

EDGE_FIELDS: tuple[tuple[str, int, str], ...] = (
    ("REST", 1, "rest length [m]"),
    ("COMPLIANCE", 1, "alpha [m/N]"),
    ("ACTIVE", 1, "1.0 for a real edge, 0.0 for padding"),
    ("N", 3, "unit segment direction n = (x_p - x_{p+1}) / |...| (stretch solve scratch)"),
    ("G", 1, "geometric stiffness g = max(-lambda, 0) / |x_p - x_{p+1}| [kg] (scratch)"),
    ("LAMBDA_STAR", 1, "lambda* of the elimination, then dlambda (scratch) [kg m]"),
    ("LAMBDA", 1, "lambda of the substep so far [kg m] (XPBD's multiplier: force h^2)"),
    ("INVERSE_REST", 1, "1 / rest length [1/m], 0 for padding (bending coefficients)"),
    ("RESIDUAL", 1, "C + alpha~ lambda at the current step's positions [m] (scratch)"),
    ("TENSION", 1, "lambda of the substep before [kg m]: what G is built from"),
    ("HOLD", 3, "c = sqrt(k) n [sqrt(kg)]: a contact on the segment held in the solve, 0: none"),
    ("HOLD_S", 1, "where along the segment the contact is, from slot p (0) to p + 1 (1)"),
    ("HOLD_AT", 1, "c . x of the contact point's plane [sqrt(kg) m]"),
    ("HOLD_ON", 1, "1.0 where the hold acts in this solve (scratch)"),
    ("HOLD_C", 1, "c . x_c - at at the current step's positions (scratch)"),
    ("HOLD_X", 3, "the contact point where it was held (its anchor) [m]"),
    ("HOLD_T", 3, "k_t P (x_c - anchor) at the current step (scratch)"),
    ("HOLD_MU", 1, "k_t / |c|^2: the anchor's tangential stiffness over the normal one"),
)
"""The fields of one edge slot (the edge from particle slot p to p + 1), as
``PARTICLE_FIELDS``."""


def _offsets(fields: tuple[tuple[str, int, str], ...]) -> tuple[dict[str, int], int]:
    """Each field's offset in a slot, the fields one after another, and the slot's stride."""
    offsets, at = {}, 0
    for name, width, _meaning in fields:
        offsets[name] = at
        at += width
    return offsets, at


_PARTICLE, PARTICLE_STRIDE = _offsets(PARTICLE_FIELDS)
_EDGE, EDGE_STRIDE = _offsets(EDGE_FIELDS)
PARTICLE_X = _PARTICLE["X"]
PARTICLE_V = _PARTICLE["V"]
PARTICLE_X_PREV = _PARTICLE["X_PREV"]
PARTICLE_W = _PARTICLE["W"]
PARTICLE_TETHER = _PARTICLE["TETHER"]
PARTICLE_BEND_COMPLIANCE = _PARTICLE["BEND_COMPLIANCE"]
PARTICLE_BEND_WEIGHT = _PARTICLE["BEND_WEIGHT"]
PARTICLE_BEND_FORCE = _PARTICLE["BEND_FORCE"]
PARTICLE_JOINT_PHI = _PARTICLE["JOINT_PHI"]
PARTICLE_JOINT_Q = _PARTICLE["JOINT_Q"]
PARTICLE_JOINT_DEN = _PARTICLE["JOINT_DEN"]
PARTICLE_JOINT_FRONT = _PARTICLE["JOINT_FRONT"]
PARTICLE_X_PRED = _PARTICLE["X_PRED"]
PARTICLE_K = _PARTICLE["K"]
PARTICLE_Y = _PARTICLE["Y"]
PARTICLE_U = _PARTICLE["U"]
PARTICLE_RESIDUAL_MAX = _PARTICLE["RESIDUAL_MAX"]
PARTICLE_X_OLD = _PARTICLE["X_OLD"]
PARTICLE_V_OLD = _PARTICLE["V_OLD"]
PARTICLE_ACCELERATION = _PARTICLE["ACCELERATION"]
PARTICLE_BEND_TARGET = _PARTICLE["BEND_TARGET"]
EDGE_REST = _EDGE["REST"]
EDGE_HOLD = _EDGE["HOLD"]
EDGE_HOLD_S = _EDGE["HOLD_S"]
EDGE_HOLD_AT = _EDGE["HOLD_AT"]
EDGE_HOLD_ON = _EDGE["HOLD_ON"]
EDGE_HOLD_C = _EDGE["HOLD_C"]
EDGE_HOLD_X = _EDGE["HOLD_X"]
EDGE_HOLD_MU = _EDGE["HOLD_MU"]
EDGE_HOLD_T = _EDGE["HOLD_T"]
EDGE_COMPLIANCE = _EDGE["COMPLIANCE"]
EDGE_ACTIVE = _EDGE["ACTIVE"]
EDGE_N = _EDGE["N"]
EDGE_G = _EDGE["G"]
EDGE_LAMBDA_STAR = _EDGE["LAMBDA_STAR"]
EDGE_LAMBDA = _EDGE["LAMBDA"]
EDGE_INVERSE_REST = _EDGE["INVERSE_REST"]
EDGE_RESIDUAL = _EDGE["RESIDUAL"]
EDGE_TENSION = _EDGE["TENSION"]
SPARE_SLOTS = 2
"""Inactive slots before and after every block's chains, so that the kernels read two
neighbours past either end of a chain without a branch."""


@dataclass(frozen=True)
class LaneLayout:
    """Chains packed ``LANES`` to a block for the lane kernel (two flat float64 buffers).

    Chains are sorted by length, longest first, so a block's padding is small. Block ``b`` has
    ``block_length[b]`` particle slots per lane, with ``SPARE_SLOTS`` inactive slots on either
    side. Field ``f`` of particle slot ``p`` in lane ``l``
    is at ``block_particle_offset[b] + (p * PARTICLE_STRIDE + f) * LANES + l``; field ``f`` of
    the edge from slot ``p`` to ``p + 1`` at ``block_edge_offset[b] + (p * EDGE_STRIDE + f) *
    LANES + l``. Padding slots have inverse mass 0 and padding edges ``EDGE_ACTIVE`` 0, so they
    never move anything. Only the two buffers reach the kernel: few distinct arrays is what
    lets LLVM vectorise the lane loop without a wall of run-time alias checks.
    """

    block_particle_offset: np.ndarray
    """uint64 (B + 1,) first real particle slot of each block (SPARE_SLOTS precede it)"""
    block_edge_offset: np.ndarray
    """uint64 (B + 1,) first real edge slot of each block (SPARE_SLOTS precede it)"""
    block_length: np.ndarray
    """uint64 (B,) particle slots per lane in each block"""
    particles: np.ndarray
    """int64 (P,) the chain particles"""
    particle_base: np.ndarray
    """int64 (P,) buffer index of field 0 of each of those particles (add f * LANES)"""
    edge_ids: np.ndarray
    """int64 (E,) input edge id of each chain edge"""
    edge_base: np.ndarray
    """int64 (E,) buffer index of field 0 of each of those edges"""

    slot_count: int
    """Slots (lanes included) in all blocks, spares included"""
    lanes: int = LANES
    """Chains interleaved per block (16, or 1 for a few ropes)"""

    @property
    def particle_buffer_size(self) -> int:
        return PARTICLE_STRIDE * self.slot_count

    @property
    def edge_buffer_size(self) -> int:
        return EDGE_STRIDE * self.slot_count


def lane_layout(chains: list[np.ndarray], chain_edges: list[np.ndarray], *,
                lanes: int = LANES) -> LaneLayout:
    """Pack chains into blocks of ``lanes`` lanes (``LANES``, or 1: one chain per block, for a
    few ropes, where 16 lanes would mostly compute padding), longest first."""
    lengths = np.array([len(c) for c in chains], dtype=np.int64)
    order = np.argsort(-lengths, kind="stable")
    block_count = (len(chains) + lanes - 1) // lanes
    block_length = np.array([lengths[order[b * lanes]] for b in range(block_count)], dtype=np.int64)
    slots_before = np.concatenate(
        [[0], np.cumsum((block_length + 2 * SPARE_SLOTS) * lanes)]).astype(np.int64)
    first_slot = slots_before + SPARE_SLOTS * lanes
    particle_parts: list[np.ndarray] = []
    particle_base_parts: list[np.ndarray] = []
    edge_id_parts: list[np.ndarray] = []
    edge_base_parts: list[np.ndarray] = []
    for rank, chain_index in enumerate(order.tolist()):
        block, lane = divmod(rank, lanes)
        chain = chains[chain_index]
        slot = np.arange(len(chain), dtype=np.int64)
        particle_parts.append(chain)
        particle_base_parts.append(PARTICLE_STRIDE * (first_slot[block] + slot * lanes) + lane)
        edge_id_parts.append(chain_edges[chain_index])
        edge_base_parts.append(EDGE_STRIDE * (first_slot[block] + slot[:-1] * lanes) + lane)
    empty = np.zeros(0, dtype=np.int64)

    def joined(parts: list[np.ndarray]) -> np.ndarray:
        return np.concatenate(parts).astype(np.int64) if parts else empty

    return LaneLayout(
        block_particle_offset=(PARTICLE_STRIDE * first_slot).astype(np.uint64),
        block_edge_offset=(EDGE_STRIDE * first_slot).astype(np.uint64),
        slot_count=int(slots_before[-1]),
        lanes=lanes,
        block_length=block_length.astype(np.uint64),
        particles=joined(particle_parts),
        particle_base=joined(particle_base_parts),
        edge_ids=joined(edge_id_parts),
        edge_base=joined(edge_base_parts),
    )
