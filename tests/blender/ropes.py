"""Builders and probes shared by the Blender tests."""

from __future__ import annotations

import random

import bpy
import numpy as np


def link(scene, name, data):
    obj = bpy.data.objects.new(name, data)
    scene.collection.objects.link(obj)
    bpy.context.view_layer.objects.active = obj
    return obj


def line(n=12, length=1.98, axis=0):
    """n points from the origin along ``axis`` [m] (the test rope: 12 points, 1.98 m)."""
    co = np.zeros((n, 3))
    co[:, axis] = np.linspace(0.0, length, n) * (1 if axis != 2 else -1)
    return co


def mesh_rope(scene, n=12, length=1.98, *, axis=0, pin=(0,), name="mesh_rope"):
    """An edge-chain mesh with vertex group 'pin' holding ``pin``."""
    mesh = bpy.data.meshes.new(name)
    mesh.from_pydata(line(n, length, axis).tolist(), [(i, i + 1) for i in range(n - 1)], [])
    obj = link(scene, name, mesh)
    group = obj.vertex_groups.new(name="pin")
    group.add(list(pin), 1.0, "REPLACE")
    obj.xpbd.pin_group = "pin"
    obj.xpbd.enabled = True
    return obj


def curve_rope(scene, kind="POLY", n=12, length=1.98, *, axis=0, name=None, splines=1):
    """A curve with ``splines`` splines of type ``kind``, first points pinned."""
    curve = bpy.data.curves.new(name or kind.lower(), "CURVE")
    curve.dimensions = "3D"
    for s in range(splines):
        co = line(n, length, axis)
        co[:, 1] = 0.1 * s
        spline = curve.splines.new(kind)
        if kind == "BEZIER":
            spline.bezier_points.add(n - 1)
            flat = co.astype(np.float32).ravel()
            spline.bezier_points.foreach_set("co", flat)
            offset = np.zeros_like(co)
            offset[:, axis] = 0.03
            spline.bezier_points.foreach_set("handle_left", (co - offset).astype(
                np.float32).ravel())
            spline.bezier_points.foreach_set("handle_right", (co + offset).astype(
                np.float32).ravel())
        else:
            spline.points.add(n - 1)
            co4 = np.ones((n, 4), dtype=np.float32)
            co4[:, :3] = co
            spline.points.foreach_set("co", co4.ravel())
            if kind == "NURBS":
                spline.use_endpoint_u = True
    obj = link(scene, name or kind.lower(), curve)
    obj.xpbd.pin_first = True
    obj.xpbd.enabled = True
    return obj


def hung_from_a_spring(scene, anchor, *, damping, compliance=2e-3):
    """A 12-point, 1 m curve rope hanging down from the origin, its first point held by a
    springy attachment (``compliance`` [m/N]) to ``anchor``, no pin; ``damping`` [1/s].
    Returns (rope, attachment)."""
    obj = curve_rope(scene, "POLY", n=12, length=1.0, axis=2)
    obj.xpbd.pin_first = False
    obj.xpbd.damping = damping
    bpy.context.view_layer.objects.active = obj
    bpy.ops.xpbd.attachment_add()
    item = obj.xpbd.attachments[0]
    item.target, item.point, item.compliance = anchor, 0, compliance
    return obj, item


def local_points(obj):
    """Object-space points [m] as stored in the data, float32 [N, 3]."""
    if obj.type == "MESH":
        buf = np.empty(3 * len(obj.data.vertices), dtype=np.float32)
        obj.data.attributes["position"].data.foreach_get("vector", buf)
        return buf.reshape(-1, 3)
    rows = []
    for spline in obj.data.splines:
        if spline.type == "BEZIER":
            buf = np.empty(3 * len(spline.bezier_points), dtype=np.float32)
            spline.bezier_points.foreach_get("co", buf)
            rows.append(buf.reshape(-1, 3))
        else:
            buf = np.empty(4 * len(spline.points), dtype=np.float32)
            spline.points.foreach_get("co", buf)
            rows.append(buf.reshape(-1, 4)[:, :3])
    return np.vstack(rows)


def world_points(obj):
    """World-space points [m], float64 [N, 3]."""
    m = np.array(obj.matrix_world)
    p = local_points(obj).astype(np.float64)
    return p @ m[:3, :3].T + m[:3, 3]


def length(points):
    """Polyline length [m]."""
    return float(np.linalg.norm(np.diff(points, axis=0), axis=1).sum())


def play(scene, first, last):
    for frame in range(first, last + 1):
        scene.frame_set(frame)


def played_points(scene, objects, first, last):
    """{frame: {object name: world points}} of ``objects`` played from ``first`` to ``last``
    in order; the scene is left at ``first``."""
    played = {}
    for frame in range(first, last + 1):
        scene.frame_set(frame)
        played[frame] = {o.name: world_points(o).copy() for o in objects}
    scene.frame_set(first)
    return played


def assert_any_order_equals(scene, obj, played, first, last, seed):
    """Every frame ``first``..``last``, reached in a shuffled order (``seed``) with the frame
    cache emptied first, shows ``obj`` exactly as ``played`` (``played_points``) did."""
    from xpbd_addon.blender.frame import sim

    order = list(range(first, last + 1))
    random.Random(seed).shuffle(order)
    sim.clear()
    for frame in order:
        scene.frame_set(frame)
        np.testing.assert_array_equal(world_points(obj), played[frame][obj.name])


def assert_each_alone_equals(scene, objects, together, first, last):
    """Each of ``objects``, played ``first``..``last`` as the only rope enabled, shows
    exactly what ``together`` (``played_points`` of all of them) showed; all are enabled
    again after."""
    for obj in objects:
        for other in objects:
            other.xpbd.enabled = other is obj
        alone = played_points(scene, [obj], first, last)
        for frame in range(first, last + 1):
            np.testing.assert_array_equal(alone[frame][obj.name], together[frame][obj.name],
                                          err_msg=f"{obj.name} at frame {frame}")
    for other in objects:
        other.xpbd.enabled = True
