"""Collisions in real Blender: ropes rest on the ground plane, on a plane and on a box with
Blender's Collision physics, start inside a box and come out gently, sleep at rest, slide off
a sphere without friction, never pass through themselves in a heap, and bake as they play.
The colliders are read from the evaluated depsgraph every frame (moving colliders:
``test_moving_colliders.py``)."""

from __future__ import annotations

import bpy
import numpy as np
import pytest

from xpbd_addon.blender.frame import sim

from . import ropes

R = 0.01  # rope radius [m]


def _rope(scene, *, n=40, length=1.0, height=0.3, substeps=10, name="rope", x0=0.0):
    """A free horizontal poly curve (no pins) at ``height`` [m] along x."""
    obj = ropes.curve_rope(scene, "POLY", n=n, length=length, name=name)
    obj.location = (x0, 0.0, height)
    s = obj.xpbd
    s.pin_first = False
    s.radius = R
    s.substeps = substeps
    s.damping = 1.0
    return obj


def _collider(obj, thickness=0.0, friction=5.0):
    """Collision physics on ``obj`` (friction: Blender's 0-80 scale, default 5 = mu 0.05)."""
    obj.modifiers.new("Collision", "COLLISION")
    obj.collision.thickness_outer = thickness
    obj.collision.cloth_friction = friction
    return obj


def _box(scene, location, size, name="box"):
    bpy.ops.mesh.primitive_cube_add(size=1.0, location=location)
    obj = bpy.context.object
    obj.name = name
    obj.scale = size
    return obj


def _box_distance(points, center, half):
    """Signed distance [m] of ``points`` to an axis-aligned box (negative inside)."""
    q = np.abs(points - np.asarray(center)) - np.asarray(half)
    outside = np.linalg.norm(np.maximum(q, 0.0), axis=1)
    return outside + np.minimum(q.max(axis=1), 0.0)


@pytest.mark.parametrize("substeps", [10, 40])
def test_rope_rests_on_the_ground_plane(scene, substeps):
    obj = _rope(scene, substeps=substeps)
    obj.xpbd.use_ground = True
    obj.xpbd.ground_height = -0.1
    ropes.play(scene, 1, 36)
    z = ropes.world_points(obj)[:, 2]
    assert z.min() > -0.1 + 0.9 * R  # no point deeper than 10 % of the radius
    assert z.max() < -0.1 + 1.5 * R  # and it came down: it lies on the ground


@pytest.mark.parametrize("substeps", [10, 40])
def test_rope_rests_on_a_plane_collider(scene, substeps):
    bpy.ops.mesh.primitive_plane_add(size=4.0, location=(0.5, 0.0, 0.0))
    _collider(bpy.context.object, thickness=0.005)
    obj = _rope(scene, substeps=substeps)
    ropes.play(scene, 1, 36)
    z = ropes.world_points(obj)[:, 2]
    assert z.min() > R + 0.005 - 0.1 * R
    assert z.max() < R + 0.005 + 0.5 * R
    assert sim.status(obj) is None


@pytest.mark.parametrize("substeps", [10, 40])
def test_rope_drapes_over_a_box_collider(scene, substeps):
    """A 2 m rope dropped across a 1 m box: it lies on the top and hangs down both sides."""
    center, half = (0.0, 0.0, 0.5), (0.5, 0.5, 0.5)
    _collider(_box(scene, center, (1.0, 1.0, 1.0)), thickness=0.0)
    obj = _rope(scene, n=60, length=2.0, height=1.2, substeps=substeps, x0=-1.0)
    worst = np.inf
    for frame in range(1, 49):
        scene.frame_set(frame)
        points = ropes.world_points(obj)
        worst = min(worst, _box_distance(points, center, half).min())
    assert worst > 0.9 * R  # never deeper than 10 % of the radius, at any frame
    top = points[np.abs(points[:, 0]) < 0.4]
    assert np.all(np.abs(top[:, 2] - (1.0 + R)) < 0.5 * R)  # resting on the top face
    assert points[:, 2].min() < 0.8  # and both ends hang down the sides
    assert points[0, 2] < 0.8 and points[-1, 2] < 0.8


def test_playback_keeps_a_static_colliders_candidates_from_frame_to_frame(scene):
    """Played in order, each frame goes on with the last one's collider candidates: the
    add-on hands the core the same, unmoved Collider objects, and each frame starts where
    the last one ended (the core keeps them only then; that this changes no bit is tested
    in tests/core/test_collision_carry.py)."""
    from xpbd_addon.core import contacts

    _collider(_box(scene, (0.0, 0.0, 0.5), (1.0, 1.0, 1.0)), thickness=0.0)
    _rope(scene, n=60, length=2.0, height=1.2, x0=-1.0)
    scene.frame_set(1)  # the solver's preparation steps a copy of the rope: not counted
    resumed = []
    original = contacts.FrameContacts.__init__

    def spy(self, *args, **kwargs):
        original(self, *args, **kwargs)
        resumed.append(self.resumed)

    contacts.FrameContacts.__init__ = spy
    try:
        ropes.play(scene, 1, 30)
    finally:
        contacts.FrameContacts.__init__ = original
    assert len(resumed) == 29 and sum(resumed) >= 25, resumed


def test_many_rope_objects_read_the_scene_colliders_once_a_frame(scene, monkeypatch):
    """Five rope objects dropped on one box: each frame the scene's objects are looked at
    and the collider's mesh is read once for all of them (it was once per rope: quadratic in
    the objects), and every rope still lands on the box."""
    from xpbd_addon.blender.read import collision_objects as colliders

    _collider(_box(scene, (0.0, 0.0, 0.5), (3.0, 3.0, 1.0)), thickness=0.0)
    objects = [_rope(scene, n=20, length=1.0, height=1.2, x0=-0.5, name=f"rope{k}")
               for k in range(5)]
    for k, obj in enumerate(objects):
        obj.location.y = 0.2 * k - 0.4
    scene.frame_set(1)
    reads: list[str] = []
    read_mesh = colliders._read_mesh

    def counted(obj):
        reads.append(obj.original.name)
        return read_mesh(obj)

    monkeypatch.setattr(colliders, "_read_mesh", counted)
    ropes.play(scene, 2, 24)
    assert reads == ["box"] * 23, reads
    for obj in objects:
        z = ropes.world_points(obj)[:, 2]
        assert z.min() > 1.0 + 0.9 * R and z.max() < 1.0 + 1.5 * R, obj.name
        assert sim.status(obj) is None


def test_a_rope_starting_just_inside_a_box_is_pushed_out_gently(scene):
    """Two thirds of the rope start 5 mm deep in the top of a box: they come out at about the
    core's push-out speed (1 m/s), without flying off (no gravity: only the push moves it)."""
    scene.use_gravity = False
    center, half = (0.0, 0.0, 0.0), (0.2, 0.2, 0.2)
    _collider(_box(scene, center, (0.4, 0.4, 0.4)), friction=0.0)
    obj = _rope(scene, n=30, length=0.6, height=0.195, x0=-0.2)
    ropes.play(scene, 1, 24)
    entry = sim.REGISTRY[obj.session_uid]
    assert sim.status(obj) is None
    assert max(np.abs(f.v).max() for f in entry.cache.values()) < 2.0  # [m/s]
    assert _box_distance(ropes.world_points(obj), center, half).min() > 0.9 * R


@pytest.mark.xfail(reason="core: points deeper inside a closed collider than radius + margin / 2 "
                          "hold no contact (no inside test beyond the broad phase's reach): "
                          "they fall inside the box to its bottom face, are pushed out through it "
                          "onto the ground and end trapped under the box (16 points, 1 R deep; "
                          "gentle, at most 2.2 m/s, 3.7 % stretch)",
                   strict=False)
def test_a_rope_starting_deep_inside_a_box_is_pushed_out_gently(scene):
    center, half = (0.5, 0.0, 0.0), (0.3, 0.3, 0.3)
    _collider(_box(scene, center, (0.6, 0.6, 0.6)))
    obj = _rope(scene, n=30, length=1.0, height=0.0)  # the middle third inside the box
    obj.xpbd.use_ground = True
    obj.xpbd.ground_height = -0.3
    ropes.play(scene, 1, 48)
    entry = sim.REGISTRY[obj.session_uid]
    assert sim.status(obj) is None
    assert max(np.abs(f.v).max() for f in entry.cache.values()) < 3.0  # [m/s]: no explosion
    assert _box_distance(ropes.world_points(obj), center, half).min() > 0.9 * R


def test_a_bad_collider_is_reported_and_skipped(scene):
    bpy.ops.mesh.primitive_plane_add(size=4.0, location=(0.5, 0.0, -0.5))
    broken = _collider(bpy.context.object)
    broken.name = "broken"
    co = np.zeros(3 * len(broken.data.vertices), dtype=np.float32)
    broken.data.vertices.foreach_get("co", co)
    co[0] = np.nan
    broken.data.vertices.foreach_set("co", co)
    broken.data.update()
    edges = bpy.data.meshes.new("edges")  # no faces: nothing to collide with, ignored
    edges.from_pydata([(0, 0, -0.2), (1, 0, -0.2)], [(0, 1)], [])
    _collider(ropes.link(scene, "edges", edges))
    obj = _rope(scene)
    obj.xpbd.use_ground = True
    obj.xpbd.ground_height = -1.0
    ropes.play(scene, 1, 36)
    assert sim.status(obj) is None
    problems = sim.REGISTRY[obj.session_uid].collider_problems
    assert any("'broken' skipped" in p and "vertices" in p for p in problems), problems
    z = ropes.world_points(obj)[:, 2]
    assert np.all(np.isfinite(z)) and z.min() > -1.0 + 0.9 * R  # fell through to the ground


def test_collision_switches_and_disabled_modifiers(scene):
    bpy.ops.mesh.primitive_plane_add(size=4.0, location=(0.5, 0.0, 0.0))
    floor = _collider(bpy.context.object)
    off = _rope(scene, name="off")
    off.xpbd.use_collision = False
    on = _rope(scene, name="on")
    ropes.play(scene, 1, 24)
    assert ropes.world_points(off)[:, 2].min() < -0.5
    assert ropes.world_points(on)[:, 2].min() > 0.9 * R
    floor.modifiers["Collision"].show_viewport = False  # like Blender's cloth: not a collider
    bpy.ops.xpbd.reset(all_objects=True)
    ropes.play(scene, 1, 24)
    assert ropes.world_points(on)[:, 2].min() < -0.5


def test_a_rope_at_rest_on_a_collider_sleeps_and_looks_as_it_would_awake(scene):
    """Playback in Blender: once the rope lies still on the box its frames sleep (the core
    skips it after each frame's first substep) and every frame shows what the rope shows
    with sleeping off (Sleep Below 0)."""
    from xpbd_addon.core import contacts

    _collider(_box(scene, (0.0, 0.0, -0.5), (2.0, 2.0, 1.0)), friction=40.0)
    obj = _rope(scene, height=0.05)
    asleep = []
    original = contacts.FrameContacts.__init__

    def spy(self, *args, **kwargs):
        original(self, *args, **kwargs)
        asleep.append(self)

    shapes = {}
    contacts.FrameContacts.__init__ = spy
    try:
        for speed in (1e-5, 0.0):
            obj.xpbd.sleep_speed = speed
            shapes[speed] = []
            for frame in range(1, 31):
                scene.frame_set(frame)
                shapes[speed].append(ropes.world_points(obj))
            if speed:
                slept = [frame.sleeping for frame in asleep]
    finally:
        contacts.FrameContacts.__init__ = original
    assert slept[-1] == 1 and sum(slept) >= 10, slept
    np.testing.assert_allclose(shapes[1e-5], shapes[0.0], rtol=0, atol=1e-6)
    assert np.abs(shapes[0.0][-1][:, 2] - R).max() < 0.1 * R  # lying on the box


@pytest.mark.parametrize("field, value", [("radius", 0.02), ("use_ground", True),
                                          ("use_self_collision", True),
                                          ("use_collision", False), ("sleep_speed", 0.0)])
def test_changing_a_collision_setting_invalidates_the_cache(scene, field, value):
    obj = _rope(scene)
    ropes.play(scene, 1, 10)
    entry = sim.REGISTRY[obj.session_uid]
    setattr(obj.xpbd, field, value)
    scene.frame_set(10)
    assert sim.REGISTRY[obj.session_uid] is not entry


def test_added_rope_collides_at_its_rendered_thickness(scene):
    assert bpy.ops.xpbd.rope_add(thickness=0.02) == {"FINISHED"}
    obj = bpy.context.active_object
    assert obj.xpbd.radius == pytest.approx(obj.data.bevel_depth) == pytest.approx(0.02)


@pytest.mark.parametrize("friction, stays", [(0.0, False), (80.0, True)])
def test_a_rope_over_a_sphere_slides_off_without_friction_and_stays_with_it(scene, friction,
                                                                             stays):
    bpy.ops.mesh.primitive_uv_sphere_add(radius=0.3, segments=32, ring_count=16)
    _collider(bpy.context.object, friction=friction)  # 80 = mu 0.8
    obj = _rope(scene, n=50, length=1.2, height=0.33, x0=-0.45)  # off-centre: it could slide
    obj.xpbd.damping = 0.5
    ropes.play(scene, 1, 36)
    top = ropes.world_points(obj)[:, 2].max()
    assert (top > 0.3) == stays, top


def _segment_distances(p, i, j):
    """Closest distance [m] between segments (p[i], p[i+1]) and (p[j], p[j+1])."""
    a0, d1, b0, d2 = p[i], p[i + 1] - p[i], p[j], p[j + 1] - p[j]
    r = a0 - b0
    a, e = (d1 * d1).sum(1), (d2 * d2).sum(1)
    b, c, f = (d1 * d2).sum(1), (d1 * r).sum(1), (d2 * r).sum(1)
    with np.errstate(divide="ignore", invalid="ignore"):
        den = a * e - b * b
        s = np.where(den > 1e-20, np.clip((b * f - c * e) / den, 0.0, 1.0), 0.0)
        t = (b * s + f) / e
        s = np.where(t < 0.0, np.clip(-c / a, 0.0, 1.0),
                     np.where(t > 1.0, np.clip((b - c) / a, 0.0, 1.0), s))
    t = np.clip(t, 0.0, 1.0)
    return np.linalg.norm(a0 + d1 * s[:, None] - b0 - d2 * t[:, None], axis=1)


def test_a_rope_falling_in_a_heap_never_passes_through_itself(scene):
    n = 100
    obj = ropes.curve_rope(scene, "POLY", n=n, length=2.0, axis=2, name="heap")
    obj.location = (0.0, 0.0, 2.1)
    s = obj.xpbd
    s.pin_first = False
    s.radius = R
    s.use_ground = True
    s.use_self_collision = True
    s.damping = 0.5
    i, j = np.triu_indices(n - 1, k=3)  # segments not neighbours along the rope
    worst = np.inf
    for frame in range(1, 73):
        scene.frame_set(frame)
        worst = min(worst, _segment_distances(ropes.world_points(obj), i, j).min())
    assert worst > 0.1 * R  # checked pairwise every frame: no segment crossed another
    assert ropes.world_points(obj)[:, 2].max() < 0.2  # it did fall in a heap


def test_a_bake_collides_as_playback_does(scene):
    """Collision state is part of the bake: the baked keyframes are the live contact result
    (a rope draped over a box that moves up through it)."""
    scene.frame_start, scene.frame_end = 1, 24
    box = _collider(_box(scene, (0.0, 0.0, 0.0), (0.4, 0.4, 0.4)))
    fcurve = box.driver_add("location", 2)
    fcurve.driver.type = "SCRIPTED"
    fcurve.driver.expression = "(frame - 1) * 0.02"
    obj = _rope(scene, n=30, length=1.0, height=0.25, x0=-0.5)
    live = {}
    for frame in range(1, 25):
        scene.frame_set(frame)
        live[frame] = ropes.local_points(obj).copy()
    assert live[24][:, 2].max() > 0.2  # carried up by the box: contacts did act
    scene.frame_set(1)
    assert bpy.ops.xpbd.bake(target="KEYS") == {"FINISHED"}
    for frame in (24, 7, 16):
        scene.frame_set(frame)
        np.testing.assert_allclose(ropes.local_points(obj), live[frame], atol=1e-5)


def test_collision_panel_draws_the_settings_and_collider_notes(scene):
    from xpbd_addon import panels

    from .test_stiffness import _Layout

    bpy.ops.mesh.primitive_plane_add(size=4.0)  # an open mesh: noted in the panel
    _collider(bpy.context.object)
    obj = _rope(scene)
    ropes.play(scene, 1, 2)
    assert any("open mesh" in note for note in sim.REGISTRY[obj.session_uid].collider_problems)
    log = []
    labels = []
    layout = _Layout(log)
    object.__setattr__(layout, "label", lambda text="", **k: labels.append(text))
    bpy.context.view_layer.objects.active = obj
    panels.XPBD_PT_rope_collision.draw(type("P", (), {"layout": layout})(), bpy.context)
    assert {"radius", "use_collision", "use_ground", "ground_height", "ground_friction",
            "use_self_collision", "self_friction", "sleep_speed"} <= set(log)
    assert any("open mesh" in text for text in labels)


def test_a_colliders_triangles_are_read_again_only_when_its_mesh_changes(scene, monkeypatch):
    """Reading a mesh's loop triangles through Python costs about 140 ns a triangle (23 ms
    for a 159k-triangle character), so they are kept while the mesh's faces and vertex
    positions are the ones they were read from: a collider at rest or moved by its
    transform is not read again, an edited or re-shaped one is, and the kept triangles are
    always the ones Blender has (made from its quads here: ``test_tessellation``)."""
    from xpbd_addon.blender.read import collision_objects as colliders

    box = _collider(_box(scene, (0.0, 0.0, 0.5), (1.0, 1.0, 1.0)))
    _rope(scene, n=20, length=1.0, height=1.2, x0=-0.5)
    scene.frame_set(1)
    reads: list[int] = []  # the triangles made from the mesh's quads, or read
    made_triangles, read_triangles = colliders._made_triangles, colliders._read_triangles

    def made(mesh, local, corners, faces):
        reads.append(len(faces))
        return made_triangles(mesh, local, corners, faces)

    monkeypatch.setattr(colliders, "_made_triangles", made)
    monkeypatch.setattr(colliders, "_read_triangles", lambda mesh, count: reads.append(
        -count) or read_triangles(mesh, count))

    def used_triangles():
        evaluated = box.evaluated_get(bpy.context.evaluated_depsgraph_get()).data
        fresh = np.empty(3 * len(evaluated.loop_triangles), dtype=np.int32)
        evaluated.loop_triangles.foreach_get("vertices", fresh)
        (found,) = colliders.scene_meshes(bpy.context.evaluated_depsgraph_get())
        np.testing.assert_array_equal(found.triangles, fresh.reshape(-1, 3))

    ropes.play(scene, 2, 6)
    box.location.x += 0.05  # moved by its transform: the same mesh
    ropes.play(scene, 7, 8)
    assert reads == [], reads
    used_triangles()
    box.data.vertices[0].co.z += 0.01  # the mesh itself changed
    ropes.play(scene, 9, 10)
    assert reads == [12], reads
    box.data.polygons[0].select = True
    bpy.context.view_layer.objects.active = box
    bpy.ops.object.mode_set(mode="EDIT")
    bpy.ops.mesh.select_all(action="DESELECT")
    bpy.ops.object.mode_set(mode="OBJECT")
    box.data.polygons[0].select = True
    bpy.ops.object.mode_set(mode="EDIT")
    bpy.ops.mesh.delete(type="FACE")
    bpy.ops.object.mode_set(mode="OBJECT")
    ropes.play(scene, 11, 12)
    assert reads == [12, 10], reads  # a face fewer: read again
    used_triangles()
