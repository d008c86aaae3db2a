"""A deforming collider's loop triangles, made in numpy as Blender makes them
(``blender.tessellation``) instead of read through RNA: the same triangles as Blender's on
meshes of triangles and quads deformed by modifiers, folded and made concave, and read from
Blender where a face has more corners or a quad's cut is too close to call."""

from __future__ import annotations

import bpy
import numpy as np
import pytest

from xpbd_addon.blender.read import collision_objects as colliders
from xpbd_addon.blender.read import tessellation

from . import ropes


def _made_and_blenders(obj):
    """(made, quads not certain, Blender's loop triangles) of ``obj``'s evaluated mesh; made
    None for a mesh with a face of more corners."""
    mesh = obj.evaluated_get(bpy.context.evaluated_depsgraph_get()).data
    local = np.empty(3 * len(mesh.vertices), dtype=np.float32)
    mesh.attributes["position"].data.foreach_get("vector", local)
    corners = np.empty(len(mesh.loops), dtype=np.int32)
    mesh.attributes[".corner_vert"].data.foreach_get("value", corners)
    faces = np.empty(len(mesh.loop_triangles), dtype=np.int32)
    mesh.loop_triangle_polygons.foreach_get("value", faces)
    blenders = np.empty(3 * len(mesh.loop_triangles), dtype=np.int32)
    mesh.loop_triangles.foreach_get("vertices", blenders)
    made = tessellation.quad_triangles(local, corners, faces)
    triangles, unsure = made if made is not None else (None, None)
    return triangles, unsure, blenders.reshape(-1, 3)


def _assert_blenders_but_unsure(made, unsure, blenders, message):
    """The triangles made are Blender's, but for the quads left to ask Blender about."""
    asked = np.zeros(len(blenders), dtype=bool)
    asked[unsure] = asked[unsure + 1] = True
    np.testing.assert_array_equal(made[~asked], blenders[~asked], err_msg=message)


def _flipped_rows(obj):
    """The first triangle rows of the quads Blender cut on their 1-3 diagonal (a triangle
    without the quad's first corner)."""
    mesh = obj.evaluated_get(bpy.context.evaluated_depsgraph_get()).data
    triangles = mesh.loop_triangles
    rows, row = [], 0
    for polygon in mesh.polygons:
        if polygon.loop_total == 4 and any(
                polygon.vertices[0] not in triangles[r].vertices[:] for r in (row, row + 1)):
            rows.append(row)
        row += polygon.loop_total - 2
    return rows


def _keyed_deform(obj, method, angle):
    """``obj`` with a Simple Deform modifier (``method``) keyed from its default angle at
    frame 1 to ``angle`` [rad] at frame 12."""
    deform = obj.modifiers.new(method.title(), "SIMPLE_DEFORM")
    deform.deform_method = method
    deform.keyframe_insert("angle", frame=1)
    deform.angle = angle
    deform.keyframe_insert("angle", frame=12)
    return obj


@pytest.mark.parametrize("shape", ["wave sphere", "twisted monkey", "bent grid"])
def test_made_triangles_are_blenders_on_deforming_meshes(scene, shape):
    """Meshes of triangles and quads deformed by modifiers over 12 frames: the triangles
    made are Blender's every frame, and few quads are left to ask Blender about (the
    monkey has two folded ones, on which Blender's two tests disagree)."""
    if shape == "wave sphere":
        bpy.ops.mesh.primitive_uv_sphere_add(segments=48, ring_count=24, radius=0.5)
        obj = bpy.context.object
        wave = obj.modifiers.new("Wave", "WAVE")
        wave.height, wave.width, wave.speed = 0.05, 0.3, 0.1
    elif shape == "twisted monkey":
        bpy.ops.mesh.primitive_monkey_add(size=1.0, location=(3.0, 0.0, 0.0))
        obj = _keyed_deform(bpy.context.object, "TWIST", 3.0)
    else:
        bpy.ops.mesh.primitive_grid_add(x_subdivisions=30, y_subdivisions=30, size=2.0)
        obj = _keyed_deform(bpy.context.object, "BEND", 4.0)
    for frame in range(1, 13):
        scene.frame_set(frame)
        made, unsure, blenders = _made_and_blenders(obj)
        assert made is not None and len(unsure) <= 4, frame
        _assert_blenders_but_unsure(made, unsure, blenders, f"frame {frame}")


def test_concave_and_folded_quads_are_cut_as_blender_cuts_them(scene):
    """A grid whose vertices are shaken in its plane (many concave quads, cut on 1-3) and out
    of it (folded quads): where the cut is made here it is Blender's, and Blender is asked
    where it is too close to call; a face of five corners is always Blender's."""
    rng = np.random.default_rng(7)
    flipped = unsure_count = 0
    for trial in range(6):
        bpy.ops.mesh.primitive_grid_add(x_subdivisions=12, y_subdivisions=12, size=1.0,
                                        location=(10.0 * trial, 0.0, 0.0))
        obj = bpy.context.object
        co = np.empty(3 * len(obj.data.vertices), dtype=np.float32)
        obj.data.vertices.foreach_get("co", co)
        co = co.reshape(-1, 3)
        spacing = 1.0 / 11
        co[:, :2] += rng.uniform(-0.45, 0.45, (len(co), 2)) * spacing
        co[:, 2] += rng.uniform(-1.0, 1.0, len(co)) * spacing * 0.3 * trial
        obj.data.vertices.foreach_set("co", co.ravel())
        obj.data.update()
        made, unsure, blenders = _made_and_blenders(obj)
        _assert_blenders_but_unsure(made, unsure, blenders, f"trial {trial}")
        asked = set(unsure.tolist()) | set((unsure + 1).tolist())
        flipped += sum(row not in asked for row in _flipped_rows(obj))
        unsure_count += len(unsure)
    assert flipped >= 20  # cut on 1-3, made here
    assert unsure_count >= 1  # some folded quads were left to Blender
    bpy.ops.mesh.primitive_circle_add(vertices=5, fill_type="NGON")
    made, _, _ = _made_and_blenders(bpy.context.object)
    assert made is None


def test_a_deforming_collider_is_not_read_through_rna(scene, monkeypatch):
    """A rope on a sphere deformed by a Wave modifier: its triangles are made, not read
    (one read at the first frame at most), and the ones used are always Blender's."""
    bpy.ops.mesh.primitive_uv_sphere_add(segments=32, ring_count=16, radius=0.5)
    sphere = bpy.context.object
    wave = sphere.modifiers.new("Wave", "WAVE")
    wave.height, wave.width, wave.speed = 0.03, 0.4, 0.1
    sphere.modifiers.new("Collision", "COLLISION")
    rope = ropes.curve_rope(scene, "POLY", n=20, length=1.0)
    rope.location = (-0.5, 0.0, 0.8)
    reads: list[int] = []
    read = colliders._read_triangles
    monkeypatch.setattr(colliders, "_read_triangles",
                        lambda mesh, count: reads.append(count) or read(mesh, count))
    for frame in range(1, 13):
        scene.frame_set(frame)
        (found,) = colliders.scene_meshes(bpy.context.evaluated_depsgraph_get())
        _, _, blenders = _made_and_blenders(sphere)
        np.testing.assert_array_equal(found.triangles, blenders, err_msg=f"frame {frame}")
    assert len(reads) <= 1, reads
    assert np.ptp(ropes.world_points(rope)[:, 2]) > 0.05  # it draped over the sphere
