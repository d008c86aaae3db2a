"""Chain links (``xpbd.chain_links``): a link object instanced on every segment of a curve
rope, every other one turned 90 degrees about the rope, following the rope live and once
baked in a Blender without the add-on."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import bpy
import numpy as np
import pytest

from xpbd_addon.blender.write.links import MODIFIER

from . import ropes


def _rope_and_link(scene):
    """Add > Curve > XPBD Rope at its defaults, and a link: a torus 1.6 times longer along x
    than across, lying in the xy plane (thinnest along z)."""
    assert bpy.ops.xpbd.rope_add() == {"FINISHED"}
    rope = bpy.context.active_object
    bpy.ops.mesh.primitive_torus_add(major_radius=0.035, minor_radius=0.008,
                                     location=(0.0, 0.0, -3.0))
    link = bpy.context.active_object
    link.scale = (1.6, 1.0, 1.0)
    bpy.context.view_layer.update()
    return rope, link


def _select(active, *others):
    for obj in bpy.context.view_layer.objects:
        obj.select_set(False)
    for obj in (active, *others):
        obj.select_set(True)
    bpy.context.view_layer.objects.active = active


def _instances(rope):
    """World matrices [4, 4] of the instances the rope's modifier makes, in segment order."""
    depsgraph = bpy.context.evaluated_depsgraph_get()
    found = [np.array(i.matrix_world) for i in depsgraph.object_instances
             if i.is_instance and i.parent is not None and i.parent.original == rope]
    return found


def _check_along(rope, matrices):
    """Each link at its segment's midpoint, long axis (local x) along the segment, and
    consecutive links turned about 90 degrees to each other (their flat sides' normals,
    local z, at right angles up to the bend between their segments)."""
    points = ropes.world_points(rope)
    midpoints = 0.5 * (points[1:] + points[:-1])
    assert len(matrices) == len(midpoints)
    centres = np.array([m[:3, 3] for m in matrices])
    order = [int(np.argmin(np.linalg.norm(centres - p, axis=1))) for p in midpoints]
    assert sorted(order) == list(range(len(midpoints)))
    placed = centres[order]
    np.testing.assert_allclose(placed, midpoints, atol=1e-5)
    segments = points[1:] - points[:-1]
    segments /= np.linalg.norm(segments, axis=1)[:, None]
    long = np.array([matrices[k][:3, 0] for k in order])
    long /= np.linalg.norm(long, axis=1)[:, None]
    assert np.all(np.abs((long * segments).sum(axis=1)) > 0.999)
    flat = np.array([matrices[k][:3, 2] for k in order])
    flat /= np.linalg.norm(flat, axis=1)[:, None]
    bend = np.arccos(np.clip((segments[1:] * segments[:-1]).sum(axis=1), -1.0, 1.0))
    turned = np.abs((flat[1:] * flat[:-1]).sum(axis=1))
    assert np.all(turned <= np.sin(bend) + 1e-3), (turned, bend)


def test_a_link_sits_on_every_segment_turned_90_degrees_from_the_next(scene):
    rope, link = _rope_and_link(scene)
    _select(rope, link)
    assert bpy.ops.xpbd.chain_links() == {"FINISHED"}
    assert rope.modifiers[MODIFIER].type == "NODES"
    _check_along(rope, _instances(rope))  # straight: exactly at right angles


def test_the_links_follow_the_swinging_rope(scene):
    rope, link = _rope_and_link(scene)
    _select(rope, link)
    bpy.ops.xpbd.chain_links()
    start = ropes.world_points(rope).copy()
    ropes.play(scene, 1, 20)
    assert np.linalg.norm(ropes.world_points(rope) - start, axis=1).max() > 0.5  # it swung
    _check_along(rope, _instances(rope))


def test_bad_selections_are_refused_and_change_nothing(scene):
    rope, link = _rope_and_link(scene)
    _select(rope)
    with pytest.raises(RuntimeError, match="Select the link object"):
        bpy.ops.xpbd.chain_links()
    empty = bpy.data.objects.new("empty", None)
    scene.collection.objects.link(empty)
    _select(rope, empty)
    with pytest.raises(RuntimeError, match="has no size"):
        bpy.ops.xpbd.chain_links()
    mesh = ropes.mesh_rope(scene)
    _select(mesh, link)
    with pytest.raises(RuntimeError, match="need a curve rope"):
        bpy.ops.xpbd.chain_links()
    assert MODIFIER not in rope.modifiers and MODIFIER not in mesh.modifiers


_FRESH = textwrap.dedent("""
    import bpy, json, sys
    import numpy as np
    bpy.ops.wm.open_mainfile(filepath=sys.argv[-2])
    scene = bpy.context.scene
    scene.frame_set(20)
    depsgraph = bpy.context.evaluated_depsgraph_get()
    rope = bpy.data.objects[sys.argv[-1]]
    found = [np.array(i.matrix_world)[:3, 3].tolist() for i in depsgraph.object_instances
             if i.is_instance and i.parent is not None and i.parent.original == rope]
    print("CENTRES" + json.dumps(found))
""")


def test_baked_links_play_in_a_blender_without_the_addon(scene, tmp_path):
    rope, link = _rope_and_link(scene)
    _select(rope, link)
    bpy.ops.xpbd.chain_links()
    ropes.play(scene, 1, 20)
    live = np.array([m[:3, 3] for m in _instances(rope)])
    scene.frame_set(1)
    _select(rope)
    assert bpy.ops.xpbd.bake(target="KEYS") == {"FINISHED"}
    path = tmp_path / "links.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    script = tmp_path / "fresh.py"
    script.write_text(_FRESH)
    # a new Python with bpy and no add-on registered: only Blender's own modifiers play
    out = subprocess.run([sys.executable, str(script), str(path), rope.name],
                         capture_output=True, text=True, timeout=300, check=True).stdout
    baked = np.array(json.loads(out.split("CENTRES", 1)[1].strip().splitlines()[0]))
    assert len(baked) == len(live) == 19
    gap = np.array([np.linalg.norm(baked - p, axis=1).min() for p in live])
    assert gap.max() < 1e-4
