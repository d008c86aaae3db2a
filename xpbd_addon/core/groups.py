"""The argument groups of the core's kernels, declared once.

A kernel that needs many arrays takes them in groups: plain tuples, each made by one function
here whose parameters name its items, in order. The kernel unpacks a group on its first lines
into exactly those names (``vertices, vertices_end, triangles, triangle_collider = mesh``), so
a caller and a kernel agree by name, not by position, and a kernel takes at most 16
positional arguments; ``tests/core/test_kernel_arguments.py`` fails when a kernel's
unpacking differs from the declaration here, or a kernel takes more.

Why plain tuples: numba types a plain tuple's items in C at each call, about 0.02 us an array
more than as separate arguments (measured, 12 arrays: 0.53 us as arguments, 0.72 us in three
tuples), while three named tuples of the same arrays took 1.65 us. A group whose arrays stay
the same (a collider soup, a frame's caches) is made once and kept; one of per-call values is
made at the call. A kernel takes only the groups it reads: an array it does not read still
costs its unboxing at every call. No numba here: this module is read before numba is imported.
"""

from __future__ import annotations

from typing import Any

Array = Any  # numpy arrays; kept loose: a group is a plain tuple of whatever the kernel reads


# ------------------------------------------------------------------ collider contacts


# The frame's triangle colliders joined (``scene.MeshScene``) are four groups, made once per
# soup: a kernel takes those it reads (an array a kernel does not read still costs its
# unboxing at every call, ~0.04 us).


def mesh(vertices: Array, vertices_end: Array, triangles: Array,
         triangle_collider: Array) -> tuple:
    """The soup's mesh: vertices, vertices_end (V, 3) [m] at the frame's start and end,
    triangles (T, 3) int64, triangle_collider (T,) int64 (the row of its collider's
    parameters)."""
    return (vertices, vertices_end, triangles, triangle_collider)


def faces(corners: Array, face_normal: Array) -> tuple:
    """The soup's triangles at the substep's end: corners (T, 9) [m], face_normal (T, 3)
    unit (zero: collapsed)."""
    return (corners, face_normal)


def normals(triangle_edges: Array, vertex_normal: Array, vertex_normal_end: Array,
            edge_normal: Array, edge_normal_end: Array) -> tuple:
    """The soup's angle-weighted pseudo-normals (``mesh_normals``) at the vertices (V, 3) and
    edges (E, 3), at the frame's start and end, and each triangle's edges (T, 3) int64 (the
    edge of (v0, v1), (v1, v2), (v2, v0)) that find them."""
    return (triangle_edges, vertex_normal, vertex_normal_end, edge_normal, edge_normal_end)


def mesh_edges(triangle_edges: Array, edge_vertices: Array, edge_faces: Array) -> tuple:
    """The soup's edges: each triangle's (T, 3) int64, each edge's two vertices and two
    triangles (E, 2) int64 (second -1: not two)."""
    return (triangle_edges, edge_vertices, edge_faces)


def grid(t_lo: Array, t_hi: Array, slack: Array, start: Array, ids: Array, oversize: Array,
         mask: Any) -> tuple:
    """The triangles' broad-phase grid, as ``kernels_broadphase.triangle_grid`` returns it:
    t_lo, t_hi (T, 3) [m] each triangle's swept box, slack (T,) [m], start (cells + 1,),
    ids, oversize int64 (triangle ids), mask (int64 scalar, the hash's)."""
    return (t_lo, t_hi, slack, start, ids, oversize, mask)


def chords(x0: Array, x_end: Array, reach: Array) -> tuple:
    """The particles' collider search: chords x0 -> x_end (N, 3) [m] of their predicted
    paths, grown by reach (N,) [m] (0: never collides)."""
    return (x0, x_end, reach)


def nearest(cache_triangle: Array, cache_point: Array, cache_room: Array, cache_time: Array,
            cache_second: Array, cache_room_second: Array, cache_near: Array) -> tuple:
    """Each particle's nearest-triangle cache (``kernels_collider.collider_contacts`` writes
    it, ``kernels_resting`` reads it), kept from frame to frame: cache_triangle (N,) int64
    (``CACHE_UNKNOWN``: look again, ``CACHE_NOTHING``), cache_point (N, 3) [m] where the
    particle was, cache_room (N,) [m] a lower bound of every other candidate's distance,
    cache_time (N,) the frame fraction then, cache_second (N,) int64 the second nearest
    triangle, cache_room_second (N,) [m] the bound of every candidate but those two,
    cache_near (N,) [m] the bound of every candidate's."""
    return (cache_triangle, cache_point, cache_room, cache_time, cache_second,
            cache_room_second, cache_near)


def lists(spans: Array, candidates: Array, distance: Array) -> tuple:
    """Candidate lists (``scene.CandidateLists``): row i's candidates are
    candidates[spans[i, 0]:spans[i, 1]]; distance scratch of the narrow phase (one entry per
    candidate)."""
    return (spans, candidates, distance)


def selection(moved: Array, only: Array, selective: bool, extra: Array) -> tuple:
    """Which particles a contact pass looks at and what it reports: moved (N,) uint8 set
    where it moves one; with ``selective``, only those flagged in only (N,); extra (N,) [m]
    a move of the substep to count as approach besides the particle's path (the rope's
    re-solve), else 0."""
    return (moved, only, selective, extra)


def substep(s1: float, fraction: float, velocity_scale: float, push: tuple,
            max_motion: float, triangle_motion: Array) -> tuple:
    """The substep a contact pass ends: at frame fraction s1, ``fraction`` = 1 / substeps;
    velocity_scale exp(-damping h) / h [1/s]; push (push_max, residue) [m]
    (``kernels_collider.push_out``); max_motion [m] the largest motion of a collider vertex
    over a substep (0: static) and triangle_motion (T, 3) [m] each triangle centroid's."""
    return (s1, fraction, velocity_scale, push, max_motion, triangle_motion)


def edge_rule(relax: float, keep: float) -> tuple:
    """How the segment-edge contacts act (``kernels_edges.edge_contacts``): a particle moved
    by k contacts takes min(relax, k) / k of their sum (``constants.EDGE_RELAX``); a segment
    is kept ``keep`` times its contact distance from an edge (1 - ``constants.EDGE_SLOP``)."""
    return (relax, keep)


def margins(thickest: float, beyond: float) -> tuple:
    """How far the collider contacts look [m]: the thickest collider's thickness, and how
    far past r + thickness a contact still holds a particle inside a closed mesh or behind
    a shell."""
    return (thickest, beyond)


def edge_scratch(delta: Array, count: Array, touched: Array) -> tuple:
    """Scratch of ``kernels_edges.edge_contacts``, left zero: delta (N, 6) [m, m/s] the
    summed corrections, count (N,) int64 the contacts that moved each particle, touched
    (N,) int64 those particles."""
    return (delta, count, touched)


def visited(room: Array, anchor: Array, since: Array) -> tuple:
    """What ``kernels_edges.edge_contacts`` keeps of each segment it looked at, for
    ``segments_to_visit``: room (M,) [m] how much farther than its contact distance its
    candidates lay, anchor (M, 6) [m] its ends then, since (M,) the frame fraction then."""
    return (room, anchor, since)


# ------------------------------------------------------------------ rope-rope pairs


def query_boxes(query: Array, query_lo: Array, query_hi: Array) -> tuple:
    """The segments a pair search queries (Q,) and their boxes (Q, 3) [m], by query row."""
    return (query, query_lo, query_hi)


def pair_grid(lo: Array, hi: Array, start: Array, ids: Array, oversize: Array, mask: Any,
              cell: float) -> tuple:
    """The segment boxes (M, 3) [m] of the last full search and their grid with cell [m]
    (``workspace.PairGrid``, the same items in the same order)."""
    return (lo, hi, start, ids, oversize, mask, cell)


def extra_boxes(extra: Array, extra_lo: Array, extra_hi: Array) -> tuple:
    """The segments searched again since the last full search (ids) and their new boxes
    (M, 3) [m], by segment id."""
    return (extra, extra_lo, extra_hi)


def extra_grid(x_start: Array, x_ids: Array, x_oversize: Array, x_mask: Any) -> tuple:
    """The grid of the ``extra_boxes`` (``kernels_segments.segment_grid``, ids into extra);
    x_start empty: none, they are tested by brute force."""
    return (x_start, x_ids, x_oversize, x_mask)


def rope_segments(edges: Array, edge_chain: Array, edge_arc: Array, segment_reach: Array,
                  segment_skip: Array) -> tuple:
    """The ropes' segments as the pair search sees them (``layout.plan.ContactTopology``):
    edges (M, 2), edge_chain (M,) the rope of each, edge_arc (M, 2) [m] the arc length of
    its ends, segment_reach, segment_skip (M,) [m]."""
    return (edges, edge_chain, edge_arc, segment_reach, segment_skip)


def pair_motion(position: Array, velocity: Array, acceleration: Array,
                horizon: float) -> tuple:
    """The motion pairs are kept for: position, velocity, acceleration (N, 3) [m], [m/s],
    [m/s^2] over ``horizon`` [s]."""
    return (position, velocity, acceleration, horizon)


def lazy_prediction(lazy: bool, predicted_x0: Array, predicted_v0: Array,
                    predicted_since: Array, stamp: Array, now: float,
                    stamp_mark: int) -> tuple:
    """With ``lazy`` (a partial search), position and velocity of ``pair_motion`` hold the
    prediction only where stamp (N,) int64 == stamp_mark; the other ends are predicted when
    a pair test needs them, at ``now`` [s], from predicted_x0, predicted_v0 (N, 3) [m],
    [m/s] and predicted_since (N,) [s] (``kernels_pairs.predict_ends``)."""
    return (lazy, predicted_x0, predicted_v0, predicted_since, stamp, now, stamp_mark)


# ------------------------------------------------------------------ the lane solve


def blocks(block_particle_offset: Array, block_edge_offset: Array, block_length: Array,
           block_leading: Array | None, block_bending: Array | None) -> tuple:
    """The lane layout's blocks (``layout.topology.LaneLayout``, ``layout.plan.LanePlan``):
    each block's first particle and edge slot in the buffers (B + 1,) uint64, its slots per
    lane (B,) uint64, and its flags (B,) bool (None where no block has the feature: not
    compiled, ``jit.optional_item``)."""
    return (block_particle_offset, block_edge_offset, block_length, block_leading,
            block_bending)


def lane_order(lane_base: Array, lane_particles: Array, block_start: Array) -> tuple:
    """The lane particles in buffer order (``LanePlan.order_base``, ``order_particles``):
    their buffer index of field 0, the particle of each; block b's are entries
    block_start[b]:block_start[b + 1]."""
    return (lane_base, lane_particles, block_start)


def item(declaration: Any, group: tuple, name: str) -> Any:
    """The item ``name`` of ``group``, a tuple made by ``declaration`` (one of the functions
    here): by its declared name, for Python code that needs one item."""
    return group[declaration.__code__.co_varnames.index(name)]


# ------------------------------------------------------------------ rods (``core.rod``)


def rod_ropes(particles: Array, starts: Array, rest: Array) -> tuple:
    """A rod Model's ropes: particles (P,) int64 in walking order, rope r being
    particles[starts[r]:starts[r + 1]] (starts (R + 1,) int64), rest (P,) [m] the rest length
    of the segment from each position to the next."""
    return (particles, starts, rest)


def rod_twist(inertia: Array, twist_k: Array, bend_compliance: Array) -> tuple:
    """Its twist: each segment's inertia (P,) [kg m^2] about its axis, each point's twist
    stiffness twist_k (P,) [N m] (inf: no twist dynamics) and bending compliance (N,)
    [1/(N m)]."""
    return (inertia, twist_k, bend_compliance)


def rod_frames(m1: Array, omega: Array, bend_rest: Array, twist_rest: Array) -> tuple:
    """Its state (``rod.RodState``): each segment's normal m1 (N, 3) and twist rate omega
    (N,) [rad/s], each point's rest bend (N, 3) and rest twist (N,) [rad]."""
    return (m1, omega, bend_rest, twist_rest)


DECLARED = (mesh, faces, normals, mesh_edges, grid, chords, nearest, lists, selection, substep,
            margins, edge_scratch, edge_rule, visited, query_boxes, pair_grid, extra_boxes,
            extra_grid, rope_segments, pair_motion, lazy_prediction, blocks, lane_order,
            rod_ropes, rod_twist, rod_frames)
"""Every group: a kernel parameter with one of these names is that group (the test)."""
