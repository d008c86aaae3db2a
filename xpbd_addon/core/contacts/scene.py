"""The colliders of a frame as the contacts see them: all triangle colliders joined into one
soup (``MeshScene``, kept across frames while they do not move, with its broad-phase grid)
and the plane table. ``colliders.ColliderContacts`` uses them each frame.
"""

from __future__ import annotations

import math

import numpy as np

from .. import groups
from ..collision import Collider, Plane
from .candidates import CandidateLists
from .constants import KEPT_GRIDS, KEPT_TABLES, MARK_LIMIT, MAX_BOX_CELLS
from .kernels_broadphase import collider_candidates, triangle_grid
from .kernels_contact import mesh_normals
from .kernels_geometry import triangle_summaries
from .kernels_region import (
    cells_cover,
    copy_cells,
    corners_at,
    make_rows,
    mark_cells,
    new_rows,
    one_ring,
    region_rows,
    swept_boxes,
)


class MeshScene:
    """All triangle colliders of one frame joined into one soup, with their broad phase.

    Its per-triangle tables (corners, normals, motion, the grid's boxes) have a row for every
    triangle of the soup, by triangle id, but only some rows are made. A static soup makes
    all (it is kept across frames, so once). A moving one puts in its grid only the
    triangles ``rows`` a search can return: those on the cells (``region``) that the first
    search's particle boxes cover, each grown; a later search that reaches beyond them adds
    cells. The other tables it makes only for the triangles ``live`` the searches returned,
    at the frame fraction of the substep under way. A search returns only triangles whose
    box overlaps the particle's (``collider_candidates``), and the contacts read only the
    candidates' rows, so the contacts are the same to the bit as with every row made; a
    rope on a character-sized mesh pays for the part it touches (at 159,000 triangles, all
    rows took ~100 ms a frame), and ropes round it for their own parts."""

    culls = True
    """False: a moving soup makes every row too (the reference the tests compare with)"""
    growth = 1.0
    """How much farther than the searches' boxes the region reaches, in units of twice the
    collider's largest motion over the frame plus the largest reach (a rope pushed by the
    collider searches again about that much farther); 0 in a test grows it at every search
    beyond it"""

    def __init__(self, meshes: list[Collider]) -> None:
        if len(meshes) == 1:  # (the collider's arrays as they are: they are read-only)
            mesh = meshes[0]
            self.vertices, self.vertices_end = mesh.vertices, mesh.vertices_end
            self.triangles = mesh.triangles
            self.triangle_edges = mesh.triangle_edges
            self.triangle_collider = np.zeros(len(mesh.triangles), dtype=np.int64)
            self.edge_vertices = mesh.edge_vertices
            self.edge_faces = mesh.edge_faces
        else:
            vertex_offset = np.cumsum([0] + [len(m.vertices) for m in meshes])
            edge_offset = np.cumsum([0] + [m.edge_count for m in meshes])
            self.vertices = np.concatenate([m.vertices for m in meshes])
            self.vertices_end = np.concatenate([m.vertices_end for m in meshes])
            self.triangles = np.concatenate(
                [m.triangles + o for m, o in zip(meshes, vertex_offset, strict=False)])
            self.triangle_edges = np.concatenate(
                [m.triangle_edges + o for m, o in zip(meshes, edge_offset, strict=False)])
            self.triangle_collider = np.concatenate(
                [np.full(len(m.triangles), i, dtype=np.int64) for i, m in enumerate(meshes)])
            self.edge_vertices = np.concatenate(
                [m.edge_vertices + o for m, o in zip(meshes, vertex_offset, strict=False)])
            triangle_offset = np.cumsum([0] + [len(m.triangles) for m in meshes])
            self.edge_faces = np.concatenate(
                [np.where(m.edge_faces >= 0, m.edge_faces + o, -1)
                 for m, o in zip(meshes, triangle_offset, strict=False)])
        # (E, 2) each edge's vertices and its two triangles (-1: not two), for the segment
        # contacts (``edges.EdgeContacts``)
        self.params = np.array([[m.thickness, m.static_friction, m.dynamic_friction,
                                 1.0 if m.closed else 0.0] for m in meshes])
        self.moving = any(m.moving for m in meshes)
        self.meshes = meshes
        self.grid: tuple | None = None
        """(key, grid) of the last broad phase: ``triangle_grid``'s tables by triangle id"""
        self.cell = 1.0
        """The grid cell [m] of the last search (the segments' searches use it too)"""
        count = len(self.triangles)
        edges = sum(m.edge_count for m in meshes)
        pool = meshes[0].mesh_caches.spare_tables if self.moving else []
        tables = pool.pop() if pool else None
        owners = tuple(m.mesh_caches for m in meshes)
        if tables is None or len(tables.owners) != len(owners) or not all(
                a is b for a, b in zip(tables.owners, owners, strict=True)):
            tables = _Tables(owners, count, len(self.vertices), edges, self.moving)
        self.tables: _Tables | None = tables
        """The per-triangle arrays below (a moving soup's: reused by the next frame's,
        ``release``)"""
        self.vertex_normal = tables.vertex_normal
        """Angle-weighted pseudo-normals at the vertices at the start of the frame, (V, 3)"""
        self.edge_normal = tables.edge_normal
        """The same at the edges, (E, 3)"""
        self.vertex_normal_end = tables.vertex_normal_end
        self.edge_normal_end = tables.edge_normal_end
        self.corners_start = tables.corners_start
        self.corners_end = tables.corners_end
        self.corners = tables.corners
        """Triangle corners at the end of the current substep [m], (T, 9)"""
        self.face_normal = tables.face_normal
        """Their unit normals (zero where collapsed), (T, 3)"""
        self.frame_motion = tables.frame_motion
        """Displacement of each triangle's centroid over the frame [m], (T, 3)"""
        self.triangle_moves = tables.triangle_moves
        """(T,) 1 where a triangle moves within the frame (ropes near it do not sleep)"""
        self.triangle_size = 0.0
        """Typical extent [m] of the triangles made, the smallest sensible grid cell"""
        self.triangle_motion = self.frame_motion
        """Displacement of each triangle's centroid over one substep [m], (T, 3)"""
        self.vertex_motion = max(swept(m)[2] for m in meshes) if self.moving else 0.0
        """Largest displacement of a collider vertex over the frame [m] (of all of them)"""
        self.max_motion = 0.0
        """Largest displacement of a collider point over one substep [m] (0: static)"""
        self.substeps = 0
        """The substeps of the frame (``at``), 0 before the first"""
        self.fraction: float | None = None
        """The frame fraction the corners are at (``at``); None: the end's corners"""
        self.rows = np.zeros(0, dtype=np.int64)
        """The triangles in the broad phase (all, or those on the ``region``'s cells), in
        increasing order"""
        self.region: _Cells | None = None
        """The cells the triangles ``rows`` cover (None: none yet, or every triangle)"""
        self.regions = 0
        """How often the broad phase's triangles were chosen (diagnostics)"""
        self.marker = tables.marker
        self.mark = tables.mark
        """``collider_candidates``' seen-marks (entries below ``mark``), kept between calls"""
        self.live = np.zeros(0, dtype=np.int64)
        """The triangles whose rows of the tables above are made (those the searches
        returned; all of a static soup's)"""
        self.mesh = groups.mesh(self.vertices, self.vertices_end, self.triangles,
                                self.triangle_collider)
        self.faces = groups.faces(self.corners, self.face_normal)
        self.normals = groups.normals(self.triangle_edges, self.vertex_normal,
                                      self.vertex_normal_end, self.edge_normal,
                                      self.edge_normal_end)
        self.mesh_edges = groups.mesh_edges(self.triangle_edges, self.edge_vertices,
                                            self.edge_faces)
        """The arrays above as the kernels take them (``groups``)"""
        if not (self.moving and self.culls):
            self._cover_all()
            self._make(np.arange(count))

    def _cover_all(self) -> None:
        """Put every triangle in the broad phase."""
        self.rows = np.arange(len(self.triangles))
        extent = np.empty(len(self.rows))
        triangle_summaries(self.rows, self.vertices, self.vertices_end, self.triangles, extent,
                           self.frame_motion, self.triangle_moves)
        self._covered(extent)
        self.region = None

    def _covered(self, extent: np.ndarray) -> None:
        self.regions += 1
        self.grid = None
        self.triangle_size = float(np.median(extent)) if len(extent) else 0.0

    def _make(self, candidates: np.ndarray) -> None:
        """Make the tables' rows of the triangles ``candidates`` (ids) not made yet: corners
        at the frame fraction under way, face normals, motion, and the pseudo-normals
        (summed again over the one-ring of all rows made, from zero: the same sums, in the
        same order, as over the whole mesh)."""
        tables = self._table()
        fresh = new_rows(candidates, tables.made)
        if not len(fresh):
            return
        self.live = np.concatenate([self.live, fresh]) if len(self.live) else fresh
        make_rows(fresh, self.vertices, self.vertices_end, self.triangles, self.moving,
                  np.nan if self.fraction is None else self.fraction, self.corners_start,
                  self.corners_end, self.corners, self.face_normal, self.frame_motion,
                  self.triangle_moves, np.empty(len(fresh)))
        if self.triangle_motion is not self.frame_motion:  # (``at`` made it)
            self.triangle_motion[fresh] = self.frame_motion[fresh] / self.substeps
        if len(self.live) == len(self.triangles):
            ring = self.live
        else:
            ring = one_ring(self.live, self.triangles, *tables.adjacency(self.triangles),
                            tables.seen)
        mesh_normals(ring, self.vertices, self.triangles, self.triangle_edges,
                     self.vertex_normal, self.edge_normal)
        if self.moving:
            mesh_normals(ring, self.vertices_end, self.triangles, self.triangle_edges,
                         self.vertex_normal_end, self.edge_normal_end)

    def at(self, fraction: float, substeps: int) -> None:
        """Move the soup to ``fraction`` of the frame (the end of a substep)."""
        if self.moving:
            self.fraction = fraction
            corners_at(self.live, self.corners_start, self.corners_end, fraction, self.corners,
                       self.face_normal)
        if self.triangle_motion is self.frame_motion:
            self.substeps = substeps
            if len(self.live) == len(self.triangles):
                self.triangle_motion = self.frame_motion / substeps
            else:
                self.triangle_motion = self._table().triangle_motion
                self.triangle_motion[self.live] = self.frame_motion[self.live] / substeps
            # vertices, not centroids: a triangle spinning about its centre moves too
            self.max_motion = self.vertex_motion / substeps

    def _table(self) -> _Tables:
        assert self.tables is not None, "used after release()"
        return self.tables

    def release(self) -> None:
        """The frame is over: a moving soup's tables go to the next frame's soup of the same
        mesh (fresh memory for 159,000 triangles' tables cost more in page faults than
        filling the rows near a rope). The soup must not be used after."""
        if self.moving and self.tables is not None:
            self.tables.mark = self.mark
            self.tables.made[self.live] = 0
            pool = self.meshes[0].mesh_caches.spare_tables
            if len(pool) < KEPT_TABLES:
                pool.append(self.tables)
            self.tables = None

    def _reach(self, x: np.ndarray, x_end: np.ndarray, reach: np.ndarray,
               particles: np.ndarray) -> None:
        """Make sure the broad phase holds the triangles the search boxes of ``particles``
        (chords x -> x_end grown by ``reach`` [m], as ``collider_candidates`` makes them)
        can meet: every cell of them is in the region's cells; else add their cells, each box
        grown by the collider's largest motion over the frame and the largest reach (a rope
        pushed by the collider searches again about that much farther), and put the
        triangles on the new cells in the broad phase too."""
        if len(self.rows) == len(self.triangles) and self.region is None and self.regions:
            return  # (every triangle)
        r = reach[particles]
        active = particles[r > 0.0]
        if not len(active):
            return
        region = self.region
        if region is not None and cells_cover(active, x, x_end, reach, region.inverse_cell,
                                              region.keys, region.used, REGION_BOX_CELLS):
            return
        grow = self.growth * (2.0 * self.vertex_motion + float(reach[active].max()))
        if region is None:
            boxes = np.abs(x_end[active] - x[active]).max(axis=1) + 2.0 * (reach[active] + grow)
            region = self.region = _Cells(max(0.5 * float(np.median(boxes)), 1e-4))
        if not region.add(active, x, x_end, reach, grow):
            self._cover_all()  # (a box of too many cells: a very fast particle)
            return
        boxes = [swept(m) for m in self.meshes]
        box_lo, box_hi = ((boxes[0][0], boxes[0][1]) if len(boxes) == 1 else
                          (np.concatenate([b[0] for b in boxes]),
                           np.concatenate([b[1] for b in boxes])))
        self.rows, extent = region_rows(
            box_lo, box_hi, self.vertices, self.triangles, region.inverse_cell, region.keys,
            region.used, region.low, region.high, float(REGION_BOX_CELLS))
        self._covered(extent)

    def find_candidates(self, x: np.ndarray, x_end: np.ndarray, reach: np.ndarray,
                        lists: CandidateLists,
                        only: np.ndarray | None = None) -> None:
        """Candidate triangles into ``lists``, of every particle, or only of the particles
        ``only`` (sorted ids; the others keep theirs), along the chords x -> x_end grown by
        ``reach`` [m]. The new lists of ``only`` are appended (their old ones are left unused
        until the next search for all): a refresh for a few particles costs what they
        cost."""
        particles = np.arange(len(x)) if only is None else only
        if self.moving and self.culls:
            self._reach(x, x_end, reach, particles)
        if only is not None and self.grid is not None:
            cell = self.grid[0][0]
        else:
            active = reach > 0.0
            if active.any():
                # cells no smaller than a triangle: each then sits in a few cells only
                extent = (np.abs(x_end - x).max(axis=1) + 2.0 * reach)[active]
                cell = max(float(np.median(extent)), self.triangle_size, 1e-4)
            else:
                cell = 1.0
        # a power of two, so that the grid of the triangles is reused by the refreshes of the
        # frame, and by later frames while the colliders do not move
        cell = self.cell = 2.0 ** math.ceil(math.log2(cell))
        grid = self._grid(cell)
        if self.mark + len(particles) >= MARK_LIMIT:
            self.marker[:] = -1
            self.mark = 0
        offsets, candidates = collider_candidates(
            particles, groups.chords(x, x_end, reach), self.mesh, self.rows, grid, cell,
            float(MAX_BOX_CELLS), self.marker, self.mark)
        self.mark += len(particles)
        if self.moving and self.culls:
            self._make(candidates)
        lists.take(only, offsets, candidates)
        if len(lists.distance) < len(lists.candidates):
            lists.distance = np.empty(max(len(lists.candidates), 2 * len(lists.distance)))

    def segment_grid(self, lo: np.ndarray, hi: np.ndarray, reach: np.ndarray,
                     segments: np.ndarray) -> tuple:
        """The grid of the last search (``triangle_grid``'s tables), for searches of the
        boxes lo -> hi (M, 3) [m] grown by ``reach`` (M,) [m] of ``segments`` (ids): a moving
        soup first adds the cells they cover to its region (``_reach``)."""
        if self.moving and self.culls:
            self._reach(lo, hi, reach, segments)
        return self._grid(self.cell)

    def _grid(self, cell: float) -> tuple:
        """``kernels_broadphase.triangle_grid`` for this cell size, built once per frame, or
        kept on the first collider across frames while no collider moves (the last
        ``KEPT_GRIDS`` cell sizes asked for: several ropes on one collider ask for
        different cells, and rebuilding a 10k-triangle grid costs 1.8 ms)."""
        key = (cell, tuple(self.meshes))
        if self.grid is not None and self.grid[0] == key:
            return self.grid[1]
        kept = self.meshes[0].caches.triangle_grids
        if not self.moving:
            cached = kept.get(cell)
            if cached is not None and len(cached[0]) == len(self.meshes) and all(
                    a is b for a, b in zip(cached[0], self.meshes, strict=True)):
                self.grid = (key, cached[1])
                return cached[1]
        rows = self.rows
        if len(rows) == len(self.triangles):
            grid = triangle_grid(self.vertices, self.vertices_end, self.triangles,
                                 self.params[self.triangle_collider, 0], cell,
                                 float(MAX_BOX_CELLS))
        else:  # the rows' grid, its tables and ids by triangle id
            low, high, slack, start, ids, oversize, mask = triangle_grid(
                self.vertices, self.vertices_end, self.triangles[rows],
                self.params[self.triangle_collider[rows], 0], cell, float(MAX_BOX_CELLS))
            tables = self._table()
            t_lo, t_hi, t_slack = tables.grid_lo, tables.grid_hi, tables.grid_slack
            t_lo[rows], t_hi[rows], t_slack[rows] = low, high, slack
            grid = groups.grid(t_lo, t_hi, t_slack, start, rows[ids], rows[oversize], mask)
        self.grid = (key, grid)
        if not self.moving:
            kept.pop(cell, None)
            kept[cell] = (tuple(self.meshes), grid)
            while len(kept) > KEPT_GRIDS:
                del kept[next(iter(kept))]
        return grid


REGION_BOX_CELLS = 4096
"""A search box of more region cells than this (a particle moving very fast) makes a moving
soup put all its triangles in the broad phase."""


class _Cells:
    """The cells of a ``MeshScene``'s region: a set of (i, j, k) of a cubic grid
    (``kernels_region``), open addressing; the cell is half the median grown search box of
    the first search (a box then covers about 3 x 3 x 3 cells: the region hugs the ropes)."""

    __slots__ = ("inverse_cell", "keys", "used", "count", "low", "high")

    def __init__(self, cell: float) -> None:
        self.inverse_cell = 1.0 / cell
        """1 / the cell's edge [1/m]"""
        self.keys = np.zeros((1024, 3), dtype=np.int64)
        self.used = np.zeros(1024, dtype=np.uint8)
        self.count = 0
        self.low = np.zeros(3, dtype=np.int64)
        """The smallest cell index on each axis"""
        self.high = np.full(3, -1, dtype=np.int64)
        """The largest (below ``low``: no cell yet)"""

    def add(self, particles: np.ndarray, x: np.ndarray, x_end: np.ndarray,
            reach: np.ndarray, grow: float) -> bool:
        """Add the cells of the particles' search boxes grown by ``grow`` [m]; False if a box
        covers more than ``REGION_BOX_CELLS``."""
        while True:
            count = mark_cells(particles, x, x_end, reach, grow, self.inverse_cell, self.keys,
                               self.used, self.count, float(REGION_BOX_CELLS))
            if count == -2:
                return False
            if count >= 0:
                break
            keys = np.zeros((4 * len(self.keys), 3), dtype=np.int64)
            used = np.zeros(4 * len(self.keys), dtype=np.uint8)
            copy_cells(self.keys, self.used, keys, used)
            # (with the cells the failed call added before it stopped: counted again)
            self.keys, self.used, self.count = keys, used, int(np.count_nonzero(used))
        self.count = count
        cells = self.keys[self.used.astype(bool)]
        self.low, self.high = cells.min(axis=0), cells.max(axis=0)
        return True


class _Tables:
    """The per-triangle arrays of a ``MeshScene`` (rows by triangle id, made where the soup
    says), ``collider_candidates``' marks, and what the rows' one-rings need."""

    __slots__ = ("owners", "vertex_normal", "edge_normal", "vertex_normal_end",
                 "edge_normal_end", "corners_start", "corners_end", "corners", "face_normal",
                 "frame_motion", "triangle_moves", "triangle_motion", "grid_lo", "grid_hi",
                 "grid_slack", "marker", "mark", "made", "seen", "vertex_triangles")

    def __init__(self, owners: tuple, count: int, vertices: int, edges: int,
                 moving: bool) -> None:
        self.owners = owners
        """The meshes' ``Collider.mesh_caches``, in the soup's order (the tables fit only
        these meshes)"""
        self.vertex_normal = np.zeros((vertices, 3))
        self.edge_normal = np.zeros((edges, 3))
        self.vertex_normal_end = np.zeros((vertices, 3)) if moving else self.vertex_normal
        self.edge_normal_end = np.zeros((edges, 3)) if moving else self.edge_normal
        self.corners_start = np.empty((count, 9))
        self.corners_end = np.empty((count, 9)) if moving else self.corners_start
        self.corners = np.empty((count, 9)) if moving else self.corners_start
        self.face_normal = np.empty((count, 3))
        self.frame_motion = np.empty((count, 3))
        self.triangle_moves = np.empty(count, dtype=np.uint8)
        self.triangle_motion = np.empty((count, 3))
        self.grid_lo = np.empty((count, 3))
        self.grid_hi = np.empty((count, 3))
        self.grid_slack = np.empty(count)
        self.marker = np.full(count, -1, dtype=np.int64)
        self.mark = 0
        self.made = np.zeros(count, dtype=np.uint8)
        """(T,) 1 for the rows made this frame (cleared by ``MeshScene.release``)"""
        self.seen = np.zeros(count, dtype=np.uint8)
        """(T,) scratch of ``one_ring``, left zero"""
        self.vertex_triangles: tuple[np.ndarray, np.ndarray] | None = None

    def adjacency(self, triangles: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each vertex's triangles, CSR (start (V + 1,), triangle ids), made once."""
        if self.vertex_triangles is None:
            flat = triangles.reshape(-1)
            counts = np.bincount(flat, minlength=len(self.vertex_normal))
            start = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
            self.vertex_triangles = (start, np.argsort(flat, kind="stable") // 3)
        return self.vertex_triangles


def swept(mesh: Collider) -> tuple[np.ndarray, np.ndarray, float]:
    """A moving collider's triangle boxes over its frame grown by its thickness (lo, hi
    (T, 3) [m], ``kernels_region.swept_boxes``) and its largest vertex motion [m]: made once
    for every rope's contact scene of the frame, in arrays kept on the mesh's topology (fresh
    memory for 159,000 triangles costs more in page faults than the boxes). They belong to
    the last collider that asked, and serve any equal to it (the same positions and
    thickness); an older frame's collider asking again has them made again."""
    kept = mesh.mesh_caches.swept
    if kept and (kept[0] is mesh or (  # (each rope's run makes its own frame of the mesh)
            kept[0].thickness == mesh.thickness
            and np.array_equal(kept[0].vertices, mesh.vertices)
            and np.array_equal(kept[0].vertices_end, mesh.vertices_end))):
        return kept[1], kept[2], kept[3]
    count = len(mesh.triangles)
    if kept and len(kept[1]) == count:
        lo, hi = kept[1], kept[2]
    else:
        lo, hi = np.empty((count, 3)), np.empty((count, 3))
    swept_boxes(mesh.vertices, mesh.vertices_end, mesh.triangles, mesh.thickness, lo, hi)
    motion = mesh.vertices_end - mesh.vertices
    largest = float(np.sqrt(np.einsum("ij,ij->i", motion, motion).max(initial=0.0)))
    kept[:] = [mesh, lo, hi, largest]
    return lo, hi, largest


def mesh_scene(meshes: list[Collider]) -> MeshScene:
    """The ``MeshScene`` of these colliders, kept on the first one while none of them moves:
    a static scene passed again every frame (the same Collider objects) pays for joining the
    soup, its normals and its grid once (4.7 ms per frame for 10k triangles otherwise)."""
    static = not any(m.moving for m in meshes)
    if static:
        cached = meshes[0].caches.mesh_scene
        if cached is not None and len(cached.meshes) == len(meshes) and all(
                a is b for a, b in zip(cached.meshes, meshes, strict=True)):
            cached.triangle_motion = cached.frame_motion  # ``at`` divides it by the substeps
            return cached
    scene = MeshScene(meshes)
    if static:
        meshes[0].caches.mesh_scene = scene
    return scene


def plane_table(planes: list[Plane]) -> np.ndarray:
    """(P, 9) rows point, normal, thickness, mu_s, mu_k for ``kernels_contact.plane_contacts``."""
    return np.array([[*p.point, *p.normal, p.thickness, p.static_friction, p.dynamic_friction]
                     for p in planes]).reshape(-1, 9)
