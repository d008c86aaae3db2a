"""The stored rest shape stays out of every file Blender's own exporters write (issue 34):
a mesh rope and a curve rope that have played (so their rest shape is stored) exported from
the live scene with Blender's USD (read back with usd-core), Alembic, FBX (custom properties
on), glTF (custom properties and attributes on), PLY and OBJ exporters: no ``xpbd`` name in
any of them (but the settings Blender 5.3's glTF exporter writes as extras). Before, USD
carried ``primvars:xpbd_rest`` and ``userProperties:xpbd_rest_signature``, Alembic, FBX and
PLY the signature or the attribute. Blender 5.0 and later: 4.2-4.5 keep the rest shape as a
custom property (docs/bake.md)."""

from __future__ import annotations

import json
import subprocess
import sys

import addon_utils
import bpy
import pytest

from xpbd_addon.blender.read import rest

from . import ropes

USD_NAMES = """
import json, sys
from pxr import Usd
stage = Usd.Stage.Open(sys.argv[1])
print(json.dumps({str(p.GetPath()): [a.GetName() for a in p.GetAttributes()]
                  + [r.GetName() for r in p.GetRelationships()]
                  for p in stage.Traverse()}))
"""


def _usd_names(path):
    """{prim path: its attribute and relationship names} as usd-core reads the file."""
    done = subprocess.run([sys.executable, "-c", USD_NAMES, str(path)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def _without_settings(path, suffix):
    """The file's bytes; a glTF's without the rope's settings group among a node's extras:
    Blender 5.3's glTF exporter writes an object's registered settings (``Object.xpbd``:
    enabled, pins) as extras when Custom Properties are on, which 5.0 does not. Those are
    settings the user sees, not the stored shape, whose names must be nowhere."""
    data = path.read_bytes()
    if suffix != "gltf" or bpy.app.version < (5, 3, 0):
        return data
    document = json.loads(data)
    for node in document.get("nodes", []):
        extras = node.get("extras", {})
        settings = extras.pop("xpbd", None)
        assert settings is None or not any("rest" in key for key in settings), settings
    return json.dumps(document).encode()


@pytest.mark.skipif(bpy.app.version < (5, 0, 0),
                    reason="Blender 4.2-4.5 have no system ID properties: the rest shape is a "
                           "custom property of the data there, which USD writes (rest.py, "
                           "docs/bake.md)")
def test_no_exporter_writes_the_stored_rest_shape(scene, tmp_path):
    mesh = ropes.mesh_rope(scene)
    curve = ropes.curve_rope(scene, "POLY")
    curve.location = (0.0, 1.0, 0.0)
    rest_shape = ropes.local_points(mesh).copy()
    ropes.play(scene, 1, 4)
    assert rest.has_rest(mesh) and rest.has_rest(curve)
    for module in ("io_scene_fbx", "io_scene_gltf2"):
        addon_utils.enable(module, default_set=False)
    files = {
        "usda": lambda p: bpy.ops.wm.usd_export(filepath=p),
        "abc": lambda p: bpy.ops.wm.alembic_export(filepath=p),
        "fbx": lambda p: bpy.ops.export_scene.fbx(filepath=p, use_custom_props=True),
        "gltf": lambda p: bpy.ops.export_scene.gltf(
            filepath=p, export_format="GLTF_SEPARATE", export_extras=True,
            export_attributes=True),
        "ply": lambda p: bpy.ops.wm.ply_export(filepath=p),
        "obj": lambda p: bpy.ops.wm.obj_export(filepath=p),
    }
    for suffix, export in files.items():
        path = tmp_path / f"ropes.{suffix}"
        assert export(str(path)) == {"FINISHED"}
        assert b"mesh_rope" in path.read_bytes() or suffix == "ply"  # the rope is in it
        assert b"xpbd" not in _without_settings(path, suffix).lower(), suffix
    names = _usd_names(tmp_path / "ropes.usda")
    assert any(p.endswith("mesh_rope") for p in names), list(names)
    assert not [n for ns in names.values() for n in ns if "xpbd" in n.lower()]
    # and the rest shape is still there and goes back exactly
    bpy.context.view_layer.objects.active = mesh
    assert bpy.ops.xpbd.reset() == {"FINISHED"}
    assert (ropes.local_points(mesh) == rest_shape).all()
