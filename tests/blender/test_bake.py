"""Bake (decision 4): baked ropes play as native animation in a fresh Blender without the
add-on, in any frame order; Bake to Bones survives a glTF round trip; Free Bake returns the
exact rest shape and the live simulation."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import bpy
import numpy as np
import pytest

from xpbd_addon.blender.bake import job as bake

from . import ropes

FIRST, LAST = 1, 40
PATH = ((1, (0.0, 0.0, 0.0)), (15, (1.0, 0.0, 0.5)), (40, (0.0, 1.0, 0.0)))


def _animated_empty(scene, name="driver"):
    empty = bpy.data.objects.new(name, None)
    scene.collection.objects.link(empty)
    for frame, location in PATH:
        empty.location = location
        empty.keyframe_insert("location", frame=frame)
    return empty


@pytest.fixture
def gltf():
    """Blender's glTF add-on (its importer), enabled for the test and disabled after it."""
    import addon_utils

    addon_utils.enable("io_scene_gltf2", default_set=False)
    yield
    addon_utils.disable("io_scene_gltf2", default_set=False)


@pytest.fixture
def recorded(monkeypatch):
    """The BakeJob records (what the bake simulated) of every bake in the test."""
    records = []
    original = bake.BakeJob.write

    def write(self):
        records.extend(self.records)
        return original(self)

    monkeypatch.setattr(bake.BakeJob, "write", write)
    return records


def _scene_range(scene, first=FIRST, last=LAST):
    scene.frame_start, scene.frame_end = first, last
    scene.frame_set(first)


def _hooked_curve(scene, empty):
    obj = ropes.curve_rope(scene, "POLY", name="curve_rope")
    obj.xpbd.pin_first = False  # the hook pins point 0
    hook = obj.modifiers.new("Hook", "HOOK")
    hook.object = empty
    hook.vertex_indices_set([0])
    hook.falloff_type = "NONE"
    obj.data.bevel_depth = 0.02
    return obj


FRESH = """
import json, sys
import bpy, numpy as np
blend, out, frames, image = sys.argv[1:5]
bpy.ops.wm.open_mainfile(filepath=blend)
# The add-on is not there: no Object.xpbd, no frame handler of ours.
assert bpy.types.Object.bl_rna.properties.get("xpbd") is None
assert not [h for h in bpy.app.handlers.frame_change_post if "xpbd" in h.__module__]
scene = bpy.context.scene
curve, mesh = bpy.data.objects["curve_rope"], bpy.data.objects["mesh_rope"]
shaped = bpy.data.objects["curve_shape_keys"]
result = {}
for f in json.loads(frames):
    scene.frame_set(f)
    rows = []
    for spline in curve.data.splines:  # animated values are flushed to the original data
        buf = np.empty(4 * len(spline.points), dtype=np.float32)
        spline.points.foreach_get("co", buf)
        rows.append(buf.reshape(-1, 4)[:, :3])
    dg = bpy.context.evaluated_depsgraph_get()
    ev = mesh.evaluated_get(dg)
    buf = np.empty(3 * len(ev.data.vertices), dtype=np.float32)
    ev.data.attributes["position"].data.foreach_get("vector", buf)
    m = np.array(ev.matrix_world)
    p = buf.reshape(-1, 3).astype(np.float64)
    # Curve shape keys act in the evaluated curve: a poly curve's mesh has a vertex per point.
    as_mesh = shaped.evaluated_get(dg).to_mesh()
    sk = np.empty(3 * len(as_mesh.vertices), dtype=np.float32)
    as_mesh.attributes["position"].data.foreach_get("vector", sk)
    shaped.evaluated_get(dg).to_mesh_clear()
    result[f] = {"curve": np.vstack(rows).tolist(), "mesh": buf.reshape(-1, 3).tolist(),
                 "mesh_world": (p @ m[:3, :3].T + m[:3, 3]).tolist(),
                 "curve_shape_keys": sk.reshape(-1, 3).tolist()}
scene.render.engine = "BLENDER_WORKBENCH"
scene.render.resolution_x = scene.render.resolution_y = 24
camera = bpy.data.objects.new("camera", bpy.data.cameras.new("camera"))
camera.location = (1.0, -6.0, -1.0)
camera.rotation_euler = (1.5708, 0.0, 0.0)
scene.collection.objects.link(camera)
scene.camera = camera
scene.frame_set(17)
scene.render.filepath = image
bpy.ops.render.render(write_still=True)
json.dump(result, open(out, "w"))
"""


def test_baked_ropes_play_in_a_fresh_blender_without_the_addon(scene, tmp_path, recorded):
    _scene_range(scene)
    empty = _animated_empty(scene)
    curve = _hooked_curve(scene, empty)
    mesh = ropes.mesh_rope(scene, axis=1)
    mesh.parent = empty
    shaped = ropes.curve_rope(scene, "POLY", name="curve_shape_keys", axis=2)
    shaped.xpbd.bake.curve_format = "SHAPE_KEYS"
    shaped.parent = empty
    # Live playback first: the bake must give the same frames.
    played = {}
    for frame in range(FIRST, LAST + 1):
        scene.frame_set(frame)
        played[frame] = ropes.world_points(mesh)
    scene.frame_set(FIRST)
    assert bpy.ops.xpbd.bake_all() == {"FINISHED"}
    assert curve.xpbd.bake.baked and mesh.xpbd.bake.baked
    assert mesh.data.shape_keys is not None and curve.data.animation_data.action is not None
    assert len(shaped.data.shape_keys.key_blocks) == LAST - FIRST + 2
    by_name = {r.obj.name: r for r in recorded}
    blend = tmp_path / "baked.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))

    frames = [int(f) for f in np.random.default_rng(7).permutation(np.arange(FIRST, LAST + 1))]
    frames += [FIRST - 5, LAST + 10]  # held shapes outside the range
    out, image = tmp_path / "fresh.json", tmp_path / "frame17.png"
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(FRESH), str(blend), str(out),
                           json.dumps(frames), str(image)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(out.read_text())
    for f in frames:
        k = min(max(f, FIRST), LAST) - FIRST
        got = result[str(f)]
        np.testing.assert_allclose(got["curve"], by_name["curve_rope"].local[k], atol=1e-5,
                                   err_msg=f"curve frame {f}")
        np.testing.assert_allclose(got["mesh"], by_name["mesh_rope"].local[k], atol=1e-5,
                                   err_msg=f"mesh frame {f}")
        np.testing.assert_allclose(got["curve_shape_keys"], by_name["curve_shape_keys"].local[k],
                                   atol=1e-5, err_msg=f"curve shape keys frame {f}")
        if FIRST <= f <= LAST:
            np.testing.assert_allclose(got["mesh_world"], played[f], atol=1e-5)
    # The rope did move: frames differ by far more than the tolerance.
    assert np.abs(np.array(result[str(LAST)]["curve"])
                  - np.array(result[str(FIRST)]["curve"])).max() > 0.1
    assert image.exists() and image.stat().st_size > 0


EXPORT = """
import os, sys
import bpy
import addon_utils
blend, path, rig, skin = sys.argv[1:5]
bpy.ops.wm.open_mainfile(filepath=blend)
addon_utils.enable("io_scene_gltf2", default_set=False)
for obj in bpy.context.scene.objects:
    obj.select_set(obj.name in (rig, skin))
bpy.ops.export_scene.gltf(filepath=path, use_selection=True, export_animations=True,
                          export_skins=True, export_frame_range=False)
addon_utils.enable("io_scene_fbx", default_set=False)
bpy.ops.export_scene.fbx(filepath=path[:-4] + ".fbx", use_selection=True, bake_anim=True,
                         add_leaf_bones=False)
print("exported", flush=True)
os._exit(0)  # bpy 4.2 crashes in its exit handlers after a glTF export
"""


def _bone_heads(rig):
    heads = np.empty((len(rig.pose.bones), 3))
    m = np.array(rig.matrix_world)
    for i, pose_bone in enumerate(rig.pose.bones):  # a dozen bones: test probe only
        heads[i] = m[:3, :3] @ np.array(pose_bone.head) + m[:3, 3]
    return heads


def test_bake_to_bones_exports_to_gltf_and_fbx_and_imports_with_the_same_motion(
        scene, tmp_path, recorded, gltf):
    last = 24
    _scene_range(scene, FIRST, last)
    empty = _animated_empty(scene)
    curve = _hooked_curve(scene, empty)
    assert bpy.ops.xpbd.bake(target="BONES") == {"FINISHED"}
    settings = curve.xpbd.bake
    rig, skin = settings.rig, settings.skin
    assert rig.type == "ARMATURE" and len(rig.data.bones) == 12
    assert skin.modifiers["XPBD Rig"].object == rig and len(skin.vertex_groups) == 12
    assert curve.hide_viewport and curve.hide_render
    joints = np.stack(recorded[0].world)  # [F, 12, 3]: one bone per point
    # In Blender the bone heads are the rope's points, the skin's vertices follow.
    for f in (5, 17, last):
        scene.frame_set(f)
        np.testing.assert_allclose(_bone_heads(rig), joints[f - FIRST], atol=1e-5)

    # Exported from the saved file by a plain Blender (no add-on), as a user would.
    blend, path = tmp_path / "bones.blend", tmp_path / "rope.glb"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(EXPORT), str(blend),
                           str(path), rig.name, skin.name], capture_output=True, text=True,
                          timeout=120)
    assert "exported" in done.stdout, done.stderr[-3000:]
    bpy.ops.wm.read_homefile(use_empty=True, use_factory_startup=True)
    bpy.ops.import_scene.gltf(filepath=str(path))
    scene = bpy.context.scene
    imported = [o for o in scene.objects if o.type == "ARMATURE"]
    assert len(imported) == 1
    arm = imported[0]
    meshes = [o for o in scene.objects if o.type == "MESH"]
    assert meshes and any(m.find_armature() == arm for m in meshes)
    names = [b.name for b in arm.pose.bones]
    order = [names.index(f"curve_rope.0.{i:03d}") for i in range(12)]
    action = arm.animation_data.action
    start = int(action.frame_range[0])
    worst = 0.0
    for f in range(FIRST, last + 1):
        scene.frame_set(f - FIRST + start)
        heads = _bone_heads(arm)[order]
        worst = max(worst, float(np.linalg.norm(heads - joints[f - FIRST], axis=1).max()))
    print("gltf worst joint error [m]", worst)
    assert worst < 1e-3, worst
    # FBX (exported by the same process): the importer gives the same joints back too.
    import addon_utils

    addon_utils.enable("io_scene_fbx", default_set=False)
    bpy.ops.wm.read_homefile(use_empty=True, use_factory_startup=True)
    bpy.ops.import_scene.fbx(filepath=str(path.with_suffix(".fbx")))
    scene = bpy.context.scene
    arm = next(o for o in scene.objects if o.type == "ARMATURE")
    names = [b.name for b in arm.pose.bones]
    order = [names.index(f"curve_rope.0.{i:03d}") for i in range(12)]
    fbx_worst = 0.0
    for f in range(FIRST, last + 1):
        scene.frame_set(f)
        heads = _bone_heads(arm)[order]
        fbx_worst = max(fbx_worst, float(np.linalg.norm(heads - joints[f - FIRST],
                                                        axis=1).max()))
    print("fbx worst joint error [m]", fbx_worst)
    assert fbx_worst < 1e-3, fbx_worst


def test_free_bake_restores_the_rest_shape_and_the_live_simulation(scene):
    _scene_range(scene, 1, 12)
    curve = ropes.curve_rope(scene, "BEZIER", name="bez")
    mesh = ropes.mesh_rope(scene, axis=1)
    rest = {o.name: ropes.local_points(o).copy() for o in (curve, mesh)}
    handles = np.empty(36, dtype=np.float32)
    curve.data.splines[0].bezier_points.foreach_get("handle_left", handles)
    live = {}
    for frame in range(1, 13):
        scene.frame_set(frame)
        live[frame] = {o.name: ropes.local_points(o).copy() for o in (curve, mesh)}
    n_objects, n_meshes = len(bpy.data.objects), len(bpy.data.meshes)
    for target, curve_format in (("KEYS", "KEYFRAMES"), ("KEYS", "SHAPE_KEYS"),
                                 ("BONES", "KEYFRAMES")):
        curve.xpbd.bake.curve_format = curve_format
        scene.frame_set(1)
        assert bpy.ops.xpbd.bake_all(target=target) == {"FINISHED"}
        if curve_format == "SHAPE_KEYS":  # a baked Bezier frame: handles moved with points
            block = curve.data.shape_keys.key_blocks["xpbd 12"]
            co = np.array([p.co for p in block.data])
            left = np.array([p.handle_left for p in block.data])
            np.testing.assert_allclose(co, live[12]["bez"], atol=1e-6)
            np.testing.assert_allclose(left - co, handles.reshape(-1, 3) - rest["bez"],
                                       atol=1e-6)
        scene.frame_set(9)
        assert bpy.ops.xpbd.free_bake(all_objects=True) == {"FINISHED"}
        assert len(bpy.data.objects) == n_objects and len(bpy.data.meshes) == n_meshes
        assert len(bpy.data.actions) == 0 and len(bpy.data.armatures) == 0
        assert mesh.data.shape_keys is None and curve.data.animation_data is None
        assert not curve.hide_viewport and not curve.hide_render
        scene.frame_set(1)
        for obj in (curve, mesh):
            assert not obj.xpbd.bake.baked
            assert np.array_equal(ropes.local_points(obj), rest[obj.name])
        after = np.empty(36, dtype=np.float32)
        curve.data.splines[0].bezier_points.foreach_get("handle_left", after)
        assert np.array_equal(after, handles)
        for frame in range(2, 13):  # the live simulation again, bit for bit
            scene.frame_set(frame)
            for obj in (curve, mesh):
                assert np.array_equal(ropes.local_points(obj), live[frame][obj.name]), frame
