"""Every geometry type is a rope: it falls under gravity and keeps its length."""

from __future__ import annotations

import bpy
import numpy as np
import pytest

from . import ropes


@pytest.mark.parametrize("kind", ["MESH", "POLY", "NURBS", "BEZIER"])
def test_falls_under_gravity_and_holds_length(scene, kind):
    if kind == "MESH":
        obj = ropes.mesh_rope(scene)
    else:
        obj = ropes.curve_rope(scene, kind)
    rest = ropes.world_points(obj)
    ropes.play(scene, 1, 18)  # 17 frames simulated: 0.71 s at 24 fps
    now = ropes.world_points(obj)
    assert np.all(np.isfinite(now))
    assert np.array_equal(now[0], rest[0]), "the pinned first point must stay"
    # A horizontal 1.98 m rope released from rest swings down: after 0.7 s its tip is near
    # the bottom of the swing (free fall alone would take it 2.5 m down).
    assert now[-1, 2] < rest[-1, 2] - 1.5
    assert np.all(now[1:, 2] < rest[1:, 2])
    assert ropes.length(now) == pytest.approx(ropes.length(rest), rel=0.02)


def test_bezier_handles_travel_with_their_points(scene):
    obj = ropes.curve_rope(scene, "BEZIER")
    ropes.play(scene, 1, 20)
    points = obj.data.splines[0].bezier_points
    n = len(points)
    co, left, right = (np.empty(3 * n, dtype=np.float32) for _ in range(3))
    points.foreach_get("co", co)
    points.foreach_get("handle_left", left)
    points.foreach_get("handle_right", right)
    assert co.reshape(n, 3)[-1, 2] < -0.3
    np.testing.assert_allclose((co - left).reshape(n, 3), [[0.03, 0, 0]] * n, atol=1e-5)
    np.testing.assert_allclose((right - co).reshape(n, 3), [[0.03, 0, 0]] * n, atol=1e-5)


def test_mesh_faces_count_through_their_edges(scene):
    bpy.ops.mesh.primitive_grid_add(x_subdivisions=4, y_subdivisions=4, size=1.0)
    obj = bpy.context.active_object
    group = obj.vertex_groups.new(name="pin")
    # Pin one border row (y = -0.5): the sheet swings down like a curtain.
    ids = [v.index for v in obj.data.vertices if v.co.y < -0.49]
    group.add(ids, 1.0, "REPLACE")
    obj.xpbd.pin_group = "pin"
    obj.xpbd.enabled = True
    rest = ropes.world_points(obj)
    lowest = 0.0
    for frame in range(1, 25):
        scene.frame_set(frame)
        lowest = min(lowest, float(ropes.world_points(obj)[:, 2].min()))
    now = ropes.world_points(obj)
    assert np.array_equal(now[ids], rest[ids])
    # The free border is 1 m from the pinned one and swings through the bottom (-1 m).
    assert lowest < -0.9
    edges = np.array([e.vertices[:] for e in obj.data.edges])
    before = np.linalg.norm(rest[edges[:, 0]] - rest[edges[:, 1]], axis=1)
    after = np.linalg.norm(now[edges[:, 0]] - now[edges[:, 1]], axis=1)
    np.testing.assert_allclose(after, before, rtol=0.03)


def test_multiple_splines_are_separate_ropes(scene):
    obj = ropes.curve_rope(scene, "POLY", splines=3)
    ropes.play(scene, 1, 24)
    now = ropes.local_points(obj).reshape(3, 12, 3)
    np.testing.assert_allclose(now[:, :, 1], [[0.0] * 12, [0.1] * 12, [0.2] * 12], atol=1e-6)
    for s in range(3):
        assert now[s, -1, 2] < -0.5
        assert ropes.length(now[s]) == pytest.approx(1.98, rel=0.02)


def test_loose_vertices_of_a_mesh_are_held(scene):
    obj = ropes.mesh_rope(scene)
    obj.data.vertices.add(1)
    obj.data.vertices[-1].co = (0.5, 0.5, 0.5)
    ropes.play(scene, 1, 10)
    points = ropes.local_points(obj)
    assert tuple(points[-1]) == (0.5, 0.5, 0.5)
    assert points[11, 2] < -0.2  # the rope itself falls
