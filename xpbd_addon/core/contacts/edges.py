"""Contacts between the rope's segments and the colliders' edges, one frame
(``kernels_edges``: the capsule's part that the particle contacts cannot see, a pole or an
edge passing between two particles; ``kernels_edge_search``: their candidates).

Their candidates follow the particles' collider searches (``colliders.ColliderContacts``):
a segment's box holds both its particles' search chords grown by their reach, so its list
holds every edge it can meet while both particles stay within their margin; a search again
for some particles searches again for the segments they end. The lists are kept from frame
to frame with the particles' (``ColliderCaches.segment_edges``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import groups
from .candidates import CandidateLists
from .constants import EDGE_RELAX, EDGE_SLOP, MARK_LIMIT, MAX_BOX_CELLS
from .kernels_edge_search import segment_edges, segments_of
from .kernels_edges import edge_contacts, segments_to_visit, wake_near_moving_edges
from .scene import MeshScene


class EdgeContacts:
    """The segment-edge contacts of one frame (fields in ``__init__``)."""

    __slots__ = ("model", "scene", "lists", "marker", "mark", "seen", "candidates_seen",
                 "scratch", "rule", "moved", "visit", "room", "visited")

    def __init__(self, model: Any, scene: MeshScene, lists: CandidateLists) -> None:
        self.model, self.scene = model, scene
        self.lists = lists
        """Candidate edges of each rope segment (spans (M, 2))"""
        self.marker = np.full(len(scene.edge_vertices), -1, dtype=np.int64)
        self.mark = 0
        """``segment_edges``' seen-marks (entries below ``mark``)"""
        self.seen = np.zeros(model.edge_count, dtype=np.uint8)
        """(M,) scratch of ``segments_of``"""
        self.candidates_seen: np.ndarray | None = None
        """The candidates the sleeping ropes were last woken for"""
        count = model.particle_count
        self.scratch = groups.edge_scratch(np.zeros((count, 6)), np.zeros(count, dtype=np.int64),
                                           np.zeros(count, dtype=np.int64))
        """Scratch of ``edge_contacts`` (its corrections summed per particle)"""
        self.rule = groups.edge_rule(EDGE_RELAX, 1.0 - EDGE_SLOP)
        """How the contacts act (``groups.edge_rule``)"""
        self.visit = np.zeros(model.edge_count, dtype=np.int64)
        """(M,) scratch: the segments a pass looks at"""
        self.room = np.full(model.edge_count, -1.0)
        """(M,) [m] how much farther than their contact distance each segment's candidates
        lay when last looked at (-1: look)"""
        self.visited = groups.visited(self.room, np.zeros((model.edge_count, 6)),
                                      np.zeros(model.edge_count))
        """``room`` with where each segment's ends were then (M, 6) [m] and the frame
        fraction then (M,) (``groups.visited``)"""
        self.moved = np.zeros(count, dtype=np.uint8)
        """(N,) flags of the particles the last passes moved (``ColliderContacts.meshes``
        clears them)"""

    def search(self, x0: np.ndarray, x_end: np.ndarray, reach: np.ndarray,
               only: np.ndarray | None) -> None:
        """Candidate edges of every segment, or of those ending at a particle of ``only``
        (sorted ids), from the particles' search chords x0 -> x_end (N, 3) [m] grown by
        ``reach`` (N,) [m], as the particles' search just made them."""
        model, scene, lists = self.model, self.scene, self.lists
        if only is None:
            segments = np.arange(model.edge_count)
        else:
            topology = model.contact_topology
            segments = segments_of(only, topology.segment_start, topology.segments, self.seen)
        if not len(segments):
            return
        edges = model.edge_index
        if scene.moving and scene.culls:  # the region must hold the segments' boxes
            a, b = edges[:, 0], edges[:, 1]
            lo = np.minimum(np.minimum(x0[a], x_end[a]), np.minimum(x0[b], x_end[b]))
            hi = np.maximum(np.maximum(x0[a], x_end[a]), np.maximum(x0[b], x_end[b]))
            grid = scene.segment_grid(lo, hi, np.maximum(reach[a], reach[b]), segments)
        else:
            grid = scene.segment_grid(x0, x_end, reach, segments)
        if self.mark + len(segments) >= MARK_LIMIT:
            self.marker[:] = -1
            self.mark = 0
        offsets, found = segment_edges(
            segments, edges, groups.chords(x0, x_end, reach), scene.mesh, scene.mesh_edges,
            scene.params, scene.rows, grid, scene.cell, float(MAX_BOX_CELLS), self.marker,
            self.mark)
        self.mark += len(segments)
        self.room[segments] = -1.0  # (new candidates: look again)
        lists.take(None if only is None else segments, offsets, found)

    def project(self, x: np.ndarray, v: np.ndarray, substep: tuple, params: np.ndarray,
                selection: tuple) -> int:
        """The contacts at the end of the ``substep`` (``groups.substep``) for the particles
        of ``selection`` (``groups.selection``) (``kernels_edges.edge_contacts``; arguments
        as ``ColliderContacts.meshes``). Returns how many acted."""
        if not self.lists.live:
            return 0
        model, scene = self.model, self.scene
        s1, fraction, velocity_scale, push, max_motion, triangle_motion = substep
        moved, only, selective, extra = selection
        room, anchor, since = self.visited
        count = segments_to_visit(model.edge_index, self.lists.spans, model.particle_inv_mass,
                                  only, selective, x, v, 1.0 / velocity_scale, room, anchor,
                                  since, s1 + fraction, scene.vertex_motion, self.visit)
        if not count:
            return 0
        return edge_contacts(
            x, v, model.particle_inv_mass, model.particle_radius, substep, model.edge_index,
            self.visit[:count], self.lists.group(),
            scene.mesh, scene.mesh_edges, params, scene.moving, selection, self.scratch,
            self.rule, self.visited)

    def wake(self, particle_rope: np.ndarray, awake_ropes: np.ndarray) -> int:
        """Wake the sleeping ropes with a moving candidate edge (after a search for every
        segment since the last call); returns how many woke."""
        lists, scene = self.lists, self.scene
        if not scene.moving or lists.candidates is self.candidates_seen:
            return 0
        self.candidates_seen = lists.candidates
        return int(wake_near_moving_edges(self.model.edge_index, lists.spans, lists.candidates,
                                          scene.edge_vertices, scene.vertices,
                                          scene.vertices_end, particle_rope, awake_ropes))
