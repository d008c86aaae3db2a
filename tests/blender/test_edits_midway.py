"""Edits a user makes while a rope simulates, odd transforms and settings, and the safety net
(issue 19, cases 4, 5, 8 and 9): a clear message naming the object or the setting, nothing
of the user's overwritten, and the message gone once the cause is."""

from __future__ import annotations

import bmesh
import bpy
import numpy as np

from xpbd_addon.blender.frame import sim

from . import ropes


def test_a_vertex_deleted_and_one_added_is_noticed(scene):
    """Same vertex and edge counts, other edges: the old signature (counts) missed it."""
    obj = ropes.mesh_rope(scene)
    ropes.play(scene, 1, 5)
    bm = bmesh.new()
    bm.from_mesh(obj.data)
    bm.verts.ensure_lookup_table()
    bm.verts.remove(bm.verts[11])
    new = bm.verts.new((3.0, 3.0, 3.0))
    bm.verts.ensure_lookup_table()
    bm.edges.new((bm.verts[5], new))
    bm.to_mesh(obj.data)
    bm.free()
    assert (len(obj.data.vertices), len(obj.data.edges)) == (12, 11)
    ropes.play(scene, 6, 8)
    assert "topology changed" in sim.status(obj)
    assert tuple(ropes.local_points(obj)[11]) == (3.0, 3.0, 3.0)
    bpy.context.view_layer.objects.active = obj
    bpy.ops.xpbd.reset()
    ropes.play(scene, 1, 4)
    assert sim.status(obj) is None


def test_shape_keys_added_while_simulating_stop_the_rope_until_removed(scene):
    obj = ropes.mesh_rope(scene)
    ropes.play(scene, 1, 5)
    obj.shape_key_add(name="Basis")
    ropes.play(scene, 6, 7)
    assert "has shape keys" in sim.status(obj)
    obj.shape_key_clear()
    ropes.play(scene, 8, 9)
    assert sim.status(obj) is None


def test_a_tiny_uniform_scale_simulates(scene):
    obj = ropes.mesh_rope(scene)
    obj.scale = (1e-4, 1e-4, 1e-4)
    ropes.play(scene, 1, 6)
    assert sim.status(obj) is None
    assert ropes.world_points(obj)[-1, 2] < -1e-6


def test_a_zero_scale_message_clears_when_the_scale_is_fixed(scene):
    obj = ropes.mesh_rope(scene)
    ropes.play(scene, 1, 3)
    obj.scale = (1.0, 0.0, 1.0)
    ropes.play(scene, 4, 5)
    assert "scale of zero" in sim.status(obj)
    obj.scale = (1.0, 1.0, 1.0)
    ropes.play(scene, 6, 7)  # no Reset
    assert sim.status(obj) is None


def test_a_huge_ground_height_names_the_setting(scene):
    obj = ropes.mesh_rope(scene)
    obj.xpbd.use_ground = True
    obj.xpbd.ground_height = 1e7
    ropes.play(scene, 1, 3)
    message = sim.status(obj)
    assert "Ground Height" in message and "Internal error" not in message
    obj.xpbd.ground_height = -1.0
    ropes.play(scene, 1, 3)
    assert sim.status(obj) is None


def test_a_long_rope_plays_within_its_reach(scene):
    """5,000 points at the defaults with 10 substeps: the previous solve blew up within a few
    frames (a point 422 m from its pin), which the safety net turned into a message. The
    stable solve plays it: no message, nothing non-finite, nothing beyond the rope's reach."""
    bpy.ops.xpbd.rope_add(points=5000)
    obj = bpy.context.active_object
    obj.xpbd.substeps = 10
    for frame in range(1, 40):
        scene.frame_set(frame)
        points = ropes.world_points(obj)
        assert np.isfinite(points).all()
        # Within the rope's reach: 2 m, stretched by alpha T. 5,000 segments of 1e-6 m/N
        # each under the weight below them (250 kg in all) hang 6.1 m longer at rest, and
        # a fall can stretch them twice that. The previous solve reached 422 m.
        segments = len(points) - 1
        weight = obj.xpbd.vertex_mass * 9.81 * segments
        reach = 2.0 + 2.0 * obj.xpbd.compliance * weight * segments / 2.0
        assert np.linalg.norm(points - points[0], axis=1).max() < reach
        assert sim.status(obj) is None, frame


def test_the_safety_net_refuses_a_rope_that_gained_energy(scene):
    from xpbd_addon.blender.frame import checks

    obj = ropes.mesh_rope(scene)
    ropes.play(scene, 1, 2)
    rope = sim.REGISTRY[obj.session_uid]
    start = rope.cache[1]
    gravity = rope.gravity
    e0 = checks.energy(rope.model, start.x, start.v, gravity)
    fast = start.v.copy()
    fast[1:] = (0.0, 0.0, 30.0)  # 30 m/s upwards out of nowhere
    checks.check_energy(rope.model, start.x, "test", v=start.v, gravity=gravity,
                        start_energy=e0)
    try:
        checks.check_energy(rope.model, start.x, "test", v=fast, gravity=gravity,
                            start_energy=e0)
    except sim.RopeError as exc:
        assert "gained energy" in str(exc)
    else:
        raise AssertionError("30 m/s from rest was not noticed")
    stretched = start.x.copy()
    stretched[-1] += (500.0, 0.0, 0.0)
    try:
        checks.check_energy(rope.model, stretched, "test")
    except sim.RopeError as exc:
        assert "times its rest length" in str(exc)
    else:
        raise AssertionError("a segment 500 m long was not noticed")


def test_a_nan_pin_target_message_clears_when_the_target_is_fixed(scene):
    obj = ropes.curve_rope(scene, "POLY")
    target = bpy.data.objects.new("handle", None)
    scene.collection.objects.link(target)
    hook = obj.modifiers.new("Hook", "HOOK")
    hook.object = target
    hook.vertex_indices_set([0])
    ropes.play(scene, 1, 3)
    before = ropes.local_points(obj).copy()
    target.location = (float("nan"), 0.0, 0.0)
    ropes.play(scene, 4, 5)
    assert "pin target is NaN" in sim.status(obj)
    assert np.array_equal(ropes.local_points(obj), before)
    target.location = (0.0, 0.0, 0.0)
    ropes.play(scene, 6, 7)  # no Reset
    assert sim.status(obj) is None
