"""Collider contacts of one frame: triangle meshes (joined in ``scene.MeshScene``) and
planes, their broad phase (candidate triangles along each particle's predicted path) and
the projection (``kernels_resting`` for particles resting on a face, ``kernels_collider``
for the rest, ``kernels_contact.plane_contacts`` for planes).

Collider candidates are found along the predicted path over the rest of the frame plus a
margin (``Model.contact_margin``), so a falling rope needs no bigger search than a resting
one; ``refresh`` searches again for a particle that strayed farther than the margin from
its path's chord. A frame that starts where the last one ended, among the same static
colliders, goes on with its candidates (``ColliderCarry`` in the state's workspace).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import groups
from ..collision import Collider, Plane
from ..workspace import ColliderCaches, ColliderCarry, Workspace
from .candidates import CandidateLists
from .constants import DEPTH_REACH, EDGE_PASSES, MIN_MARGIN, PARTIAL_SEARCH
from .edges import EdgeContacts
from .kernels_broadphase import chord_rows, left_chord, restart_chords
from .kernels_contact import (
    CACHE_UNKNOWN,
    GEOMETRY_ROWS,
    collider_contacts,
    fill_resting,
    plane_contacts,
    resting_contacts,
    resting_static,
    resting_two_faces,
)
from .kernels_segments import flagged, predicted_end
from .prediction import MotionPrediction
from .scene import MeshScene, mesh_scene, plane_table


class ColliderContacts:
    """The meshes and planes of one frame (fields in ``__init__``)."""

    __slots__ = ("model", "motion", "scene", "plane_rows", "frictionless",
                 "frictionless_planes", "collider_margin", "beyond", "no_extra",
                 "strayed", "verified_end", "resumed", "refreshes", "lists", "triangle_chord",
                 "triangle_reach", "nearest", "cache_triangle", "geometry",
                 "rest", "thickest", "margins", "edges")

    def __init__(self, model: Any, workspace: Workspace, motion: MotionPrediction,
                 x: np.ndarray, meshes: list[Collider], planes: list[Plane]) -> None:
        count = model.particle_count
        self.model, self.motion = model, motion
        self.scene: MeshScene | None = mesh_scene(meshes) if meshes else None
        """The frame's triangle colliders joined, or None"""
        self.plane_rows = plane_table(planes)
        """(P, 9) the planes (``scene.plane_table``)"""
        self.frictionless: np.ndarray | None = None
        """The meshes' parameters without friction (``project_again``), made on first use"""
        self.frictionless_planes: np.ndarray | None = None
        """The plane rows without friction, likewise"""
        self.collider_margin = max(model.contact_margin, MIN_MARGIN)
        """The broad phase's margin [m]"""
        self.beyond = DEPTH_REACH * self.collider_margin
        """How deep [m] past r + thickness a contact still holds a particle inside a closed
        mesh or behind a shell (the search reaches that much farther than the margin)"""
        self.no_extra = np.zeros(count)
        """(N,) [m] zeros: no approach besides the substep's"""
        self.strayed = np.zeros(count, dtype=np.uint8)
        """(N,) flags of the particles that left their collider chord"""
        self.verified_end: np.ndarray | None = None
        """The last frame's end state, once found equal to this frame's start"""
        self.refreshes = 0
        """How often the collider broad phase was redone within the frame (diagnostics)"""
        carried = self._carried(x, workspace) if self.scene is not None else None
        self.resumed = carried is not None
        """Whether the frame went on with the last one's collider candidates (diagnostics)"""
        size = count if self.scene is not None else 0  # (no meshes: nothing reads them)
        if carried is None:
            carried = ColliderCaches(
                CandidateLists(size), (np.empty((size, 3)), np.empty((size, 3))), np.empty(size),
                groups.nearest(
                    cache_triangle=np.full(size, CACHE_UNKNOWN, dtype=np.int64),
                    cache_point=np.zeros((size, 3)), cache_room=np.zeros(size),
                    cache_time=np.zeros(size),
                    cache_second=np.full(size, CACHE_UNKNOWN, dtype=np.int64),
                    cache_room_second=np.zeros(size), cache_near=np.zeros(size)),
                np.zeros((GEOMETRY_ROWS, size)),
                CandidateLists(model.edge_count if self.scene is not None else 0))
        self.lists = carried.lists
        """Candidate triangles of each particle"""
        self.triangle_chord = carried.triangle_chord
        """((N, 3), (N, 3)) [m] the chord each particle's candidates cover"""
        self.triangle_reach = carried.triangle_reach
        """(N,) [m] how far around it"""
        self.nearest = carried.nearest
        """What ``kernels_resting`` needs to skip the search (``groups.nearest``)"""
        self.cache_triangle = groups.item(groups.nearest, self.nearest, "cache_triangle")
        """(N,) int64 its nearest triangles (``restart_chords`` marks them unknown)"""
        self.geometry = carried.geometry
        """Each particle's cached triangle, for ``kernels_resting.resting_static``"""
        self.rest = np.zeros(size, dtype=np.uint8)
        """(N,) flags of the particles resting on a face this substep"""
        self.thickest = (float(self.scene.params[:, 0].max()) if self.scene is not None
                         else 0.0)
        """The thickest collider's thickness [m]"""
        self.margins = groups.margins(self.thickest, self.beyond)
        """How far the contacts look (``groups.margins``)"""
        self.edges = (EdgeContacts(model, self.scene, carried.segment_edges)
                      if self.scene is not None and model.edge_count else None)
        """The rope segments' contacts with the meshes' edges, or None"""
        if self.resumed:
            self._resume_triangles(x)
        elif self.scene is not None:
            self._find_triangles(x, 0.0)

    def _carried(self, x: np.ndarray, workspace: Workspace) -> ColliderCaches | None:
        """The collider candidates the last frame of this state ended with, if this frame
        starts where it ended, among the same static colliders (``carry``); else None.
        Taken once: the frame changes them."""
        carry, workspace.collider_carry = workspace.collider_carry, None
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

    def carry(self, end: np.ndarray) -> ColliderCarry | None:
        """What the next frame goes on with if it starts at ``end`` (N, 3) [m] among the same
        static colliders (None for moving ones)."""
        if self.scene is None or self.scene.moving:
            if self.scene is not None:
                self.scene.release()  # (its tables, for the next frame's)
            return None
        model = self.model
        return ColliderCarry(
            self.scene, (self.collider_margin, self.beyond), end,
            model.particle_radius.copy(), model.particle_inv_mass.copy(),
            ColliderCaches(self.lists, self.triangle_chord, self.triangle_reach, self.nearest,
                           self.geometry, self.lists_of_edges()))

    def _resume_triangles(self, x: np.ndarray) -> None:
        """Go on with the last frame's collider candidates: search again for the particles
        farther than the margin from their chord now, or whose path over this frame leaves
        it (its end), unless so many that one search for all is cheaper."""
        w = self.model.particle_inv_mass
        motion = self.motion
        x0, chord_end = self.triangle_chord
        end = np.empty_like(x)
        predicted_end(x, motion.velocity, motion.acceleration, motion.dt, end)
        away = np.zeros(len(x), dtype=np.uint8)
        left_chord(x, x0, chord_end, w, self.collider_margin, self.strayed)
        left_chord(end, x0, chord_end, w, self.collider_margin, away)
        np.bitwise_or(away, self.strayed, out=away)
        only = flagged(away)
        if len(only) * PARTIAL_SEARCH >= len(x):
            self._find_triangles(x, 0.0)
        elif len(only):
            self._find_triangles(x, 0.0, only)

    def _find_triangles(self, x: np.ndarray, elapsed: float, only: np.ndarray | None = None,
                        x_from: np.ndarray | None = None) -> None:
        """Collider candidates from the state x at ``elapsed`` [s] into the frame, along the
        predicted path over the rest of it (a parabola: its chord, grown by its bulge), for
        every particle or only for the particles ``only`` (sorted ids; then only their rows
        are computed, so that a refresh for a few costs what they cost). With ``x_from``
        (N, 3) [m], where the particles began the substep under way, its path is covered
        too: the chord is searched from there, grown by how far x lies off it."""
        model, motion = self.model, self.motion
        rows = motion.every_particle if only is None else only
        if only is None:
            self.triangle_chord = (np.empty_like(x), np.empty_like(x))
            self.triangle_reach = np.empty(len(x))
        x0, chord_end = self.triangle_chord
        chord_rows(rows, x, x if x_from is None else x_from, x_from is not None,
                   motion.velocity, motion.acceleration, motion.dt - elapsed,
                   model.particle_radius, self.collider_margin, self.beyond, motion.free,
                   x0, chord_end, self.triangle_reach)
        assert self.scene is not None
        self.scene.find_candidates(x0, chord_end, self.triangle_reach, self.lists, only)
        if self.edges is not None:  # (from the chords as searched, before the restart)
            self.edges.search(x0, chord_end, self.triangle_reach, only)
        # the chord the stray test follows starts where the particle is now; new
        # candidates: the nearest triangle must be searched for again
        restart_chords(rows, x, x0, self.cache_triangle, CACHE_UNKNOWN)

    def refresh(self, x: np.ndarray, v: np.ndarray, now: float) -> None:
        """The broad-phase check at ``now`` [s] into the frame: a search again for the
        particles that strayed farther than the margin from their chord (for all of them if
        so many strayed that one search is cheaper), covering the substep's path too."""
        if self.scene is None:
            return
        x0, x_end = self.triangle_chord
        strayed = left_chord(x, x0, x_end, self.model.particle_inv_mass, self.collider_margin,
                             self.strayed)
        if strayed:
            self.refreshes += 1
            # the candidate lists are per particle: only the strayed ones need new lists,
            # unless so many strayed that one search for all is cheaper
            only = flagged(self.strayed) if strayed * PARTIAL_SEARCH < len(x) else None
            self.motion.measure(x, v, only)
            self._find_triangles(x, now, only, self.motion.x_from)

    @property
    def live(self) -> bool:
        """Some mesh has candidates to test"""
        return self.scene is not None and (self.lists.live > 0 or (
            self.edges is not None and self.edges.lists.live > 0))

    def lists_of_edges(self) -> CandidateLists:
        """The segments' candidate edges (empty lists without them)"""
        return self.edges.lists if self.edges is not None else CandidateLists(0)

    def meshes(self, x: np.ndarray, v: np.ndarray, s1: float, moved: np.ndarray,
               only: np.ndarray, selective: bool, extra: np.ndarray, *,
               frictionless: bool = False, dense: bool = False) -> None:
        """The mesh contacts at frame fraction s1: the particles' (``points``), then the
        segments' against the edges between them (``edges.EdgeContacts``) and, for the
        particles those moved, the particles' again: no point is left inside a collider
        where its segment cannot fit (a rope caught round a box thinner than its segments:
        with the edges last, a 2 cm hand at 5 m/s had a point pushed into it). ``moved``,
        ``only``, ``selective``, ``extra`` as ``kernels_collider.collider_contacts``;
        ``frictionless``: without friction (the pass after the rope's re-solve); ``dense``:
        most particles are chosen."""
        scene = self.scene
        assert scene is not None
        params = scene.params
        if frictionless:
            if self.frictionless is None:
                self.frictionless = _without_friction(scene.params, slice(1, 3))
            params = self.frictionless
        motion = self.motion
        substep = groups.substep(s1, 1.0 / motion.substeps, motion.velocity_scale, motion.push,
                                 scene.max_motion, scene.triangle_motion)
        self.points(x, v, substep, groups.selection(moved, only, selective, extra), params,
                    dense)
        edges = self.edges
        if edges is None:
            return
        acted = 0
        for index in range(EDGE_PASSES):
            # after the first, only the segments with a particle the last pass moved: the
            # others are where the last pass found them, with no contact acting
            acting = edges.project(x, v, substep, params, groups.selection(
                edges.moved, only if index == 0 else edges.moved, selective or index > 0,
                extra))
            if not acting:
                break  # (nothing moved: the next pass would look at no segment)
            acted += acting
        if acted:
            np.bitwise_or(moved, edges.moved, out=moved)
            self.points(x, v, substep, groups.selection(moved, edges.moved, True, extra),
                        params, False)
            edges.moved[:] = 0

    def points(self, x: np.ndarray, v: np.ndarray, substep: tuple, selection: tuple,
               params: np.ndarray, dense: bool) -> None:
        """The particles' contacts with the meshes (``kernels_collider``, ``kernels_resting``):
        those resting on a face first, then the general narrow phase for the rest, at the end
        of the ``substep`` (``groups.substep``) for the particles of ``selection``
        (``groups.selection``); ``params`` the meshes' table (with or without friction);
        ``dense`` as ``meshes``."""
        model, scene = self.model, self.scene
        assert scene is not None
        w, radius = model.particle_inv_mass, model.particle_radius
        moved, only, selective, extra = selection
        static = scene.max_motion == 0.0
        # the vectorised kernel computes every particle, the scalar one skips those not chosen
        if static and (dense or not selective):
            left = resting_static(
                x.reshape(-1), v.reshape(-1), len(x), radius, substep, self.margins,
                1.0 if params is scene.params else 0.0, selection, self.nearest,
                self.geometry, self.rest)
        else:
            left = resting_contacts(x, v, w, radius, substep, scene.mesh, scene.faces, params,
                                    selection, self.margins, self.nearest, self.rest)
        if left:  # those resting on two faces
            left = resting_two_faces(x, v, radius, substep, scene.mesh, scene.faces,
                                     scene.normals, params, selection, self.margins,
                                     self.nearest, self.rest)
        if left:
            collider_contacts(x, v, w, radius, substep, scene.mesh, scene.faces, scene.normals,
                              params,
                              self.lists.group(),
                              groups.selection(moved, self.rest, True, extra), self.margins,
                              self.nearest)
            if static:  # the triangles it cached, for the next ``resting_static``
                fill_resting(self.rest, self.cache_triangle, scene.corners, scene.face_normal,
                             scene.triangle_collider, scene.params, radius, self.geometry)

    def planes(self, x: np.ndarray, v: np.ndarray, moved: np.ndarray, only: np.ndarray,
               selective: bool, extra: np.ndarray, *, frictionless: bool = False) -> None:
        """The plane contacts (``kernels_contact.plane_contacts``), arguments as ``meshes``."""
        if not len(self.plane_rows):
            return
        rows = self.plane_rows
        if frictionless:
            if self.frictionless_planes is None:
                self.frictionless_planes = _without_friction(rows, slice(7, 9))
            rows = self.frictionless_planes
        model = self.model
        plane_contacts(x, v, model.particle_inv_mass, model.particle_radius,
                       self.motion.velocity_scale, rows, self.motion.push, moved, only,
                       selective, extra)


def _without_friction(table: np.ndarray, friction: slice) -> np.ndarray:
    """A copy of a collider table with its friction columns (mu_s, mu_k) zero."""
    copy = table.copy()
    copy[:, friction] = 0.0
    return copy
