"""Rods in Blender (Physics > XPBD Rope > Stiffness > Shape & Twist): a curl modelled with a
stiff bending keeps its shape, a rod turns with its parent, a wire with plasticity stays
bent, and a rod's frames reached in any order equal playback."""

from __future__ import annotations

import bpy
import numpy as np
import pytest

from xpbd_addon.blender.frame import sim

from . import ropes


def _curve(scene, name, co):
    """A poly curve through the points ``co`` (n, 3), first point pinned, Material stiffness
    with bending."""
    points = np.ones((len(co), 4), dtype=np.float32)
    points[:, :3] = co
    curve = bpy.data.curves.new(name, "CURVE")
    curve.dimensions = "3D"
    spline = curve.splines.new("POLY")
    spline.points.add(len(co) - 1)
    spline.points.foreach_set("co", points.ravel())
    obj = ropes.link(scene, name, curve)
    s = obj.xpbd
    s.enabled = True
    s.pin_first = True
    s.stiffness_mode = "MATERIAL"
    s.use_bend_stiffness = True
    return obj


def _arc(points, turn, length, plane=(0, 2)):
    """Points along an arc of ``length`` [m] turning through ``turn`` [rad], starting along
    +x at the origin, bending towards the second axis of ``plane``."""
    angle = np.linspace(0.0, turn, points)
    radius = length / turn
    co = np.zeros((points, 3))
    co[:, plane[0]] = radius * np.sin(angle)
    co[:, plane[1]] = radius * (1.0 - np.cos(angle))
    return co


def _twisting(obj, twist_stiffness):
    """``obj`` with Twist on (GJ ``twist_stiffness`` [N m^2]), EI 0.5 N m^2, damping 3 /s."""
    obj.xpbd.bend_stiffness = 0.5
    obj.xpbd.use_twist = True
    obj.xpbd.twist_stiffness = twist_stiffness
    obj.xpbd.damping = 3.0
    return obj


def _turned_by_parent(scene, obj, name, turned):
    """Parent ``obj`` to a new empty ``name`` keyed to turn 180 degrees about x from frame 1
    to 25 (``turned``) or to stay."""
    parent = bpy.data.objects.new(name, None)
    scene.collection.objects.link(parent)
    obj.parent = parent
    parent.rotation_mode = "XYZ"
    parent.keyframe_insert("rotation_euler", frame=1)
    parent.rotation_euler = (np.pi if turned else 0.0, 0.0, 0.0)
    parent.keyframe_insert("rotation_euler", frame=25)
    return parent


def _turns(points):
    """The angle [rad] the polyline turns at each interior point."""
    d = np.diff(points, axis=0)
    d /= np.linalg.norm(d, axis=1)[:, None]
    return np.arccos(np.clip((d[1:] * d[:-1]).sum(axis=1), -1.0, 1.0))


def _keeps_or_loses_its_bend(scene, obj, rest, straightened):
    """Play ``obj`` 2 s: with Rest Shape Modelled every point keeps its modelled bend within
    10 % of the largest; Straight leaves less than ``straightened`` of the total bend. No
    message either way."""
    modelled = _turns(ropes.world_points(obj))
    ropes.play(scene, 1, 48)
    assert sim.status(obj) is None
    now = _turns(ropes.world_points(obj))
    if rest == "MODELLED":
        assert np.abs(now - modelled).max() < 0.1 * modelled.max()
    else:
        assert now.sum() < straightened * modelled.sum()


@pytest.mark.parametrize("rest", ["MODELLED", "STRAIGHT"])
def test_a_modelled_curl_keeps_its_shape_under_gravity(scene, rest):
    """A tail modelled as a curl of 241 degrees (24 points, 1 m), hung by its first point,
    EI = 5 N m^2: with the modelled rest shape every point keeps its bend within 10 % after
    2 s; with the straight one it uncoils."""
    obj = _curve(scene, "tail", _arc(24, np.radians(241.0), 1.0))
    obj.location = (0.0, 0.0, 1.5)
    obj.xpbd.bend_stiffness = 5.0
    obj.xpbd.bend_rest = rest
    obj.xpbd.substeps = 20
    _keeps_or_loses_its_bend(scene, obj, rest, straightened=0.5)


@pytest.mark.parametrize("turned", [True, False])
def test_turning_the_parent_turns_the_rod(scene, turned):
    """A hook (curling up through 180 degrees) hung by its first point from an empty, in no
    gravity; the empty turned 180 degrees about the hook's first segment over a second turns
    the hook over (its tip from above to below, the hook's shape kept; held by its first
    point only, it settles tilted about it by up to 25 degrees); an empty that stays leaves
    it up."""
    scene.use_gravity = False
    co = _arc(30, np.pi, 0.6)
    obj = _twisting(_curve(scene, "hook", co), 0.4)
    _turned_by_parent(scene, obj, "hand", turned)
    top = ropes.world_points(obj)[-1, 2]
    assert top > 0.3
    ropes.play(scene, 1, 48)
    assert sim.status(obj) is None
    points = ropes.world_points(obj)
    if turned:
        assert points[-1, 2] < -0.85 * top
        assert np.linalg.norm(points[-1] - points[0]) == pytest.approx(top, rel=0.01)
    else:
        assert points[-1, 2] == pytest.approx(top, abs=1e-3)


@pytest.mark.parametrize("plastic", [True, False])
def test_a_wire_bent_past_its_yield_stays_bent(scene, plastic):
    """A wire modelled sagging (an arc of 1 m turning through 90 degrees) with a straight rest
    shape, held at both ends for 2 s: bending pulls it straight, the pins keep it bent. Its
    last point let go, it hangs from the first for 3 s: with Plasticity (yield at a curvature
    of 0.5 1/m) it keeps most of its bend; without, it hangs straight."""
    co = _arc(21, np.pi / 2, 1.0)
    co[:, 2] = -co[:, 2]
    obj = _curve(scene, "wire", co)
    obj.location = (0.0, 0.0, 2.0)
    s = obj.xpbd
    s.bend_stiffness = 0.3
    s.bend_rest = "STRAIGHT"
    s.damping = 2.0
    s.use_plasticity = plastic
    s.plastic_yield = 0.5
    s.plastic_creep = 20.0
    s.pin_last = True
    s.keyframe_insert("pin_last", frame=48)
    s.pin_last = False
    s.keyframe_insert("pin_last", frame=49)
    modelled = _turns(ropes.world_points(obj)).sum()
    ropes.play(scene, 1, 120)
    assert sim.status(obj) is None
    kept = _turns(ropes.world_points(obj)).sum()
    if plastic:
        assert kept > 0.5 * modelled
    else:
        assert kept < 0.05 * modelled


def test_a_rods_frames_in_any_order_equal_playback(scene):
    """A curl out of its plane (it twists as it falls): every frame reached in a shuffled
    order from an emptied cache equals playback bit for bit (the rod's frames and twist are
    part of each cached frame)."""
    co = _arc(16, np.radians(200.0), 0.6)
    co[:, 1] = np.linspace(0.0, 0.15, 16)
    obj = _curve(scene, "cord", co)
    obj.location = (0.0, 0.0, 1.0)
    obj.xpbd.bend_stiffness = 0.05
    played = ropes.played_points(scene, [obj], 1, 30)
    ropes.assert_any_order_equals(scene, obj, played, 1, 30, seed=32)


def test_rods_and_ropes_simulated_together_keep_their_own_rest_shapes(scene):
    """Two curls colliding with each other (one run, one joint Model), one a rod and one a
    rope (Rest Shape: Straight), and two rods batched together: each keeps its own
    behaviour, the rods their curls, the rope uncoiling."""
    objects = []
    for k, (name, rest, collide) in enumerate((("rod_a", "MODELLED", True),
                                               ("rope_b", "STRAIGHT", True),
                                               ("rod_c", "MODELLED", False),
                                               ("rod_d", "MODELLED", False))):
        obj = _curve(scene, name, _arc(20, np.radians(200.0), 0.8))
        obj.location = (0.0, 0.5 * k, 1.5)
        obj.xpbd.bend_stiffness = 2.0
        obj.xpbd.bend_rest = rest
        obj.xpbd.use_self_collision = collide
        obj.xpbd.radius = 0.01
        objects.append(obj)
    modelled = {o.name: _turns(ropes.world_points(o)).sum() for o in objects}
    ropes.play(scene, 1, 48)
    runs = {id(sim.REGISTRY[o.session_uid].track.run) for o in objects}
    assert len(runs) == 2  # the colliding pair, and the batch
    for obj in objects:
        assert sim.status(obj) is None
        kept = _turns(ropes.world_points(obj)).sum() / modelled[obj.name]
        if obj.xpbd.bend_rest == "MODELLED":
            assert kept > 0.95, obj.name
        else:
            assert kept < 0.05, obj.name


@pytest.mark.parametrize("rest", ["MODELLED", "STRAIGHT"])
def test_the_default_rope_bent_into_a_hook_keeps_it(scene, rest):
    """Add > Curve > XPBD Rope at its defaults, its points moved into a hook (a quarter turn
    then straight up, as a user would edit it), Per Point bending on with compliance 0.001
    1/(N m): the modelled hook keeps every point's bend within 10 % over 2 s, and the rope
    neither stops nor gains; with Rest Shape: Straight it hangs straight."""
    assert bpy.ops.xpbd.rope_add() == {"FINISHED"}
    obj = bpy.context.active_object
    spline = obj.data.splines[0]
    count = len(spline.points)
    co = np.ones((count, 4), dtype=np.float32)
    co[:, :3] = _arc(count, np.pi / 2, 2.0) - [0.0, 0.0, 1.0]
    spline.points.foreach_set("co", co.ravel())
    obj.xpbd.use_bending = True
    obj.xpbd.bending_compliance = 0.001
    obj.xpbd.bend_rest = rest
    _keeps_or_loses_its_bend(scene, obj, rest, straightened=0.2)
