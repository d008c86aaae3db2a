"""The stored rest shape cannot corrupt Blender's memory, go stale, hold NaN, or be deleted
by another object (issue 19, cases 1, 2, 3 and 7).

Cases that corrupted the heap (an abort, "corrupted size vs. prev_size") run in their own
process (``isolated.run``)."""

from __future__ import annotations

import bmesh
import bpy
import numpy as np
import pytest

from xpbd_addon.blender.frame import sim
from xpbd_addon.blender.read import rest

from . import isolated, ropes


def _finite_everywhere():
    """No NaN or infinite value in any mesh or curve of the file."""
    for mesh in bpy.data.meshes:
        buf = np.empty(3 * len(mesh.vertices), dtype=np.float32)
        mesh.attributes["position"].data.foreach_get("vector", buf)
        assert np.isfinite(buf).all(), mesh.name
    for curve in bpy.data.curves:
        for spline in curve.splines:
            if spline.type == "BEZIER":
                for name in ("co", "handle_left", "handle_right"):
                    buf = np.empty(3 * len(spline.bezier_points), dtype=np.float32)
                    spline.bezier_points.foreach_get(name, buf)
                    assert np.isfinite(buf).all(), curve.name
            else:
                buf = np.empty(4 * len(spline.points), dtype=np.float32)
                spline.points.foreach_get("co", buf)
                assert np.isfinite(buf).all(), curve.name


# --- case 1: the store resized as a whole (crashed Blender) ---------------------------------

def test_points_added_to_a_simulated_curve_then_reset_stores_a_new_rest_shape():
    result = isolated.run("""
        obj = ropes.curve_rope(scene, "POLY", n=12)
        ropes.play(scene, 1, 10)
        spline = obj.data.splines[0]
        spline.points.add(3)
        co = np.ones((15, 4), dtype=np.float32)
        co[:, 0] = np.linspace(0.0, 2.5, 15); co[:, 1:3] = 0.0
        spline.points.foreach_set("co", co.ravel())
        scene.frame_set(11)
        result["refused"] = sim.status(obj)
        bpy.context.view_layer.objects.active = obj
        bpy.ops.xpbd.reset()
        result["stored"] = len(rest.holder(obj.data)["xpbd_rest"])
        ropes.play(scene, 1, 30)
        # Allocations after a write past an ID property's end abort Blender here.
        for k in range(200):
            bpy.data.curves.new(f"c{k}", "CURVE")["junk"] = np.zeros(50 + k)
        result["status"] = sim.status(obj)
        result["finite"] = bool(np.isfinite(ropes.local_points(obj)).all())
        result["moved"] = float(ropes.world_points(obj)[-1, 2])
    """)
    assert "topology changed" in result["refused"]
    assert result["stored"] == 15 * 10
    assert result["status"] is None
    assert result["finite"] and result["moved"] < -0.05


def test_a_file_with_a_shorter_rest_shape_says_so_and_reset_repairs_it(tmp_path):
    blend = tmp_path / "short.blend"
    isolated.run(f"""
        obj = ropes.curve_rope(scene, "POLY", n=12, name="short")
        ropes.play(scene, 1, 5)
        held = rest.holder(obj.data)
        del held["xpbd_rest"]
        held["xpbd_rest"] = np.zeros(40)  # as a crafted or broken file would have it
        bpy.ops.wm.save_as_mainfile(filepath={str(blend)!r})
    """)
    result = isolated.run(f"""
        bpy.ops.wm.open_mainfile(filepath={str(blend)!r})
        scene = bpy.context.scene
        obj = bpy.data.objects["short"]
        before = ropes.local_points(obj).copy()
        ropes.play(scene, 1, 5)
        result["message"] = sim.status(obj)
        result["untouched"] = bool(np.array_equal(ropes.local_points(obj), before))
        bpy.context.view_layer.objects.active = obj
        bpy.ops.xpbd.reset()
        result["stored"] = len(rest.holder(obj.data)["xpbd_rest"])
        ropes.play(scene, 1, 10)
        for k in range(200):
            bpy.data.curves.new("c" + str(k), "CURVE")["junk"] = np.zeros(50 + k)
        result["status"] = sim.status(obj)
    """)
    assert "has 40 values for 12 control points" in result["message"]
    assert "Internal error" not in result["message"]
    assert result["untouched"]
    assert result["stored"] == 120
    assert result["status"] is None


# --- case 2: never a NaN in the rest shape or in the user's data ------------------------------

def test_nan_vertex_is_refused_without_storing_it_and_repairing_it_resumes(scene):
    obj = ropes.mesh_rope(scene)
    obj.data.vertices[5].co = (float("nan"), 0.0, 0.0)
    ropes.play(scene, 1, 3)
    assert "Vertex 5 of mesh 'mesh_rope' has a NaN" in sim.status(obj)
    assert not rest.has_rest(obj)
    obj.data.vertices[5].co = (0.9, 0.0, 0.0)
    ropes.play(scene, 1, 6)  # repaired: simulates without a Reset
    assert sim.status(obj) is None
    assert ropes.world_points(obj)[-1, 2] < -0.05
    obj.xpbd.enabled = False
    _finite_everywhere()
    assert ropes.local_points(obj)[5, 0] == np.float32(0.9)


def test_reset_with_a_nan_vertex_refuses_and_keeps_the_rest_shape(scene):
    obj = ropes.mesh_rope(scene)
    rest_shape = ropes.local_points(obj).copy()
    ropes.play(scene, 1, 5)
    obj.data.vertices[3].co = (float("inf"), 0.0, 0.0)
    bpy.context.view_layer.objects.active = obj
    with pytest.raises(RuntimeError, match="Vertex 3 .* NaN or infinite"):
        bpy.ops.xpbd.reset(use_current=True)
    bpy.ops.xpbd.reset()  # the stored rest shape is intact and goes back
    assert np.array_equal(ropes.local_points(obj), rest_shape)


def test_stored_rest_with_nan_is_never_written_back(scene):
    obj = ropes.mesh_rope(scene)
    ropes.play(scene, 1, 3)
    bad = np.zeros((12, 3))
    bad[4] = np.nan
    held = rest.holder(obj.data)
    del held["xpbd_rest"]
    held["xpbd_rest"] = bad.ravel()
    sim.clear()
    scene.frame_set(1)
    assert "NaN" in sim.status(obj) and "stored rest shape" in sim.status(obj)
    obj.xpbd.enabled = False  # disabling must not write the stored NaN back
    _finite_everywhere()
    obj.xpbd.enabled = True
    bpy.context.view_layer.objects.active = obj
    bpy.ops.xpbd.reset()
    _finite_everywhere()
    ropes.play(scene, 1, 4)
    assert sim.status(obj) is None


def test_nan_nurbs_weight_is_refused_and_never_written(scene):
    obj = ropes.curve_rope(scene, "NURBS")
    obj.data.splines[0].points[6].co = (1.0, 0.0, 0.0, float("nan"))
    ropes.play(scene, 1, 3)
    assert "Control point 6 of curve 'nurbs'" in sim.status(obj)
    assert not rest.has_rest(obj)
    obj.data.splines[0].points[6].co = (1.0, 0.0, 0.0, 1.0)
    ropes.play(scene, 1, 4)  # the weight fixed: the message goes without a Reset
    assert sim.status(obj) is None
    _finite_everywhere()


# --- case 3: linked duplicates ---------------------------------------------------------------

def test_disabling_a_linked_duplicate_keeps_the_shared_rest_shape(scene):
    first = ropes.mesh_rope(scene, name="first")
    rest_shape = ropes.local_points(first).copy()
    second = ropes.link(scene, "second", first.data)
    second.xpbd.pin_group = "pin"
    second.vertex_groups.new(name="pin")
    second.xpbd.enabled = True
    ropes.play(scene, 1, 5)
    assert "Shares its data with 'first'" in sim.status(second)
    second.xpbd.enabled = False
    assert rest.has_rest(first)
    ropes.play(scene, 6, 8)
    assert sim.status(first) is None
    bpy.context.view_layer.objects.active = first
    bpy.ops.xpbd.reset()
    assert np.array_equal(ropes.local_points(first), rest_shape)


# --- case 7: stored data of the wrong type ------------------------------------------------------

def _legacy_attribute(kind, domain):
    """A mesh stored as before issue 34 (a point attribute and a custom property), its
    attribute of another type or domain."""
    def craft(obj):
        mesh = obj.data
        signature = list(rest.holder(mesh)["xpbd_rest_signature"])
        rest.clear_data(mesh)
        mesh.attributes.new("xpbd_rest", kind, domain)
        mesh["xpbd_rest_signature"] = signature
    return craft


def _held(name, value):
    def craft(obj):
        held = rest.holder(obj.data)
        del held[name]
        held[name] = value
    return craft


WRONG = {
    "int": ("MESH", _legacy_attribute("INT", "POINT"), "is INT on POINT"),
    "float2": ("MESH", _legacy_attribute("FLOAT2", "POINT"), "is FLOAT2 on POINT"),
    "color": ("MESH", _legacy_attribute("FLOAT_COLOR", "POINT"), "is FLOAT_COLOR on POINT"),
    "edges": ("MESH", _legacy_attribute("FLOAT_VECTOR", "EDGE"), "FLOAT_VECTOR on EDGE"),
    "faces": ("MESH", _legacy_attribute("FLOAT_VECTOR", "FACE"), "FLOAT_VECTOR on FACE"),
    "signature string": ("MESH", _held("xpbd_rest_signature", "12 11"),
                         "not a list of integers"),
    "signature dict": ("CURVE", _held("xpbd_rest_signature", {"a": 1}),
                       "not a list of integers"),
    "curve rest string": ("CURVE", _held("xpbd_rest", "x"), "not an array of floats"),
    "mesh rest string": ("MESH", _held("xpbd_rest", "x"), "not an array of floats"),
    "mesh rest short": ("MESH", _held("xpbd_rest", np.zeros(30)), "has 30 values for 12 "
                        "vertices"),
}


@pytest.mark.parametrize("case", sorted(WRONG))
def test_stored_data_of_the_wrong_type_gives_a_message_and_reset_repairs_it(scene, case):
    kind, craft, expected = WRONG[case]
    if kind == "MESH":
        obj = ropes.mesh_rope(scene)
        bm = bmesh.new()
        bm.from_mesh(obj.data)
        bmesh.ops.contextual_create(bm, geom=bm.verts[:3])  # a face, for the FACE domain
        bm.to_mesh(obj.data)
        bm.free()
    else:
        obj = ropes.curve_rope(scene, "POLY")
    ropes.play(scene, 1, 3)
    craft(obj)
    sim.clear()
    before = ropes.local_points(obj).copy()
    ropes.play(scene, 1, 3)
    message = sim.status(obj)
    assert expected in message and "Internal error" not in message
    assert np.array_equal(ropes.local_points(obj), before)
    obj.xpbd.enabled = False  # no exception inside the update callback
    assert np.array_equal(ropes.local_points(obj), before)
    obj.xpbd.enabled = True
    bpy.context.view_layer.objects.active = obj
    bpy.ops.xpbd.reset()
    ropes.play(scene, 1, 4)
    assert sim.status(obj) is None
    assert ropes.world_points(obj)[-1, 2] < before[-1, 2] - 0.01


def test_a_rest_shape_stored_with_the_old_count_signature_still_restores(scene):
    """Files saved before the edge hash carry [vertex count, edge count] for a mesh."""
    obj = ropes.mesh_rope(scene)
    rest_shape = ropes.local_points(obj).copy()
    ropes.play(scene, 1, 5)
    held = rest.holder(obj.data)
    del held["xpbd_rest_signature"]
    held["xpbd_rest_signature"] = [12, 11]
    sim.clear()
    ropes.play(scene, 1, 5)
    assert sim.status(obj) is None
    bpy.context.view_layer.objects.active = obj
    bpy.ops.xpbd.reset()
    assert np.array_equal(ropes.local_points(obj), rest_shape)


def test_reset_all_with_the_current_shape_leaves_baked_ropes_alone(scene):
    """Reset All (Use Current Shape as Rest) with a baked rope and a live one: the live one
    takes its current shape as rest; the baked one keeps its rest shape, so Free Bake still
    brings back the shape the user modelled (not the baked pose). A Reset of the baked rope
    alone is refused with a message."""
    baked = ropes.curve_rope(scene, "POLY", name="baked")
    live = ropes.curve_rope(scene, "POLY", name="live")
    live.location.y = 1.0
    modelled = ropes.local_points(baked).copy()
    scene.frame_start, scene.frame_end = 1, 10
    bpy.context.view_layer.objects.active = baked
    assert bpy.ops.xpbd.bake() == {"FINISHED"}
    ropes.play(scene, 1, 8)
    posed = ropes.local_points(live).copy()
    assert bpy.ops.xpbd.reset(all_objects=True, use_current=True) == {"FINISHED"}
    np.testing.assert_array_equal(rest.load(live, sim.geometry.build_layout(live))[:, :3],
                                  posed)
    np.testing.assert_array_equal(rest.load(baked, sim.geometry.build_layout(baked))[:, :3],
                                  modelled)
    with pytest.raises(RuntimeError, match="'baked' is baked: Free Bake first"):
        bpy.ops.xpbd.reset(use_current=True)
    assert bpy.ops.xpbd.free_bake() == {"FINISHED"}
    scene.frame_set(1)  # the start frame: the rest shape
    np.testing.assert_array_equal(ropes.local_points(baked), modelled)


# --- issue 34: kept where no exporter writes it ------------------------------------------------

@pytest.mark.skipif(bpy.app.version < (5, 0, 0),
                    reason="Blender 4.2-4.5 have no system ID properties: the rest shape stays "
                           "where versions before issue 34 kept it (rest.py)")
def test_a_rest_shape_stored_as_before_issue_34_restores_and_moves(scene):
    """Files saved before issue 34 keep a mesh's rest shape as a point attribute and its
    signature as a custom property: it still restores, and the next store moves it."""
    obj = ropes.mesh_rope(scene)
    rest_shape = ropes.local_points(obj).copy()
    ropes.play(scene, 1, 5)
    mesh = obj.data
    signature = list(rest.holder(mesh)["xpbd_rest_signature"])
    rest.clear_data(mesh)
    mesh.attributes.new("xpbd_rest", "FLOAT_VECTOR", "POINT").data.foreach_set(
        "vector", rest_shape.ravel())
    mesh["xpbd_rest_signature"] = signature
    sim.clear()
    ropes.play(scene, 1, 5)
    assert sim.status(obj) is None
    bpy.context.view_layer.objects.active = obj
    bpy.ops.xpbd.reset()
    assert np.array_equal(ropes.local_points(obj), rest_shape)
    ropes.play(scene, 1, 5)
    bpy.ops.xpbd.reset(use_current=True)  # stores the current shape: where it is kept now
    assert "xpbd_rest" not in mesh.attributes and "xpbd_rest_signature" not in mesh
    assert len(rest.holder(mesh)["xpbd_rest"]) == 36
