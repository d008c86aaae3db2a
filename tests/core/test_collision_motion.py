"""Moving colliders push the rope without tunnelling; ropes in a heap never pass through
each other."""

import numpy as np
import pytest

from xpbd_addon.core import Model, step
from xpbd_addon.core.collision import Collider, Plane
from xpbd_addon.core.contacts import SELF_SKIP

from .colliders import box, icosphere, rope, segment_distance

DT = 1.0 / 24.0


def tunnelled(before, after, low, high):
    """Particles whose straight path relative to the box (its position removed) runs through
    the box's core ``low``..``high`` (a slab test per particle)."""
    start, end = before, after
    direction = end - start
    with np.errstate(divide="ignore", invalid="ignore"):
        t0 = (low - start) / direction
        t1 = (high - start) / direction
    near = np.where(np.isnan(t0), -np.inf, np.minimum(t0, t1))
    far = np.where(np.isnan(t1), np.inf, np.maximum(t0, t1))
    # an axis the path does not move along must lie inside the slab the whole time
    still = direction == 0.0
    inside_still = (start > low) & (start < high)
    near = np.where(still, np.where(inside_still, -np.inf, np.inf), near)
    far = np.where(still, np.where(inside_still, np.inf, -np.inf), far)
    entry = np.clip(near.max(axis=1), 0.0, 1.0)
    leave = np.clip(far.min(axis=1), 0.0, 1.0)
    return entry < leave


HANDS = [(0.05, 0.05, 0.05), (0.01, 0.06, 0.05)]
"""A fist-sized cube and a flat hand 2 cm thick (moving along its thin axis)."""


def hanging_rope(radius=0.005):
    """A 1 m rope of 1 cm thickness hanging from a pin at (0, 0, 1)."""
    return rope(50, 1.0, (0.0, 0.0, 1.0), (0.0, 0.0, -1.0), radius=radius, pinned=[0],
                damping=0.5)


@pytest.mark.parametrize("substeps", [10, 20])
@pytest.mark.parametrize("half", HANDS, ids=["fist", "flat hand"])
def test_collider_swung_at_5_m_s_through_a_rope_does_not_tunnel(substeps, half):
    """A hand-sized box at 5 m/s through a hanging rope, one ``step`` per frame (24 fps): the
    box moves 2 cm per substep at S = 10, more than the flat hand is thick. After every frame
    no particle is inside the box, and in the end the rope has been dragged along (a box
    that went through would leave it hanging at x = 0). Where the rope ends relative to the
    box says nothing: it wraps around the edges and slides off them, legitimately behind the
    box; the next test follows every particle's path instead."""
    radius = 0.005
    model = hanging_rope(radius)
    state = model.state()
    vertices, triangles = box((0.0, 0.0, 0.0), half)
    center = np.array([-0.3, 0.0, 0.5])
    speed = np.array([5.0, 0.0, 0.0])
    for frame in range(4):  # until the box is 0.53 m past the rope's line
        start, end = center + frame * DT * speed, center + (frame + 1) * DT * speed
        collider = Collider(vertices + start, triangles, vertices_end=vertices + end)
        step(model, state, DT, substeps, colliders=[collider])
        after = state.x - end
        inside = np.all(np.abs(after) < np.asarray(half) - 0.1 * radius, axis=1)
        assert not inside.any(), frame
    assert np.all(np.isfinite(state.x))
    assert state.x[:, 0].max() > 0.3  # dragged along, not cut through


@pytest.mark.parametrize("half", HANDS, ids=["fist", "flat hand"])
def test_no_particle_path_runs_through_a_collider_at_5_m_s(half):
    """The same swing seen substep by substep (each substep its own ``step``, so every
    particle's path relative to the box is known): no path runs through the box's core."""
    substeps = 10
    model = hanging_rope()
    state = model.state()
    vertices, triangles = box((0.0, 0.0, 0.0), half)
    center = np.array([-0.3, 0.0, 0.5])
    speed = np.array([5.0, 0.0, 0.0])
    h = DT / substeps
    core = np.asarray(half) * 0.5
    for k in range(6 * substeps):
        start, end = center + k * h * speed, center + (k + 1) * h * speed
        collider = Collider(vertices + start, triangles, vertices_end=vertices + end)
        before = state.x - start
        step(model, state, h, 1, colliders=[collider])
        assert not tunnelled(before, state.x - end, -core, core).any(), k


def test_open_sheet_moving_through_a_rope_does_not_tunnel():
    """A single quad (an open mesh, a two-sided shell of no thickness) swept at 5 m/s
    through the hanging rope: 2 cm per substep, four times the rope's radius. Seen
    substep by substep, no particle's path relative to the sheet crosses its middle; stepped
    by frames, the rope is dragged along."""
    quad = np.array([[0.0, -0.1, 0.4], [0.0, 0.1, 0.4], [0.0, 0.1, 0.6], [0.0, -0.1, 0.6]])
    triangles = [[0, 1, 2], [0, 2, 3]]
    substeps = 10
    h = DT / substeps
    model = hanging_rope()
    state = model.state()
    for k in range(3 * substeps):
        start = quad + [-0.2 + 5.0 * h * k, 0.0, 0.0]
        end = start + [5.0 * h, 0.0, 0.0]
        sheet = Collider(start, triangles, vertices_end=end)
        assert not sheet.closed and sheet.problems
        before = state.x - start[0]
        step(model, state, h, 1, colliders=[sheet])
        after = state.x - end[0]
        crossed = (before[:, 0] > 0.0) & (after[:, 0] < 0.0)
        share = before[:, 0] / np.where(crossed, before[:, 0] - after[:, 0], 1.0)
        at = before + share[:, None] * (after - before)
        middle = (np.abs(at[:, 1]) < 0.08) & (np.abs(at[:, 2]) < 0.08)
        assert not (crossed & middle).any(), k
    frames = hanging_rope()
    state = frames.state()
    for frame in range(3):
        start = quad + [-0.2 + 5.0 * DT * frame, 0.0, 0.0]
        step(frames, state, DT, substeps,
             colliders=[Collider(start, triangles, vertices_end=start + [5.0 * DT, 0, 0])])
    assert state.x[:, 0].max() > 0.3


def heap_rope(points=150, radius=0.01, **options):
    z = np.linspace(0.05, 1.5, points)
    x = np.stack([0.02 * np.sin(20 * z), 0.02 * np.cos(13 * z), z], axis=1)
    edges = np.stack([np.arange(points - 1), np.arange(1, points)], axis=1)
    return Model(x, edges, np.full(points, 100.0), 1e-8, radius=radius, **options)


def closest_pairs(model, x, radius):
    """Distances of all segment pairs that may touch (not neighbours along the rope: farther
    apart along it than ``contacts.SELF_SKIP`` 2 r), for the pairs whose midpoints are close
    (the rest cannot be within 2 r)."""
    e = model.edge_index
    arc = np.concatenate([[0.0], np.cumsum(model.edge_rest_length)])
    i, j = np.triu_indices(len(e), k=1)
    keep = arc[j] - arc[i + 1] > SELF_SKIP * 2 * radius
    i, j = i[keep], j[keep]
    mid = 0.5 * (x[e[:, 0]] + x[e[:, 1]])
    near = np.linalg.norm(mid[i] - mid[j], axis=1) < model.edge_rest_length.max() + 2 * radius
    i, j = i[near], j[near]
    if not len(i):
        return np.array([np.inf])
    return segment_distance(x[e[i, 0]], x[e[i, 1]], x[e[j, 0]], x[e[j, 1]])


@pytest.mark.parametrize("substeps", [10, 20])
def test_rope_falling_in_a_heap_never_passes_through_itself(substeps):
    radius = 0.01
    model = heap_rope(radius=radius, self_collision=True)
    state = model.state()
    closest = np.inf
    for _ in range(60):
        step(model, state, DT, substeps, colliders=[Plane()])
        closest = min(closest, closest_pairs(model, state.x, radius).min())
    assert closest >= 0.5 * 2 * radius
    assert state.x[:, 2].min() >= 0.9 * radius
    assert state.x[:, 2].max() > 2.5 * radius  # rope lies on rope


def test_without_self_collision_the_heap_interpenetrates():
    """The check above has teeth: without self-collision the same rope lies flat through
    itself."""
    radius = 0.01
    model = heap_rope(radius=radius, self_collision=False)
    state = model.state()
    for _ in range(60):
        step(model, state, DT, 10, colliders=[Plane()])
    assert closest_pairs(model, state.x, radius).min() < 0.5 * 2 * radius


def test_a_rope_dropped_across_another_stays_on_top():
    radius = 0.01
    lower = rope(30, 1.0, (-0.5, 0.0, radius), radius=radius)
    positions = np.concatenate([lower.particle_rest_x,
                                lower.particle_rest_x[:, [1, 0, 2]] + [0.0, 0.0, 0.2]])
    edges = np.concatenate([lower.edge_index, lower.edge_index + 30])
    model = Model(positions, edges, np.full(60, 30.0), 1e-8, radius=radius,
                  self_collision=True)
    state = model.state()
    for _ in range(48):
        step(model, state, DT, 10, colliders=[Plane()])
    crossing = state.x[30:][np.abs(state.x[30:, 1]) < 0.02]
    np.testing.assert_allclose(crossing[:, 2], 3 * radius, atol=0.2 * radius)


@pytest.mark.parametrize("substeps", [10, 20])
@pytest.mark.parametrize("friction", [0.0, 0.05, 0.5, 1.0])
def test_a_rope_dragged_by_a_fast_box_with_friction_keeps_its_length(substeps, friction):
    """A box 10 cm thick, 20 cm tall, moving at 5 m/s through a 1 m rope pinned at its top:
    friction may hold the rope on the box, but never harder than the rope's stretch
    constraints (once, at mu 0.5, the rope was dragged along at 4x its length). Every frame:
    total stretch under 5 % at 20 substeps and 15 % at 10 (the segments wrap the box's
    edges with their radius, and the contacts have the last word in a substep: in the frame
    the rope slips off the box's lower edge it stretches by 9-13 % at 10 substeps, 3 % at
    20; when only its points collided, 1.5-4.6 % and 3.2 %), no point inside the box, and
    the box did carry the rope."""
    radius = 0.01
    model = rope(50, 1.0, (0.0, 0.0, 1.0), (0.0, 0.0, -1.0), radius=radius, pinned=[0],
                 damping=0.5)
    state = model.state()
    half = np.array([0.05, 0.5, 0.1])
    vertices, triangles = box((0.0, 0.0, 0.0), half)
    center = np.array([-0.5, 0.0, 0.5])
    speed = np.array([5.0, 0.0, 0.0])
    rest = model.edge_rest_length.sum()
    carried = 0.0
    for frame in range(24):
        start, end = center + frame * DT * speed, center + (frame + 1) * DT * speed
        collider = Collider(vertices + start, triangles, vertices_end=vertices + end,
                            static_friction=friction, dynamic_friction=friction)
        step(model, state, DT, substeps, colliders=[collider])
        length = np.linalg.norm(np.diff(state.x, axis=0), axis=1).sum()
        assert length < (1.05 if substeps >= 20 else 1.15) * rest, (frame, length)
        q = np.abs(state.x - end) - half
        distance = np.linalg.norm(np.maximum(q, 0.0), axis=1) + np.minimum(q.max(axis=1), 0.0)
        assert distance.min() > 0.9 * radius, frame
        carried = max(carried, state.x[:, 0].max())
    assert np.all(np.isfinite(state.x))
    assert carried > 0.5


def _swung_sphere_run(culls, monkeypatch, growth=1.0, frames=40, sweep=None):
    """A 1 m rope pinned above an icosphere of 5,120 triangles (r = 0.5 m) that turns about z
    and swings sideways under it, faster and faster (up to 7 m/s), so that the rope is
    pushed off its predicted path and searches again; a loose rope falls across it. ``sweep``
    (speed [m/frame], height [m]): the sphere instead passes through at that speed. With
    ``culls`` the moving soup makes only the rows near the ropes (``MeshScene.rows``).
    Returns the states of every frame and the scenes made."""
    from xpbd_addon.core.contacts import colliders as contact_colliders
    from xpbd_addon.core.contacts import scene as contact_scene

    monkeypatch.setattr(contact_scene.MeshScene, "culls", culls)
    monkeypatch.setattr(contact_scene.MeshScene, "growth", growth)
    scenes = []
    monkeypatch.setattr(contact_colliders, "mesh_scene",
                        lambda meshes: scenes.append(contact_scene.mesh_scene(meshes))
                        or scenes[-1])
    hanging = np.linspace(0.0, 1.0, 40)[:, None] * (0.0, 0.0, -1.0)
    lying = np.linspace(-0.5, 0.5, 40)[:, None] * (0.0, 1.0, 0.0)
    x = np.concatenate([hanging + (0.0, 0.0, 1.6), lying + (0.25, 0.0, 1.0)])
    edges = np.array([(i, i + 1) for i in range(79) if i != 39])
    w = np.full(80, 40.0)
    w[0] = 0.0
    model = Model(x, edges, w, 1e-8, radius=0.01)
    state = model.state()
    vertices, triangles = icosphere(4, 0.5)
    sphere = Collider(vertices, triangles)

    def placed(frame):
        angle = 0.05 * frame
        c, s = np.cos(angle), np.sin(angle)
        turned = vertices @ np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]).T
        if sweep is not None:
            return turned + (-1.5 + sweep[0] * frame, 0.05, sweep[1])
        return turned + (0.4 * np.sin(0.01 * frame * frame), 0.05, 0.1)

    states = []
    for frame in range(frames):
        step(model, state, DT, 10, colliders=[sphere.moved(placed(frame), placed(frame + 1))])
        states.append((state.x.copy(), state.v.copy()))
    return states, scenes


def test_a_moving_collider_makes_only_the_rows_near_the_ropes_with_the_same_bits(monkeypatch):
    """A moving collider's broad phase holds the triangles the ropes' searches can reach,
    grown when a rope pushed off its path searches farther, and its contact tables are made
    for the triangles the searches returned: the ropes move to the bit as with every row
    made, and the one-pass triangle summaries (extent, centroid motion,
    moving flags) are numpy's to the bit."""
    from xpbd_addon.core.contacts.kernels_geometry import triangle_summaries

    culled, scenes = _swung_sphere_run(True, monkeypatch)
    tight, tight_scenes = _swung_sphere_run(True, monkeypatch, growth=0.0)
    whole, whole_scenes = _swung_sphere_run(False, monkeypatch)
    for frame, (a, b, c) in enumerate(zip(culled, tight, whole, strict=True)):
        for name, one, other in (("x", a[0], c[0]), ("v", a[1], c[1]), ("x", b[0], c[0]),
                                 ("v", b[1], c[1])):
            np.testing.assert_array_equal(one, other, err_msg=f"{name}, frame {frame}")
    triangles = len(scenes[0].triangles)
    assert all(len(s.rows) == triangles for s in whole_scenes)
    # while the ropes are on top (later the loose rope slides off and falls past it)
    assert max(len(s.rows) for s in scenes[:4]) < triangles // 8
    # the tables made only for the triangles the searches returned, a few of those
    assert sum(len(s.live) for s in scenes) < sum(len(s.rows) for s in scenes) // 3
    assert all(len(s.live) == triangles for s in whole_scenes)
    # regions grown within a frame, at the substep under way
    assert sum(s.regions > 1 for s in tight_scenes) >= 3
    touched = sum(np.linalg.norm(x[:40, :2], axis=1).max() > 0.02 for x, _ in culled)
    assert touched > 10  # the sphere pushed the rope about
    # swept through the hanging rope at 7.2 m/s: the rope's later searches in a frame return
    # triangles it then touches (their rows made then, at the substep under way)
    swept, _ = _swung_sphere_run(True, monkeypatch, sweep=(0.3, 0.4))
    swept_whole, _ = _swung_sphere_run(False, monkeypatch, sweep=(0.3, 0.4))
    for frame, (a, b) in enumerate(zip(swept, swept_whole, strict=True)):
        np.testing.assert_array_equal(a[0], b[0], err_msg=f"swept x, frame {frame}")
    assert np.abs(swept[-1][0][:40, 0]).max() > 0.3  # dragged along
    rng = np.random.default_rng(3)
    start = rng.normal(size=(50, 3))
    end = start + rng.normal(size=(50, 3)) * 0.01
    end[::3] = start[::3]
    tris = rng.integers(0, 50, size=(80, 3))
    extent, motion, moves = np.empty(80), np.empty((80, 3)), np.empty(80, np.uint8)
    triangle_summaries(np.arange(80), start, end, tris, extent, motion, moves)
    np.testing.assert_array_equal(extent, np.ptp(start[tris], axis=1).max(axis=1))
    np.testing.assert_array_equal(motion, (end - start)[tris].mean(axis=1))
    np.testing.assert_array_equal(moves, np.any(end[tris] != start[tris], axis=(1, 2)))
    assert 0 < moves.sum() < 80


def test_a_search_beyond_a_moving_colliders_region_grows_it(monkeypatch):
    """The broad phase of a moving collider holds the triangles near the first search's
    particles; a later search for a particle moved to the far side grows it, and every
    particle's candidates are those of the whole mesh, first and after."""
    from xpbd_addon.core.contacts.candidates import CandidateLists
    from xpbd_addon.core.contacts.scene import MeshScene

    vertices, triangles = icosphere(4, 0.5)
    sphere = Collider(vertices, triangles).moved(vertices, vertices + (0.01, 0.0, 0.0))
    monkeypatch.setattr(MeshScene, "culls", False)
    whole = MeshScene([sphere])
    whole.culls = False  # (read again by its searches)
    monkeypatch.setattr(MeshScene, "culls", True)
    culled = MeshScene([sphere])
    x = np.array([[0.0, 0.0, 0.53], [0.05, 0.0, 0.52], [0.1, 0.0, 0.52]])
    reach = np.full(3, 0.04)
    found = CandidateLists(3), CandidateLists(3)

    def candidates(lists, particle):
        first, last = lists.spans[particle]
        return lists.candidates[first:last].tolist()

    def compare():
        for particle in range(3):
            culled_list, whole_list = (candidates(lists, particle) for lists in found)
            assert culled_list == whole_list and whole_list, particle

    for scene, lists in zip((culled, whole), found, strict=True):
        scene.find_candidates(x, x, reach, lists)
    compare()
    assert len(culled.rows) < len(triangles) // 20 and culled.regions == 1
    x[0] = (0.0, 0.0, -0.53)  # the far side
    for scene, lists in zip((culled, whole), found, strict=True):
        scene.find_candidates(x, x, reach, lists, only=np.array([0]))
    compare()
    assert culled.regions == 2 and len(culled.rows) < len(triangles) // 10


def test_a_moving_colliders_region_keeps_every_cell_as_its_set_grows():
    """The region's cell set starts small and grows (rehashed) while cells are added: every
    cell of every box added is in it afterwards, and it never fills past half."""
    from xpbd_addon.core.contacts.kernels_region import cells_cover
    from xpbd_addon.core.contacts.scene import _Cells

    cells = _Cells(0.01)
    cells.keys, cells.used = np.zeros((16, 3), dtype=np.int64), np.zeros(16, dtype=np.uint8)
    x = np.random.default_rng(1).uniform(0.0, 1.0, (50, 3))
    reach = np.full(50, 0.02)
    assert cells.add(np.arange(50), x, x, reach, 0.0)
    assert cells.count == np.count_nonzero(cells.used) and 2 * cells.count <= len(cells.keys)
    assert cells_cover(np.arange(50), x, x, reach, cells.inverse_cell, cells.keys, cells.used,
                       4096.0)
    far = x + 2.0
    assert not cells_cover(np.arange(50), far, far, reach, cells.inverse_cell, cells.keys,
                           cells.used, 4096.0)


def test_a_moving_colliders_swept_boxes_are_made_once_a_frame_and_never_stale(monkeypatch):
    """The triangles' boxes over a frame, which every rope's region reads, are made once for
    all colliders equal to one another (each rope's run makes its own frame of the mesh),
    and made again for another frame, also for an older one asking again."""
    from xpbd_addon.core.contacts import scene as contact_scene
    from xpbd_addon.core.contacts.kernels_region import swept_boxes
    from xpbd_addon.core.contacts.scene import swept

    made_boxes = []
    monkeypatch.setattr(contact_scene, "swept_boxes",
                        lambda *args: made_boxes.append(1) or swept_boxes(*args))

    vertices, triangles = icosphere(2, 0.5)
    sphere = Collider(vertices, triangles, thickness=0.01)
    path = [vertices + (0.02 * k, 0.0, 0.0) for k in range(3)]

    def fresh(collider):
        lo, hi = np.empty((len(triangles), 3)), np.empty((len(triangles), 3))
        swept_boxes(collider.vertices, collider.vertices_end, collider.triangles, 0.01, lo, hi)
        return lo, hi

    first, again = sphere.moved(path[0], path[1]), sphere.moved(path[0], path[1])
    second = sphere.moved(path[1], path[2])
    lo, hi, motion = swept(first)
    assert swept(again)[0] is lo and motion == pytest.approx(0.02)
    assert len(made_boxes) == 1  # shared
    for collider in (second, first):  # another frame, then the older one again
        made = swept(collider)
        for kept, expected in zip(made[:2], fresh(collider), strict=True):
            np.testing.assert_array_equal(kept, expected)
