"""Per-point maps read from Blender (``blender/read/maps.py``): vertex-group weights of a mesh
rope and the weight and radius of curve points, in the rope's particle order."""

from __future__ import annotations

import bpy
import numpy as np
import pytest

from xpbd_addon.blender.read import maps
from xpbd_addon.blender.read.geometry import build_layout


def test_vertex_group_weights_per_vertex(scene):
    mesh = bpy.data.meshes.new("rope")
    mesh.from_pydata([(i * 0.1, 0.0, 0.0) for i in range(5)], [(i, i + 1) for i in range(4)],
                     [])
    obj = bpy.data.objects.new("rope", mesh)
    scene.collection.objects.link(obj)
    obj.vertex_groups.new(name="other").add([0, 1, 2, 3, 4], 0.9, "REPLACE")
    group = obj.vertex_groups.new(name="mass")
    group.add([1], 0.25, "REPLACE")
    group.add([4], 1.0, "REPLACE")
    weights = maps.vertex_group_weights(obj, "mass")
    np.testing.assert_allclose(weights, [0.0, 0.25, 0.0, 0.0, 1.0])
    assert maps.vertex_group_weights(obj, "absent") is None
    np.testing.assert_allclose(maps.scaled(weights, 0.05, 0.5), [0.05, 0.1625, 0.05, 0.05, 0.5])
    assert build_layout(obj).particle_count == len(weights)


def test_curve_point_weight_and_radius_in_particle_order(scene):
    curve = bpy.data.curves.new("rope", "CURVE")
    curve.dimensions = "3D"
    poly = curve.splines.new("POLY")
    poly.points.add(2)
    for i, point in enumerate(poly.points):
        point.co = (i * 0.1, 0.0, 0.0, 1.0)
        point.weight_softbody = 0.1 * (i + 1)
        point.radius = 1.0 + i
    bezier = curve.splines.new("BEZIER")
    bezier.bezier_points.add(1)
    for i, point in enumerate(bezier.bezier_points):
        point.co = (i * 0.1, 1.0, 0.0)
        point.weight_softbody = 0.7 + 0.1 * i
        point.radius = 0.5
    obj = bpy.data.objects.new("rope", curve)
    scene.collection.objects.link(obj)
    weight = maps.curve_point_values(curve, "weight_softbody")
    radius = maps.curve_point_values(curve, "radius")
    np.testing.assert_allclose(weight, [0.1, 0.2, 0.3, 0.7, 0.8], rtol=1e-6)
    np.testing.assert_allclose(radius, [1.0, 2.0, 3.0, 0.5, 0.5])
    assert build_layout(obj).particle_count == len(weight)
    with pytest.raises(ValueError, match="^value:"):
        maps.curve_point_values(curve, "co")
