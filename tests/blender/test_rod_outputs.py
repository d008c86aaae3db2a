"""What a rod's twist turns besides its curve's tilt (Physics > XPBD Rope > Stiffness >
Shape & Twist): a cable turned at its plug bakes into bones that roll along it, and its
chain links turn with it; a plain rope's bones and links do not roll."""

from __future__ import annotations

import bpy
import numpy as np
import pytest

from xpbd_addon.blender.frame import sim
from xpbd_addon.blender.write import curve_tilt

from . import readers, ropes
from .test_chain_links import _instances, _select
from .test_rods import _curve, _turned_by_parent, _twisting

LAST = 48


def _bone_x_axes(rig):
    """Every pose bone's X axis, world [B, 3], in the rig's bone order."""
    world = np.array(rig.matrix_world)[:3, :3]
    return np.array([world @ np.array(bone.matrix)[:3, 0] for bone in rig.pose.bones])


def _cable(scene, twist):
    """A straight 0.6 m cable of 13 points along x in no gravity, its first point held by an
    empty ("plug") that turns half a turn about the cable's axis from frame 1 to 25; a rod
    (Twist on) if ``twist``."""
    scene.use_gravity = False
    co = np.zeros((13, 3))
    co[:, 0] = np.linspace(0.0, 0.6, 13)
    obj = _curve(scene, "cable", co)
    if twist:
        _twisting(obj, 0.4)
    _turned_by_parent(scene, obj, "plug", True)
    return obj


@pytest.mark.parametrize("twist", [True, False])
def test_a_rod_turned_at_its_plug_bakes_bones_that_roll(scene, twist):
    """A straight 0.6 m cable along x in no gravity, its first point held by an empty that
    turns half a turn about the cable's axis over a second. As a rod (Twist on) the turn
    travels down it and the baked bones turn with it, the last one by about half a turn; as
    a plain rope nothing turns it, and its bones keep their roll."""
    scene.frame_start, scene.frame_end = 1, LAST
    obj = _cable(scene, twist)
    bpy.context.view_layer.objects.active = obj
    obj.select_set(True)
    assert bpy.ops.xpbd.bake(target="BONES") == {"FINISHED"}
    assert sim.status(obj) is None
    rig = obj.xpbd.bake.rig
    scene.frame_set(1)
    first = _bone_x_axes(rig)
    scene.frame_set(LAST)
    last = _bone_x_axes(rig)
    turned = np.einsum("bi,bi->b", first, last)  # cos of each bone's roll since frame 1
    if twist:
        assert turned[0] < -0.95  # held by the plug: half a turn
        assert turned[-1] < -0.8  # the free end followed
    else:
        assert turned.min() > 0.999


def test_a_rods_chain_links_follow_its_material_frames(scene):
    """The same cable as a rod with Chain Links (a flat ring), caught while the twist the plug
    sends down it is on its way (frame 12: the tip's frame turned differently from the
    first segment's): every link's flat side faces along the rod's material normal at its segment,
    or, every other link, at right angles to it (the links follow the rod's frames, through
    the tilt the rod writes), so the links show the twist where it is."""
    obj = _cable(scene, True)
    obj.xpbd.twist_stiffness = 1e-5  # [N m^2] soft: the twist takes its time down the cable
    bpy.ops.mesh.primitive_torus_add(major_radius=0.03, minor_radius=0.006,
                                     location=(0.0, 0.0, -3.0))
    link = bpy.context.active_object
    link.scale = (1.6, 1.0, 1.0)
    bpy.context.view_layer.update()
    _select(obj, link)
    assert bpy.ops.xpbd.chain_links() == {"FINISHED"}
    for frame in range(1, 13):
        scene.frame_set(frame)
    assert sim.status(obj) is None
    rope = sim.REGISTRY[obj.session_uid]
    normals = curve_tilt.rod_normals(rope.track, rope.cache[12])  # world, per point
    points = ropes.world_points(obj)
    along = np.diff(points, axis=0)
    along /= np.linalg.norm(along, axis=1)[:, None]
    mid = normals[1:] + normals[:-1]
    mid -= np.einsum("si,si->s", mid, along)[:, None] * along
    mid /= np.linalg.norm(mid, axis=1)[:, None]
    # under way: the tip's frame is turned from the first segment's by more than 10 degrees
    assert abs(float(mid[-1] @ mid[0])) < np.cos(np.radians(10.0)), (mid[-1], mid[0])
    matrices = sorted(_instances(obj), key=lambda m: m[0, 3])  # along x: segment order
    flat = np.array([m[:3, 2] / np.linalg.norm(m[:3, 2]) for m in matrices])
    facing = np.abs(np.einsum("si,si->s", flat, mid))
    even, odd = facing[0::2], facing[1::2]
    assert (even.min() > 0.99 and odd.max() < 0.05) or (odd.min() > 0.99 and even.max() < 0.05), \
        facing


USD_CURVES = """
import json, sys
from pxr import Usd, UsdGeom
stage = Usd.Stage.Open(sys.argv[1])
out = {}
for prim in stage.Traverse():
    if prim.IsA(UsdGeom.BasisCurves):
        points = UsdGeom.BasisCurves(prim).GetPointsAttr()
        tilt = prim.GetAttribute("primvars:tilt")
        out[prim.GetName()] = {  # (a value that does not change is written once)
            "points": {t: [list(p) for p in points.Get(t)] for t in range(1, 31)},
            "tilt": ({t: list(tilt.Get(t)) for t in range(1, 31)} if tilt.IsValid() else None),
            "tilt_samples": len(tilt.GetTimeSamples()) if tilt.IsValid() else 0}
print(json.dumps(out))
"""


def test_a_rod_cached_to_usd_carries_its_twist_as_the_curves_tilt(scene, tmp_path):
    """Bake to Cache (USD): a curve rod's Curves carry its twist as a per-point ``tilt``
    [rad] (``primvars:tilt``), read here with usd-core alone. Turning Blender's normal of
    the cached points by it gives the rod's material normal of the live playback at every
    point and frame, which turns half a turn at the cable's end as the plug turns. A plain
    rope baked with it has no tilt. (Alembic caches carry none: Blender's Alembic exporter
    writes no curve attributes.)"""
    cable = _cable(scene, True)
    plain = _cable(scene, False)
    plain.location = (0.0, 0.5, 0.0)
    scene.frame_end = 30
    live = {}
    for frame in range(1, 31):
        scene.frame_set(frame)
        track = sim.REGISTRY[cable.session_uid].track
        live[frame] = curve_tilt.rod_normals(track, track.cache[frame])
    scene.frame_set(1)
    prims = readers.usd_cache(cable, tmp_path / "cable.usda", USD_CURVES)
    rod = next(p for p in prims.values() if p["tilt"] is not None)
    assert sum(p["tilt"] is None for p in prims.values()) == 1  # the plain rope's
    assert rod["tilt_samples"] > 20  # written per frame, as it changes
    for frame in (1, 10, 20, 30):
        points = np.array(rod["points"][str(frame)], dtype=np.float64)
        tilt = np.array(rod["tilt"][str(frame)], dtype=np.float64)
        tangent, normal = curve_tilt.blender_frames(points)
        shown = (np.cos(tilt)[:, None] * normal
                 + np.sin(tilt)[:, None] * np.cross(tangent, normal))
        agree = (shown * live[frame]).sum(axis=1)
        assert agree.min() > 0.99, (frame, agree.min())
    assert float(live[30][-1] @ live[1][-1]) < -0.9  # the end turned half a turn with it
