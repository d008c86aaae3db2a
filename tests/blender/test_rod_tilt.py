"""A curve's tilt in and out of a rod (write/curve_tilt.py): a rod at rest shows its
modelled tilt, a rod turned at its pinned end shows the turn at its free end, and a plain
rope's tilt is never written."""

from __future__ import annotations

import bpy
import numpy as np
import pytest

from xpbd_addon.blender.frame import sim
from xpbd_addon.blender.read import rest
from xpbd_addon.blender.write import curve_tilt

from . import ropes
from .test_rods import _arc, _curve, _turned_by_parent, _twisting


def _tilt(obj):
    spline = obj.data.splines[0]
    out = np.empty(len(spline.points), dtype=np.float32)
    spline.points.foreach_get("tilt", out)
    return out.astype(np.float64)


def _set_tilt(obj, tilt):
    obj.data.splines[0].points.foreach_set("tilt", np.asarray(tilt, dtype=np.float32))


def _wrapped(angle):
    return np.mod(np.asarray(angle) + np.pi, 2.0 * np.pi) - np.pi


def test_a_rod_at_rest_writes_back_its_modelled_tilt(scene):
    """A curl out of its plane (a rod with its modelled rest shape, twisting), weightless,
    with a tilt that varies along it (0.3 to 1.5 rad): every frame it plays shows its
    modelled tilt within 1e-4 rad, and the frame before the start puts it back exactly."""
    scene.use_gravity = False
    co = _arc(16, np.radians(200.0), 1.0)
    co[:, 1] = np.linspace(0.0, 0.3, len(co))
    obj = _curve(scene, "curl", co)
    obj.xpbd.bend_stiffness = 0.5
    obj.xpbd.use_twist = True
    obj.xpbd.twist_stiffness = 0.4
    modelled = np.linspace(0.3, 1.5, len(co)).astype(np.float32).astype(np.float64)
    _set_tilt(obj, modelled)
    for frame in range(1, 13):
        scene.frame_set(frame)
        assert sim.status(obj) is None
        assert np.abs(_wrapped(_tilt(obj) - modelled)).max() < 1e-4, frame
    # the rod's own frames carry the tilt (its roll): a segment holds one roll, the mean of
    # its points', so only the ends differ, by half a segment's change of tilt (0.04 rad)
    rope = sim.REGISTRY[obj.session_uid]
    layout = rope.track.start_model.rod_layout
    world = rope.track.model_world
    x = rope.rest_xyz @ world[:3, :3].T + world[:3, 3]
    own = curve_tilt.tilts(rope.rest_xyz, world, curve_tilt.point_normals(
        x, layout.rest_state.normal, layout.particles, layout.starts), rope.layout.splines)
    assert np.abs(_wrapped(own - modelled))[1:-1].max() < 1e-3
    assert np.abs(_wrapped(own - modelled)).max() < 0.05
    _set_tilt(obj, np.zeros(len(co)))  # as if written by a rod frame
    scene.frame_set(0)
    assert np.array_equal(_tilt(obj), modelled)


def _straight_rod(scene, turned, twist):
    """A straight rod along x (20 points, 1 m), pinned at its first point, weightless, with
    twist stiffness ``twist`` [N m^2], parented to an empty keyed to turn 180 degrees about x
    over a second (or not); a flat extrusion shows its normal."""
    scene.use_gravity = False
    obj = _curve(scene, "cable", np.c_[np.linspace(0.0, 1.0, 20), np.zeros(20), np.zeros(20)])
    obj.data.extrude = 0.05
    _turned_by_parent(scene, _twisting(obj, twist), "plug", turned)
    return obj


def _shown_side(obj):
    """The world direction across the flat extrusion at the curve's last point (Blender's
    displayed binormal there, up to a sign the same for every frame)."""
    evaluated = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
    mesh = evaluated.to_mesh()
    co = np.array([v.co[:] for v in mesh.vertices])
    evaluated.to_mesh_clear()
    end = ropes.local_points(obj)[-1]
    near = np.argsort(np.linalg.norm(co - end, axis=1))[:2]
    side = np.array(obj.matrix_world)[:3, :3] @ (co[near[1]] - co[near[0]])
    return side / np.linalg.norm(side)


@pytest.mark.parametrize(("turned", "twist"), [(True, 0.4), (True, 1e-7), (False, 0.4)])
def test_a_turned_plug_turns_the_free_end(scene, turned, twist):
    """The straight rod's shape does not change. Its plug turned by 180 degrees, a rod that
    twists (GJ 0.4 N m^2) turns its free end with it: the end's written tilt (in object
    space, which turned too) is that of the rod left alone, 0, and its flat extrusion faces
    the other way in the world. A rod that hardly twists (GJ 1e-7) keeps its free end as it
    was: the written tilt turns by 180 degrees relative to the rod left alone."""
    obj = _straight_rod(scene, turned, twist)
    scene.frame_set(1)
    before = _shown_side(obj)
    ropes.play(scene, 2, 60)
    assert sim.status(obj) is None
    tip = abs(float(_wrapped(_tilt(obj)[-1])))
    facing = float(before @ _shown_side(obj))
    if twist > 1e-3:
        assert tip < 0.05
        assert facing == pytest.approx(-1.0 if turned else 1.0, abs=0.01)
    else:
        assert tip == pytest.approx(np.pi, abs=0.15)
        assert facing == pytest.approx(1.0, abs=0.02)


def test_a_plain_ropes_tilt_is_never_written(scene):
    """A plain rope (no bending) with a tilt swings under gravity: its tilt keeps the same
    bits every frame and after going back before the start."""
    obj = ropes.curve_rope(scene, "POLY", 12)
    obj.xpbd.pin_first = True
    tilt = np.linspace(-1.0, 2.0, 12)
    _set_tilt(obj, tilt)
    before = _tilt(obj)
    modelled = ropes.local_points(obj).copy()
    for frame in range(1, 25):
        scene.frame_set(frame)
        assert sim.status(obj) is None
        assert np.array_equal(_tilt(obj), before), frame
    assert np.abs(ropes.local_points(obj) - modelled).max() > 0.1  # it swung
    scene.frame_set(0)
    assert np.array_equal(_tilt(obj), before)


def test_a_rest_shape_stored_without_tilt_takes_the_points_tilt(scene):
    """A rod whose rest shape was stored by a version that kept no tilt: built again, it
    stores the points' tilt (never written before) and puts it back with the rest shape."""
    obj = _straight_rod(scene, False, 0.4)
    _set_tilt(obj, np.full(20, 0.5))
    scene.frame_set(1)
    del rest.holder(obj.data)[rest.TILT_NAME]
    sim.clear()
    ropes.play(scene, 1, 3)
    assert sim.status(obj) is None
    assert rest.TILT_NAME in rest.holder(obj.data)
    _set_tilt(obj, np.zeros(20))
    scene.frame_set(0)
    assert np.array_equal(_tilt(obj), np.full(20, 0.5, dtype=np.float32))


@pytest.mark.parametrize("kind", ["BEZIER", "NURBS"])
def test_bezier_and_nurbs_rods_write_a_tilt_too(scene, kind):
    """Bezier and NURBS rods (their tilt approximate: Blender interpolates it between the
    control points) swinging with twist write a finite tilt at every control point, and the
    frame before the start puts the modelled tilt back."""
    obj = ropes.curve_rope(scene, kind, 12)
    obj.xpbd.stiffness_mode = "MATERIAL"
    obj.xpbd.use_bend_stiffness = True
    obj.xpbd.use_twist = True
    obj.xpbd.twist_stiffness = 0.4
    points = obj.data.splines[0].bezier_points if kind == "BEZIER" else \
        obj.data.splines[0].points
    modelled = np.linspace(0.0, 1.0, 12, dtype=np.float32)
    points.foreach_set("tilt", modelled)
    tilt = np.empty(12, dtype=np.float32)
    ropes.play(scene, 1, 12)
    assert sim.status(obj) is None
    points.foreach_get("tilt", tilt)
    assert np.isfinite(tilt).all() and not np.array_equal(tilt, modelled)
    scene.frame_set(0)
    points.foreach_get("tilt", tilt)
    assert np.array_equal(tilt, modelled)


def test_disabling_a_rod_puts_its_modelled_tilt_back(scene):
    """A rod whose free end the simulation turned (a plug turned with hardly any twist
    stiffness): turning the simulation off puts the modelled tilt back, bit for bit."""
    obj = _straight_rod(scene, True, 1e-7)
    modelled = np.linspace(0.2, 0.6, 20, dtype=np.float32)
    _set_tilt(obj, modelled)
    ropes.play(scene, 1, 30)
    assert np.abs(_tilt(obj) - modelled).max() > 1.0
    obj.xpbd.enabled = False
    assert np.array_equal(_tilt(obj).astype(np.float32), modelled)


@pytest.mark.parametrize("first", [(0.3, 0.1, 0.05), (1e-5, 2e-5, 0.3)])
def test_blenders_normal_is_the_one_the_tilt_is_measured_from(scene, first):
    """The rule ``curve_tilt.blender_frames`` follows is the one Blender draws a legacy poly
    curve with: a flat extrusion of a curve out of its plane with a tilt at each point lies
    across its normal turned by the tilt, at every point (a first segment slanted and one
    within 1e-4 of vertical)."""
    co = np.array([(0, 0, 0), first, (0.5, 0.4, 0.1), (0.6, 0.7, 0.3), (0.5, 1.0, 0.35),
                   (0.3, 1.2, 0.6)])
    tilt = np.array([0.0, 0.3, -0.2, 1.0, 0.5, 2.0])
    curve = bpy.data.curves.new("probe", "CURVE")
    curve.dimensions = "3D"
    curve.extrude = 0.1
    spline = curve.splines.new("POLY")
    spline.points.add(len(co) - 1)
    spline.points.foreach_set("co", np.c_[co, np.ones(len(co))].astype(np.float32).ravel())
    spline.points.foreach_set("tilt", tilt.astype(np.float32))
    obj = ropes.link(scene, "probe", curve)
    evaluated = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
    mesh = evaluated.to_mesh()
    verts = np.array([v.co[:] for v in mesh.vertices])
    evaluated.to_mesh_clear()
    tangent, normal = curve_tilt.blender_frames(co)
    c, s = np.cos(tilt)[:, None], np.sin(tilt)[:, None]
    tilted = c * normal + s * np.cross(tangent, normal)
    for i, point in enumerate(co):
        near = np.argsort(np.linalg.norm(verts - point, axis=1))[:2]
        across = verts[near[1]] - verts[near[0]]
        across /= np.linalg.norm(across)
        assert abs(float(across @ tilted[i])) < 1e-4, i
        assert abs(float(across @ np.cross(tangent[i], tilted[i]))) == pytest.approx(1.0,
                                                                                    abs=1e-4)


def test_a_rod_baked_to_keyframes_keys_its_tilt_and_free_bake_puts_the_modelled_one_back(
        scene):
    """A bake to keyframes keys a curve rod's tilt as the live simulation writes it, frame
    by frame (a flat bevel shows the twist without the add-on); Free Bake at the start frame
    puts the modelled tilt back."""
    obj = _straight_rod(scene, True, 1e-7)
    obj.xpbd.frame_end = 30
    modelled = np.linspace(0.2, 0.6, 20, dtype=np.float32)
    _set_tilt(obj, modelled)
    live = {}
    for frame in range(1, 31):
        scene.frame_set(frame)
        live[frame] = _tilt(obj)
    assert np.abs(_wrapped(live[30] - live[1])).max() > 0.5  # the plug twisted it
    scene.frame_set(1)
    assert bpy.ops.xpbd.bake_all() == {"FINISHED"}
    assert obj.xpbd.bake.baked
    for frame in (1, 2, 15, 29, 30):
        scene.frame_set(frame)
        np.testing.assert_allclose(_wrapped(_tilt(obj) - live[frame]), 0.0, atol=1e-5,
                                   err_msg=str(frame))
    scene.frame_set(1)  # the start frame: after Free Bake the live rope shows its rest shape
    bpy.context.view_layer.objects.active = obj
    assert bpy.ops.xpbd.free_bake() == {"FINISHED"}
    assert np.array_equal(_tilt(obj).astype(np.float32), modelled)
