"""The export operators export the selected ropes only (issue 34): with two ropes baked to
bones and one of them selected (its rig, its skin, or the rope object), ``xpbd.export_gltf``
and ``xpbd.export_fbx`` write that rope alone, read back with pygltflib and ufbx; with none
selected they report an error, cancel and write no file. Before, the selection filter
(``{uid} | {...} & picked``, read by Python as ``{uid} | ({...} & picked)``) was never empty:
every baked rope was exported and the error could never show."""

from __future__ import annotations

import bpy
import pytest

from . import readers, ropes

FIRST, LAST = 1, 6


def _two_baked(scene):
    """Two mesh ropes (8 points each) baked to bones over frames 1..6, nothing selected."""
    scene.frame_start, scene.frame_end = FIRST, LAST
    a = ropes.mesh_rope(scene, n=8, length=0.7, name="rope_a")
    b = ropes.mesh_rope(scene, n=8, length=0.7, name="rope_b")
    b.location = (0.0, 1.0, 0.0)
    assert bpy.ops.xpbd.bake_all(target="BONES") == {"FINISHED"}
    _select()
    return a, b


def _select(*objects):
    view_layer = bpy.context.view_layer
    for o in view_layer.objects:
        o.select_set(False)
    for o in objects:
        o.select_set(True)
    view_layer.objects.active = objects[0] if objects else None


def _bones_in(path):
    """The bone (node) names of the rope bones in an exported file, by independent readers."""
    if path.suffix == ".glb":
        names = readers.Gltf(path).names
    else:
        names = readers.fbx_read(path, [], [])["nodes"]
    return {n.split(".")[0] for n in names if n.startswith("rope_") and "." in n}


@pytest.mark.parametrize("operator, suffix", [("export_gltf", ".glb"), ("export_fbx", ".fbx")])
@pytest.mark.parametrize("picked", ["rig", "skin", "rope"])
def test_only_the_selected_rope_is_exported(scene, tmp_path, operator, suffix, picked):
    a, b = _two_baked(scene)
    what = {"rig": b.xpbd.bake.rig, "skin": b.xpbd.bake.skin, "rope": b}[picked]
    _select(what)  # (the hidden rope object is only active, not selected)
    view_layer = bpy.context.view_layer
    before = [o for o in view_layer.objects if o.select_get()]
    path = tmp_path / f"one{suffix}"
    assert getattr(bpy.ops.xpbd, operator)(filepath=str(path)) == {"FINISHED"}
    assert _bones_in(path) == {"rope_b"}
    # the selection is as it was
    assert [o for o in view_layer.objects if o.select_get()] == before
    assert view_layer.objects.active == what
    assert (scene.frame_start, scene.frame_end) == (FIRST, LAST)  # the take's range undone
    path = tmp_path / f"both{suffix}"
    assert getattr(bpy.ops.xpbd, operator)(filepath=str(path), all_objects=True) == {
        "FINISHED"}
    assert _bones_in(path) == {"rope_a", "rope_b"}


@pytest.mark.parametrize("operator, suffix", [("export_gltf", ".glb"), ("export_fbx", ".fbx")])
def test_nothing_selected_is_an_error_and_writes_nothing(scene, tmp_path, operator, suffix):
    _two_baked(scene)
    path = tmp_path / f"none{suffix}"
    with pytest.raises(RuntimeError, match="No rope baked to bones is selected"):
        getattr(bpy.ops.xpbd, operator)(filepath=str(path))
    assert not path.exists()
