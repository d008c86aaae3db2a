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


# --- maps wired into the rope (Object.xpbd.<name>_map, issue 31) ----------------------------

def _mesh_with_map(scene, weights):
    from . import ropes

    obj = ropes.mesh_rope(scene, n=len(weights), length=2.0, pin=(0,))
    group = obj.vertex_groups.new(name="map")
    for i, w in enumerate(weights):
        if w > 0.0:
            group.add([i], float(w), "REPLACE")
    return obj


def test_a_mass_map_makes_one_end_ten_times_heavier(scene):
    from xpbd_addon.blender.frame import sim

    weights = np.linspace(0.0, 1.0, 12)
    obj = _mesh_with_map(scene, weights)
    obj.xpbd.mass_map, obj.xpbd.mass_map_max = "map", 10.0
    scene.frame_set(2)
    model = sim.REGISTRY[obj.session_uid].model
    mass = obj.xpbd.vertex_mass * (1.0 + weights * 9.0)
    np.testing.assert_allclose(model.particle_inv_mass[1:], 1.0 / mass[1:])
    assert model.particle_inv_mass[0] == 0.0  # a pin stays a pin


def test_a_stiffness_map_gives_each_segment_its_compliance(scene):
    from xpbd_addon.blender.frame import sim

    weights = np.linspace(0.0, 1.0, 12)
    obj = _mesh_with_map(scene, weights)
    obj.xpbd.stiffness_map, obj.xpbd.stiffness_map_max = "map", 4.0
    scene.frame_set(2)
    model = sim.REGISTRY[obj.session_uid].model
    per_edge = 0.5 * (weights[:-1] + weights[1:])
    np.testing.assert_allclose(model.edge_compliance,
                               obj.xpbd.compliance / (1.0 + per_edge * 3.0))


def test_a_curve_radius_map_gives_each_point_its_radius(scene):
    from xpbd_addon.blender.frame import sim

    from . import ropes

    obj = ropes.curve_rope(scene, "POLY", n=5)
    for i, point in enumerate(obj.data.splines[0].points):
        point.radius = 0.25 * i  # 0 .. 1
    obj.xpbd.radius, obj.xpbd.radius_map, obj.xpbd.radius_map_max = 0.01, "radius", 3.0
    scene.frame_set(2)
    model = sim.REGISTRY[obj.session_uid].model
    np.testing.assert_allclose(model.particle_radius, 0.01 * (1.0 + 0.25 * np.arange(5) * 2.0),
                               rtol=1e-6)


def test_painting_a_map_restarts_the_rope_and_a_missing_one_is_named(scene):
    from xpbd_addon.blender.frame import sim

    obj = _mesh_with_map(scene, np.linspace(0.0, 1.0, 12))
    obj.xpbd.mass_map = "map"
    key = sim.settings_key(obj, scene)
    obj.vertex_groups["map"].add([3], 0.9, "REPLACE")
    assert sim.settings_key(obj, scene) != key
    obj.xpbd.mass_map = "nothing"
    scene.frame_set(3)
    assert sim.status(obj) == "Mass Map: 'mesh_rope' has no vertex group 'nothing'"
    assert not np.isnan(np.asarray([v.co for v in obj.data.vertices])).any()


def test_a_damping_map_gives_each_point_its_rate_and_calms_the_swing(scene):
    from xpbd_addon.blender.frame import group, sim

    from . import ropes

    weights = np.linspace(0.0, 1.0, 12)
    mapped = _mesh_with_map(scene, weights)
    mapped.xpbd.damping_map, mapped.xpbd.damping_map_max = "map", 20.0
    plain = _mesh_with_map(scene, weights)
    plain.location = (0.0, 3.0, 0.0)
    ropes.play(scene, 1, 24)
    model = sim.REGISTRY[mapped.session_uid].model
    np.testing.assert_allclose(model.particle_damping,
                               mapped.xpbd.damping * (1.0 + weights * 19.0))
    assert sim.REGISTRY[plain.session_uid].model.particle_damping is None

    def kinetic(obj):
        v = sim.REGISTRY[obj.session_uid].cache[24].v
        return float((v ** 2).sum())

    assert kinetic(mapped) < 0.8 * kinetic(plain)  # the same swing, calmer
    # ropes simulated together keep each one's rates
    joint = group.build_model([model, sim.REGISTRY[plain.session_uid].model])
    np.testing.assert_allclose(joint.particle_damping[:12], model.particle_damping)
    assert np.all(joint.particle_damping[12:] == plain.xpbd.damping)
