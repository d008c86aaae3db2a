"""Tearing (``Object.xpbd.tear_force``): a segment pulled harder than Tear Force breaks."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import bpy
import numpy as np
import pytest

from xpbd_addon.blender.frame import sim
from xpbd_addon.blender.write import tears as tear

from . import ropes

N = 16


def _hanging(scene, mesh):
    """A rope of N points hanging straight down from its pinned first point."""
    scene.frame_start, scene.frame_end = 1, 30
    obj = (ropes.mesh_rope(scene, n=N, length=1.5, axis=2) if mesh
           else ropes.curve_rope(scene, "POLY", n=N, length=1.5, axis=2))
    weight = (N - 1) * obj.xpbd.vertex_mass * 9.81  # [N] what the top segment holds
    # below the hanging weight, above what the second segment holds ((N - 2) points)
    obj.xpbd.tear_force = weight - 0.5 * obj.xpbd.vertex_mass * 9.81
    return obj


def _evaluated_edges(obj):
    depsgraph = bpy.context.evaluated_depsgraph_get()
    return len(obj.evaluated_get(depsgraph).data.edges)


def test_a_mesh_rope_parts_at_the_top_and_the_piece_falls(scene):
    obj = _hanging(scene, mesh=True)
    played = ropes.played_points(scene, [obj], 1, 30)
    assert sim.status(obj) is None
    top = played[30][obj.name][0]
    np.testing.assert_allclose(top, played[1][obj.name][0], atol=1e-9)  # the pin stays
    # the lower piece falls freely: ~ g t^2 / 2 in 29 frames (1.2 s) = 7 m
    drop = played[1][obj.name][1:, 2].mean() - played[30][obj.name][1:, 2].mean()
    assert drop > 5.0
    # the rest of the piece stays in one piece: its segments keep their length
    piece = played[30][obj.name][1:]
    np.testing.assert_allclose(np.linalg.norm(np.diff(piece, axis=0), axis=1), 1.5 / (N - 1),
                               rtol=0.01)
    scene.frame_set(1)
    assert _evaluated_edges(obj) == N - 1  # whole at the start
    ropes.play(scene, 2, 30)
    assert _evaluated_edges(obj) == N - 2  # the top edge is gone
    entry = sim.REGISTRY[obj.session_uid]
    assert entry.cache[30].torn.tolist() == [True] + [False] * (N - 2)


def test_a_curve_rope_shows_the_gap_and_gets_its_radii_back(scene):
    obj = _hanging(scene, mesh=False)
    radii = tear.curve_radii(obj.data, sim.geometry.build_layout(obj))
    ropes.play(scene, 1, 30)
    shown = tear.curve_radii(obj.data, sim.REGISTRY[obj.session_uid].layout)
    assert shown[0] == shown[1] == 0.0 and (shown[2:] == radii[2:]).all()
    assert ropes.world_points(obj)[1:, 2].max() < -3.0  # fallen
    scene.frame_set(1)
    np.testing.assert_array_equal(tear.curve_radii(obj.data, sim.REGISTRY[
        obj.session_uid].layout), radii)


def test_without_tear_force_nothing_tears(scene):
    obj = _hanging(scene, mesh=True)
    obj.xpbd.tear_force = 0.0
    ropes.play(scene, 1, 30)
    assert ropes.world_points(obj)[:, 2].min() > -1.6
    assert obj.modifiers.get(tear.MODIFIER) is None


FRESH = """
import json, sys
import bpy
bpy.ops.wm.open_mainfile(filepath=sys.argv[1])
assert bpy.types.Object.bl_rna.properties.get("xpbd") is None
scene, result = bpy.context.scene, {}
for name in ("mesh_rope", "poly"):
    obj = bpy.data.objects[name]
    for f in (5, 30):
        scene.frame_set(f)
        ev = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
        if obj.type == "MESH":
            result[f"{name} {f}"] = len(ev.data.edges)
        else:
            result[f"{name} {f}"] = [p.radius for p in obj.data.splines[0].points][:3]
print(json.dumps(result))
"""


def _saved_and_read_without_the_addon(blend, script):
    """Save the file as ``blend``, open it in a new Blender without the add-on, run
    ``script`` there and return the JSON it prints last."""
    import json

    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(script), str(blend)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_bake_plays_the_tears_without_the_addon(scene, tmp_path):
    mesh = _hanging(scene, mesh=True)
    curve = _hanging(scene, mesh=False)
    curve.location.x = 1.0
    ropes.play(scene, 1, 30)
    tore = min(k for k, f in sim.REGISTRY[mesh.session_uid].cache.items() if f.torn is not None)
    assert tore < 5  # the bake's frame 5 shows the tear, frame 30 too
    scene.frame_set(1)
    assert bpy.ops.xpbd.bake_all() == {"FINISHED"}
    result = _saved_and_read_without_the_addon(tmp_path / "torn.blend", FRESH)
    assert result["mesh_rope 5"] == result["mesh_rope 30"] == N - 2
    assert result["poly 30"][:2] == [0.0, 0.0] and result["poly 30"][2] > 0.0


def test_frames_in_any_order_equal_playback_with_tears_and_a_breaking_grip(scene):
    obj = _hanging(scene, mesh=True)
    obj.xpbd.tear_force *= 1.2  # holds the rope, gives way under the jerk of the grip
    anchor = bpy.data.objects.new("anchor", None)
    scene.collection.objects.link(anchor)
    anchor.location = (0.0, 0.0, -1.5)
    anchor.keyframe_insert("location", frame=1)
    anchor.location = (0.8, 0.0, -2.5)
    anchor.keyframe_insert("location", frame=12)
    group = obj.vertex_groups.new(name="end")
    group.add([N - 1], 1.0, "REPLACE")
    bpy.context.view_layer.objects.active = obj
    bpy.ops.xpbd.attachment_add()
    item = obj.xpbd.attachments[0]
    item.target, item.vertex_group = anchor, "end"
    item.break_force = 3.0 * obj.xpbd.tear_force
    played = ropes.played_points(scene, [obj], 1, 30)
    assert sim.status(obj) is None
    ropes.play(scene, 1, 30)
    final = sim.REGISTRY[obj.session_uid].cache[30]
    assert final.torn is not None and final.holds[0].broken  # both happened
    ropes.assert_any_order_equals(scene, obj, played, 1, 30, seed=5)


FRESH_CACHE = """
import json, sys
import bpy, numpy as np
bpy.ops.wm.open_mainfile(filepath=sys.argv[1])
assert bpy.types.Object.bl_rna.properties.get("xpbd") is None
scene, result = bpy.context.scene, {}
for f in (1, 30, 12):  # the tear, then back before it is not needed: any order
    scene.frame_set(f)
    dg = bpy.context.evaluated_depsgraph_get()
    for name in ("mesh_rope Cache", "poly Cache"):
        ev = bpy.data.objects[name].evaluated_get(dg)
        if ev.type == "CURVES":
            count, shape = len(ev.data.points), [c.points_length for c in ev.data.curves]
            radius = np.empty(count, dtype=np.float32)
            ev.data.attributes["radius"].data.foreach_get("value", radius)
            result[f"{name} {f} radius"] = radius.tolist()
        else:
            count, shape = len(ev.data.vertices), len(ev.data.polygons)
        co = np.empty(3 * count, dtype=np.float32)
        ev.data.attributes["position"].data.foreach_get("vector", co)
        result[f"{name} {f}"] = {"shape": shape, "points": co.reshape(-1, 3).tolist()}
print(json.dumps(result))
"""


def test_a_cache_bake_cuts_torn_ropes_for_real(scene, tmp_path):
    """In an Alembic cache, read by a Blender without the add-on, a torn curve is two curves
    and a torn edge mesh's tube lacks the faces of the torn segment, from the frame of the
    tear; before it they are whole, and the points are where live playback had them."""
    from xpbd_addon.blender.bake import skin

    mesh = _hanging(scene, mesh=True)
    curve = _hanging(scene, mesh=False)
    curve.location.x = 1.0
    ropes.play(scene, 1, 30)
    tore = min(k for k, f in sim.REGISTRY[curve.session_uid].cache.items()
               if f.torn is not None)
    assert 1 < tore < 12
    played = ropes.played_points(scene, [mesh, curve], 1, 30)
    scene.frame_set(1)
    for obj in (mesh, curve):  # the file is the first baked rope's
        obj.xpbd.bake.cache_path = str(tmp_path / "torn.abc")
    bpy.context.view_layer.objects.active = curve
    assert bpy.ops.xpbd.bake_all(target="CACHE") == {"FINISHED"}
    result = _saved_and_read_without_the_addon(tmp_path / "torn_cache.blend", FRESH_CACHE)
    whole, torn = (N - 1) * skin.TUBE_SIDES, (N - 2) * skin.TUBE_SIDES
    assert result["poly Cache 1"]["shape"] == [N]
    assert result["mesh_rope Cache 1"]["shape"] == whole
    modelled = skin.tube_radius(curve)  # the curve's radius, not the gap it shows live
    for f in (1, 12, 30):
        assert result[f"poly Cache {f} radius"] == pytest.approx([modelled] * N)
    for f in (12, 30):
        assert result[f"poly Cache {f}"]["shape"] == [1, N - 1]  # cut below the top point
        assert result[f"mesh_rope Cache {f}"]["shape"] == torn
        for obj in (curve, mesh):
            got = np.array(result[f"{obj.name} Cache {f}"]["points"])[:N]
            np.testing.assert_allclose(got, played[f][obj.name], atol=1e-6)
