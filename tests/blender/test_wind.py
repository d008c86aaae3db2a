"""Blender's force fields and the air on a rope played in Blender (issue 31): a rope added
with Add > Curve > XPBD Rope hangs in a uniform Wind at the angle drag against weight gives;
a field that gives nothing (strength 0, Field Weight 0, out of its reach, outside the rope's
Field Collection) leaves the rope exactly as without it; a keyed strength plays the same in
any frame order; editing a field restarts the frames that depend on it.

The angle (docs/physics.md, "Air drag and wind"): a straight rope of mass mu [kg/m] and
diameter d [m] at theta from the vertical in a horizontal wind W [m/s] feels per length the
drag 0.5 rho C_n d (W cos theta)^2 normal to it, and the weight's normal part mu g sin theta;
they balance at sin theta = (sqrt(1 + 4 K^2) - 1) / (2 K), K = 0.5 rho C_n d W^2 / (mu g).
"""

from __future__ import annotations

import math

import bpy
import numpy as np
import pytest

from xpbd_addon.blender.frame import sim

from . import ropes

FIRST, LAST = 1, 24


def hanging_rope(scene, points=16):
    """A rope added as a user adds one (Add > Curve > XPBD Rope), turned to hang down from
    its first point: a string of 2 m (Material mode, no bending), 0.065 kg/m, radius 1 cm."""
    bpy.ops.xpbd.rope_add(points=points, length=2.0, thickness=0.01)
    obj = bpy.context.active_object
    obj.rotation_euler = (0.0, math.pi / 2, 0.0)  # +x (the rope) to -z
    settings = obj.xpbd
    settings.stiffness_mode = "MATERIAL"
    settings.use_bend_stiffness = False
    settings.frame_end = 1000
    settings.damping = 3.0  # settles sooner; a rope at rest feels no damping
    return obj


def wind(strength, name="Wind", **settings):
    """A Wind field blowing along +x (its Z axis turned to x), uniform (no falloff)."""
    bpy.ops.object.effector_add(type="WIND", location=(0.0, 0.0, 0.0),
                                rotation=(0.0, math.pi / 2, 0.0))
    obj = bpy.context.active_object
    obj.name = name
    obj.field.strength = strength
    for key, value in settings.items():
        setattr(obj.field, key, value)
    return obj


def predicted_angle(rope, strength):
    """theta [rad] of the balance of drag and weight (the module's formula)."""
    s = rope.xpbd
    k = (0.5 * s.air_density * s.drag_normal * 2.0 * s.radius * strength ** 2
         / (s.linear_density * 9.81))
    return math.asin((math.sqrt(1.0 + 4.0 * k * k) - 1.0) / (2.0 * k))


def angle(points):
    """The angle [rad] from the vertical of the chord from the first to the last point."""
    d = points[-1] - points[0]
    return math.atan2(math.hypot(d[0], d[1]), -d[2])


def test_a_new_rope_hangs_in_a_uniform_wind_at_the_angle_drag_and_weight_give(scene):
    rope = hanging_rope(scene)
    assert rope.xpbd.use_air  # a new rope feels the air
    strength = 8.0
    wind(strength)
    ropes.play(scene, FIRST, 150)
    settled = ropes.world_points(rope).copy()
    ropes.play(scene, 151, 160)
    theta = angle(ropes.world_points(rope))
    expected = predicted_angle(rope, strength)
    assert abs(theta - angle(settled)) < 1e-3  # at rest
    assert abs(theta - expected) < 0.05 * expected, (math.degrees(theta),
                                                      math.degrees(expected))
    along = (settled[-1] - settled[0]) / np.linalg.norm(settled[-1] - settled[0])
    off = settled - settled[0]
    off -= np.outer(off @ along, along)
    assert np.linalg.norm(off, axis=1).max() < 0.01  # straight, as the balance assumes


def test_without_air_a_wind_does_not_move_the_rope_and_the_panel_says_why(scene):
    rope = hanging_rope(scene)
    rope.xpbd.use_air = False
    wind(8.0)
    ropes.play(scene, FIRST, 10)
    assert abs(ropes.world_points(rope)[:, 0]).max() < 1e-6
    notes = sim.REGISTRY[rope.session_uid].track.field_notes
    assert any("Air" in note for note in notes)
    # the Fields & Air panel draws its settings and those notes
    from xpbd_addon import panels

    from .test_stiffness import _Layout

    log, labels = [], []
    layout = _Layout(log)
    object.__setattr__(layout, "label", lambda text="", **k: labels.append(text))
    bpy.context.view_layer.objects.active = rope
    panels.XPBD_PT_rope_fields.draw(type("P", (), {"layout": layout})(), bpy.context)
    assert {"effector_collection", "field_weight", "use_air", "air_density", "drag_normal",
            "drag_tangential"} <= set(log)
    assert all(note in labels for note in notes)


def _played(scene, rope):
    sim.clear()
    return ropes.played_points(scene, [rope], FIRST, LAST)


def _nothing(case, scene, rope):
    """A field that gives nothing to ``rope`` (``case``)."""
    if case == "strength 0":
        wind(0.0)
        bpy.ops.object.effector_add(type="FORCE", location=(0.5, 0.0, -1.0))
        bpy.context.active_object.field.strength = 0.0
    elif case == "field weight 0":
        wind(20.0)
        rope.xpbd.field_weight = 0.0
    elif case == "beyond max distance":
        field = wind(20.0, use_max_distance=True, distance_max=1.0)
        field.location = (-5.0, 0.0, 0.0)  # the rope is 5..7 m down-wind of it
        field.field.shape = "POINT"
    elif case == "another collection":
        mine = bpy.data.collections.new("Mine")
        scene.collection.children.link(mine)
        wind(20.0)  # in the scene's collection, not in "Mine"
        rope.xpbd.effector_collection = mine
    else:
        raise AssertionError(case)


@pytest.mark.parametrize("case", ["strength 0", "field weight 0", "beyond max distance",
                                  "another collection"])
def test_a_field_that_gives_nothing_leaves_the_rope_exactly_as_without_it(scene, case):
    rope = hanging_rope(scene)
    rope.rotation_euler = (0.0, math.pi / 3, 0.0)  # swinging: air and motion both act
    without = _played(scene, rope)
    _nothing(case, scene, rope)
    with_field = _played(scene, rope)
    for frame in range(FIRST, LAST + 1):
        np.testing.assert_array_equal(with_field[frame][rope.name], without[frame][rope.name],
                                      err_msg=f"{case}, frame {frame}")
    assert abs(without[LAST][rope.name][-1, 0] - without[FIRST][rope.name][-1, 0]) > 0.01


def test_the_same_field_in_the_rope_s_collection_acts(scene):
    """The control of "another collection": in the Field Collection the wind blows."""
    rope = hanging_rope(scene)
    without = _played(scene, rope)
    mine = bpy.data.collections.new("Mine")
    scene.collection.children.link(mine)
    field = wind(20.0)
    mine.objects.link(field)
    rope.xpbd.effector_collection = mine
    blown = _played(scene, rope)
    assert blown[LAST][rope.name][-1, 0] - without[LAST][rope.name][-1, 0] > 0.1


def test_a_keyed_strength_plays_the_same_in_any_frame_order(scene):
    rope = hanging_rope(scene)
    field = wind(0.0, noise=1.0, seed=7, shape="POINT", falloff_power=1.0)  # x matters
    field.location = (-1.0, 0.0, -1.0)
    for frame, value in ((1, 0.0), (8, 15.0), (16, 2.0), (24, 10.0)):
        field.field.strength = value
        field.field.keyframe_insert("strength", frame=frame)
    played = _played(scene, rope)
    assert played[LAST][rope.name][-1, 0] > 0.05  # the keyed wind blew
    for seed in (1, 2):
        ropes.assert_any_order_equals(scene, rope, played, FIRST, LAST, seed)


def test_editing_a_field_restarts_the_frames_that_depend_on_it(scene):
    """A field's strength, its placement, the Field Collection's members and the Field
    Weight are part of what the cached frames were made with."""
    rope = hanging_rope(scene)
    field = wind(10.0)
    mine = bpy.data.collections.new("Mine")
    scene.collection.children.link(mine)
    mine.objects.link(field)
    key = sim.settings_key(rope, scene)
    edits = (lambda: setattr(field.field, "strength", 11.0),
             lambda: setattr(field, "location", (0.0, 0.0, 1.0)),
             lambda: setattr(rope.xpbd, "effector_collection", mine),
             lambda: mine.objects.unlink(field),
             lambda: setattr(rope.xpbd, "field_weight", 0.5),
             lambda: setattr(rope.xpbd, "drag_normal", 1.0))
    for edit in edits:
        edit()
        bpy.context.view_layer.update()  # the matrix of the moved field
        new = sim.settings_key(rope, scene)
        assert new != key, edit
        key = new


def test_the_safety_net_stands_aside_while_a_field_works_on_the_rope(scene):
    """A Force field far below lifts the hanging rope over its pin: it gains more energy than
    the safety net allows a rope that nothing moves (checks.ENERGY_MARGIN), and is not
    stopped for it."""
    rope = hanging_rope(scene)
    rope.rotation_euler = (0.0, math.pi / 2 - 0.2, 0.0)  # a little off the vertical
    bpy.ops.object.effector_add(type="FORCE", location=(0.0, 0.0, -50.0))
    bpy.context.active_object.field.strength = 0.5  # ~57 m/s^2 up on 8.7 g points
    ropes.play(scene, FIRST, 30)
    assert sim.status(rope) is None
    assert ropes.world_points(rope)[-1, 2] > 1.0  # over the pin


def test_a_keyed_field_weight_plays_the_same_in_any_frame_order(scene):
    rope = hanging_rope(scene)
    wind(12.0)
    for frame, value in ((1, 0.0), (10, 1.0), (20, 0.3)):
        rope.xpbd.field_weight = value
        rope.xpbd.keyframe_insert("field_weight", frame=frame)
    played = _played(scene, rope)
    assert played[LAST][rope.name][-1, 0] > 0.05
    ropes.assert_any_order_equals(scene, rope, played, FIRST, LAST, 3)
