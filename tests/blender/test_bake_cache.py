"""Bake to a point cache (issue 18): an Alembic file played by Mesh Sequence Cache modifiers in a
fresh Blender without the add-on equals live playback within float32 precision; edge-mesh
ropes get a tube and curve ropes are cached as curves with their radius; nothing internal is
written; a USD cache read by usd-core (pxr, no Blender)
holds the same points; Free Bake removes what the bake added."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import bpy
import numpy as np
import pytest

from xpbd_addon.blender.bake import skin
from xpbd_addon.blender.read import rest

from . import readers, ropes

FIRST, LAST = 1, 30


def _scene_with_ropes(scene, tmp_path):
    scene.frame_start, scene.frame_end = FIRST, LAST
    scene.frame_set(FIRST)
    empty = bpy.data.objects.new("driver", None)
    scene.collection.objects.link(empty)
    for frame, location in ((1, (0, 0, 0)), (15, (1.0, 0.0, 0.5)), (30, (0.0, 1.0, 0.0))):
        empty.location = location
        empty.keyframe_insert("location", frame=frame)
    curve = ropes.curve_rope(scene, "POLY", n=20, name="curve rope")
    curve.parent = empty
    mesh = ropes.mesh_rope(scene, n=16, axis=1, name="Seil (ä).001")  # names files mangle
    mesh.parent = empty
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "ropes.blend"))
    return curve, mesh


def _strap(scene):
    """A mesh rope with faces (a strap: two rows of 10 vertices joined by quads), one end
    pinned: it keeps its own faces in the cache."""
    line = ropes.line(10, 1.0, 0)
    co = np.concatenate([line, line + [0.0, 0.05, 0.0]])
    quads = [(i, i + 1, i + 11, i + 10) for i in range(9)]
    data = bpy.data.meshes.new("strap")
    data.from_pydata(co.tolist(), [], quads)
    obj = ropes.link(scene, "strap", data)
    obj.location = (0.0, -1.0, 0.0)
    obj.vertex_groups.new(name="pin").add([0, 10], 1.0, "REPLACE")
    obj.xpbd.pin_group = "pin"
    obj.xpbd.enabled = True
    return obj


def _live(scene, objects):
    return ropes.played_points(scene, objects, FIRST, LAST)


FRESH = """
import json, sys
import bpy, numpy as np
blend, out, frames = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
bpy.ops.wm.open_mainfile(filepath=blend)
assert bpy.types.Object.bl_rna.properties.get("xpbd") is None  # no add-on here
scene = bpy.context.scene
result = {"frames": {}, "attributes": {}, "faces": {}, "type": {}, "radius": {}, "curves": {}}
for f in frames:
    scene.frame_set(f)
    dg = bpy.context.evaluated_depsgraph_get()
    row = {}
    for obj in scene.objects:
        if not any(m.type == "MESH_SEQUENCE_CACHE" for m in obj.modifiers):
            continue
        ev = obj.evaluated_get(dg)
        count = len(ev.data.points if obj.type == "CURVES" else ev.data.vertices)
        buf = np.empty(3 * count, dtype=np.float32)
        ev.data.attributes["position"].data.foreach_get("vector", buf)
        m = np.array(ev.matrix_world)
        p = buf.reshape(-1, 3).astype(np.float64) @ m[:3, :3].T + m[:3, 3]
        row[obj.name] = p.tolist()
        result["attributes"][obj.name] = sorted(a.name for a in ev.data.attributes)
        result["type"][obj.name] = obj.type
        if obj.type == "CURVES":
            radius = np.empty(count, dtype=np.float32)
            ev.data.attributes["radius"].data.foreach_get("value", radius)
            result["radius"][obj.name] = [float(radius.min()), float(radius.max())]
            result["curves"][obj.name] = len(ev.data.curves)
        else:
            result["faces"][obj.name] = len(ev.data.polygons)
    result["frames"][f] = row
json.dump(result, open(out, "w"))
"""


def test_an_alembic_cache_plays_without_the_addon_as_live(scene, tmp_path):
    curve, mesh = _scene_with_ropes(scene, tmp_path)
    strap = _strap(scene)
    played = _live(scene, (curve, mesh, strap))
    assert rest.has_rest(strap)  # the rope's stored rest shape
    blend_size = (tmp_path / "ropes.blend").stat().st_size
    curve.xpbd.bake.target = "CACHE"  # the rope's own Bake To: the operator is not told
    bpy.context.view_layer.objects.active = curve
    assert bpy.ops.xpbd.bake_all() == {"FINISHED"}
    path = tmp_path / "xpbd_cache" / "curve_rope.abc"
    assert path.exists() and path.stat().st_size > 0
    for obj in (curve, mesh):
        settings = obj.xpbd.bake
        assert settings.baked and settings.kind == "CACHE"
        assert obj.hide_viewport and obj.hide_render
        modifier = settings.skin.modifiers["XPBD Cache"]
        assert bpy.path.abspath(modifier.cache_file.filepath) == str(path)
    blend = tmp_path / "baked.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    # The .blend holds no per-frame data: it grows by the cache objects' one frame only.
    assert blend.stat().st_size < blend_size + 200_000

    frames = [int(f) for f in np.random.default_rng(3).permutation(np.arange(FIRST, LAST + 1))]
    out = tmp_path / "fresh.json"
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(FRESH), str(blend), str(out),
                           json.dumps(frames)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(out.read_text())
    worst = 0.0
    for f in frames:
        for obj in (curve, mesh, strap):
            got = np.array(result["frames"][str(f)][f"{obj.name} Cache"])
            n = len(played[f][obj.name])
            worst = max(worst, float(np.abs(got[:n] - played[f][obj.name]).max()))
    print("cache worst point error [m]", worst)
    assert worst < 1e-6
    for obj in (curve, mesh, strap):
        name = f"{obj.name} Cache"
        assert not [a for a in result["attributes"][name] if a.startswith("xpbd")]
    # the edge mesh: a tube, so it renders and exports as a mesh; the strap: its own faces
    assert result["type"][f"{mesh.name} Cache"] == "MESH"
    assert result["faces"][f"{mesh.name} Cache"] > 0
    assert result["faces"]["strap Cache"] == 9
    # the curve: one curve of its 20 points with its radius (bevel depth x point radius)
    assert result["type"]["curve rope Cache"] == "CURVES"
    assert result["curves"]["curve rope Cache"] == 1
    assert len(result["frames"][str(FIRST)]["curve rope Cache"]) == 20
    expected = skin.tube_radius(curve)
    assert result["radius"]["curve rope Cache"] == pytest.approx([expected, expected])

    assert bpy.ops.xpbd.free_bake(all_objects=True) == {"FINISHED"}
    assert not [o for o in bpy.data.objects if o.name.endswith(" Cache")]
    assert len(bpy.data.cache_files) == 0
    assert not curve.hide_viewport and not mesh.hide_render


USD_READ = """
import json, sys
from pxr import Usd, UsdGeom
stage = Usd.Stage.Open(sys.argv[1])
out = {}
for prim in stage.Traverse():
    if prim.IsA(UsdGeom.Mesh) or prim.IsA(UsdGeom.BasisCurves):
        curves = prim.IsA(UsdGeom.BasisCurves)
        geom = UsdGeom.BasisCurves(prim) if curves else UsdGeom.Mesh(prim)
        points = geom.GetPointsAttr()
        out[str(prim.GetPath())] = {
            "frames": {str(int(t)): [list(p) for p in points.Get(t)]
                       for t in points.GetTimeSamples()},
            "faces": 0 if curves else len(geom.GetFaceVertexCountsAttr().Get() or []),
            "curves": list(geom.GetCurveVertexCountsAttr().Get(1)) if curves else None,
            "widths": [float(w) for w in geom.GetWidthsAttr().Get(1) or []] if curves else None,
            "attributes": [a.GetName() for a in prim.GetAttributes()],
            "xform": [list(r) for r in UsdGeom.Xformable(prim).ComputeLocalToWorldTransform(1)],
        }
print(json.dumps(out))
"""


def test_a_usd_cache_holds_the_live_points_for_an_independent_reader(scene, tmp_path):
    curve, mesh = _scene_with_ropes(scene, tmp_path)
    played = _live(scene, (curve, mesh))
    prims = readers.usd_cache(curve, tmp_path / "ropes.usdc", USD_READ)
    assert len(prims) == 2
    assert prims[curve.xpbd.bake.skin.modifiers["XPBD Cache"].object_path]["curves"] == [20]
    widths = prims[curve.xpbd.bake.skin.modifiers["XPBD Cache"].object_path]["widths"]
    assert widths == pytest.approx([2.0 * skin.tube_radius(curve)] * len(widths), rel=1e-6)
    assert prims[mesh.xpbd.bake.skin.modifiers["XPBD Cache"].object_path]["faces"] > 0
    for obj in (curve, mesh):
        prim = prims[obj.xpbd.bake.skin.modifiers["XPBD Cache"].object_path]
        assert not [a for a in prim["attributes"] if "xpbd" in a]
        for f in (FIRST, 12, LAST):
            got = np.array(prim["frames"][str(f)])[:len(played[f][obj.name])]
            # Blender writes Z up, metres, the cache objects at the origin: world points.
            np.testing.assert_allclose(got, played[f][obj.name], atol=1e-6)
    # Blender plays it too.
    scene.frame_set(12)
    dg = bpy.context.evaluated_depsgraph_get()
    cached = curve.xpbd.bake.skin.evaluated_get(dg)
    buf = np.empty(3 * len(cached.data.points), dtype=np.float32)
    cached.data.attributes["position"].data.foreach_get("vector", buf)
    np.testing.assert_allclose(buf.reshape(-1, 3)[:20], played[12]["curve rope"], atol=1e-6)


def test_a_usd_bake_refuses_mixed_cyclic_and_open_splines_before_simulating(scene, tmp_path,
                                                                           monkeypatch):
    """A curve rope with an open spline and a cyclic one-point spline: USD cannot hold both
    in one curves prim. The bake is refused with a message naming the rope and what to do,
    before any frame is simulated and with nothing written; Alembic bakes it."""
    from xpbd_addon.blender.frame import engine

    scene.frame_start, scene.frame_end = 1, 5
    obj = ropes.curve_rope(scene, "POLY", n=8, name="loop rope")
    dot = obj.data.splines.new("POLY")
    dot.points[0].co = (0.0, 0.5, 0.0, 1.0)
    dot.use_cyclic_u = True
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "loop.blend"))
    steps = []
    original = engine.Run.step
    monkeypatch.setattr(engine.Run, "step",
                        lambda self, *a, **k: steps.append(1) or original(self, *a, **k))
    obj.xpbd.bake.cache_path = str(tmp_path / "loop.usdc")
    bpy.context.view_layer.objects.active = obj
    with pytest.raises(RuntimeError, match="USD cache cannot hold cyclic and open splines"):
        bpy.ops.xpbd.bake(target="CACHE")
    assert not steps, "simulated before refusing"
    assert not (tmp_path / "loop.usdc").exists()
    assert not obj.xpbd.bake.baked and "loop rope Cache" not in bpy.data.objects
    obj.xpbd.bake.cache_path = str(tmp_path / "loop.abc")
    assert bpy.ops.xpbd.bake(target="CACHE") == {"FINISHED"}
