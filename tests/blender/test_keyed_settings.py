"""Settings that change during the shot: keyframes on ``Object.xpbd``, the winch
(``length_scale``) and pre-roll, with the cache exact."""

from __future__ import annotations

import bpy
import numpy as np
import pytest

from xpbd_addon.blender.bake import action_compat
from xpbd_addon.blender.frame import sim

from . import ropes


def _key(owner, path, frames_values, interpolation=None):
    for frame, value in frames_values:
        setattr(owner, path, value)
        owner.keyframe_insert(path, frame=frame)
    if interpolation is not None:
        for fcurve in action_compat.fcurves_of(owner.id_data):
            for point in fcurve.keyframe_points:
                point.interpolation = interpolation


def _hanging(scene, n=21, name=None):
    obj = ropes.curve_rope(scene, "POLY", n=n, length=2.0, axis=2, name=name)  # down from 0
    obj.xpbd.damping = 2.0
    return obj


def _energy(entry, frame, gravity=9.81):
    """Kinetic energy [J] of the cached frame (free points)."""
    f = entry.cache[frame]
    free = ~entry.pinned
    return 0.5 * entry.settings.vertex_mass * float((f.v[free] ** 2).sum())


def test_length_scale_keyed_shortens_the_rope_stably(scene):
    scene.frame_start, scene.frame_end = 1, 120
    obj = _hanging(scene)
    _key(obj.xpbd, "length_scale", [(1, 1.0), (40, 0.5)], "LINEAR")
    ropes.play(scene, 1, 120)
    entry = sim.REGISTRY[obj.session_uid]
    assert sim.status(obj) is None
    for frame in (1, 20, 40, 80, 120):
        scale = 1.0 - 0.5 * min(frame - 1, 39) / 39
        length = ropes.length(entry.cache[frame].x)
        assert abs(length / (2.0 * scale) - 1.0) < 0.02, (frame, length)
    # stable: once the winch stops the motion dies out, it is not pumped up
    assert _energy(entry, 120) < _energy(entry, 45) + 1e-9
    assert _energy(entry, 120) < 1e-4


def test_compliance_keyed_from_soft_to_stiff_changes_the_stretch(scene):
    scene.frame_start, scene.frame_end = 1, 200
    obj = _hanging(scene, n=11)
    _key(obj.xpbd, "compliance", [(1, 1e-3), (100, 1e-5)], "CONSTANT")
    played = ropes.played_points(scene, [obj], 1, 200)
    mass, n = obj.xpbd.vertex_mass, 11
    rest = 2.0 / (n - 1)
    tension_top = (n - 1) * mass * 9.81  # [N] weight of the free points below the top
    for frame, alpha in ((99, 1e-3), (200, 1e-5)):
        points = played[frame][obj.name]
        stretch = np.linalg.norm(points[1] - points[0]) - rest
        assert abs(stretch / (alpha * tension_top) - 1.0) < 0.1, (frame, stretch)


def test_frames_in_any_order_equal_playback_with_keyed_settings(scene):
    scene.frame_start, scene.frame_end = 1, 60
    obj = _hanging(scene)
    _key(obj.xpbd, "length_scale", [(1, 1.0), (30, 0.7)], "LINEAR")
    _key(obj.xpbd, "damping", [(1, 0.5), (45, 3.0)], "LINEAR")
    _key(obj.xpbd, "pin_last", [(1, False), (50, True)])
    hand = bpy.data.objects.new("hand", None)
    scene.collection.objects.link(hand)
    hand.location = (0.5, 0.0, -1.0)
    hand.keyframe_insert("location", frame=1)
    hand.location = (1.0, 0.5, 0.0)
    hand.keyframe_insert("location", frame=60)
    bpy.context.view_layer.objects.active = obj
    bpy.ops.xpbd.attachment_add()
    item = obj.xpbd.attachments[0]
    item.target, item.point = hand, 10
    _key(item, "enabled", [(1, False), (15, True), (35, False)])
    played = ropes.played_points(scene, [obj], 1, 60)
    assert sim.status(obj) is None
    ropes.assert_any_order_equals(scene, obj, played, 1, 60, seed=3)


def test_editing_a_keyframe_invalidates_exactly_the_frames_after_it(scene):
    scene.frame_start, scene.frame_end = 1, 60
    obj = _hanging(scene)
    _key(obj.xpbd, "damping", [(1, 0.5), (30, 0.5), (45, 3.0)], "LINEAR")
    ropes.play(scene, 1, 60)
    entry = sim.REGISTRY[obj.session_uid]
    before = dict(entry.cache)
    fcurve = next(fc for fc in action_compat.fcurves_of(obj) if fc.data_path == "xpbd.damping")
    point = fcurve.keyframe_points[2]  # the key at 45: frames after 30 change
    point.co.y = 1.0
    point.handle_left.y = point.handle_right.y = 1.0
    fcurve.update()
    scene.frame_set(20)
    entry = sim.REGISTRY[obj.session_uid]
    assert all(entry.cache[k] is before[k] for k in range(1, 31))
    assert not set(entry.cache) & set(range(31, 61))
    ropes.play(scene, 21, 60)
    edited = ropes.world_points(obj).copy()
    sim.clear()
    ropes.play(scene, 1, 60)
    np.testing.assert_array_equal(ropes.world_points(obj), edited)


def test_preroll_starts_the_shot_at_rest(scene):
    scene.frame_start, scene.frame_end = 1, 30
    obj = ropes.curve_rope(scene, "POLY", n=21, length=2.0)  # straight and horizontal
    obj.xpbd.damping = 2.0
    obj.xpbd.preroll = 240
    scene.frame_set(1)
    scene.frame_set(2)
    entry = sim.REGISTRY[obj.session_uid]
    start = entry.cache[1]
    assert sim.status(obj) is None
    assert start.x[-1, 2] < start.x[0, 2] - 1.5  # hanging
    assert np.linalg.norm(start.v, axis=1).max() < 0.01  # [m/s]
    scene.frame_set(1)
    np.testing.assert_allclose(ropes.world_points(obj), start.x, atol=1e-6)  # shown so


def _changing_rope(scene, kind="POLY", mesh=False):
    """A rope with everything of issue 17 keyed: Length Scale, an attachment switched on and
    off, and (curves) its first pin let go half way."""
    scene.frame_start, scene.frame_end = 1, 40
    if mesh:
        obj = ropes.mesh_rope(scene, n=16, length=2.0, axis=2)
        group = obj.vertex_groups.new(name="grab")
        group.add([10], 1.0, "REPLACE")
    else:
        obj = ropes.curve_rope(scene, kind, n=16, length=2.0, axis=2)
        _key(obj.xpbd, "pin_first", [(1, True), (30, False)])
    _key(obj.xpbd, "length_scale", [(1, 1.0), (25, 0.8)], "LINEAR")
    hand = bpy.data.objects.new("hand", None)
    scene.collection.objects.link(hand)
    hand.location = (0.3, 0.0, -1.2)
    hand.keyframe_insert("location", frame=1)
    hand.location = (1.0, 0.4, -0.5)
    hand.keyframe_insert("location", frame=40)
    bpy.context.view_layer.objects.active = obj
    bpy.ops.xpbd.attachment_add()
    item = obj.xpbd.attachments[0]
    item.target = hand
    if mesh:
        item.vertex_group = "grab"
    else:
        item.point = 10
    _key(item, "enabled", [(1, False), (8, True), (22, False)])
    return obj


def _evaluated_world(obj):
    depsgraph = bpy.context.evaluated_depsgraph_get()
    evaluated = obj.evaluated_get(depsgraph)
    if obj.type == "CURVE":
        return ropes.world_points(obj)  # curve keys animate the data itself
    buf = np.empty(3 * len(evaluated.data.vertices), dtype=np.float32)
    evaluated.data.vertices.foreach_get("co", buf)
    matrix = np.array(obj.matrix_world)
    return buf.reshape(-1, 3).astype(np.float64) @ matrix[:3, :3].T + matrix[:3, 3]


@pytest.mark.parametrize("mesh", [False, True], ids=["curve keys", "mesh shape keys"])
def test_the_bake_plays_what_a_changing_rope_played(scene, mesh):
    obj = _changing_rope(scene, mesh=mesh)
    played = ropes.played_points(scene, [obj], 1, 40)
    assert sim.status(obj) is None
    if not mesh:  # the first point, let go at 30, falls: it must be keyed too
        assert played[40][obj.name][0, 2] < played[29][obj.name][0, 2] - 0.05
    bpy.context.view_layer.objects.active = obj
    assert bpy.ops.xpbd.bake() == {"FINISHED"}
    for frame in range(1, 41):
        scene.frame_set(frame)
        np.testing.assert_allclose(_evaluated_world(obj), played[frame][obj.name],
                                   atol=1e-5, err_msg=f"frame {frame}")


def test_the_bone_bake_follows_a_changing_rope(scene):
    curve = _changing_rope(scene)
    played = ropes.played_points(scene, [curve], 1, 40)
    bpy.context.view_layer.objects.active = curve
    assert bpy.ops.xpbd.bake(target="BONES") == {"FINISHED"}
    rig = curve.xpbd.bake.rig
    matrix = np.array(rig.matrix_world)
    for frame in (5, 15, 30, 40):  # grabbed, winched, let go
        scene.frame_set(frame)
        heads = np.array([matrix[:3, :3] @ np.array(b.head) + matrix[:3, 3]
                          for b in rig.pose.bones])  # a bone on every point
        np.testing.assert_allclose(heads, played[frame][curve.name], atol=1e-5,
                                   err_msg=f"frame {frame}")
