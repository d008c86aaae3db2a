"""The safety net's energy test is right about why it stops a rope (issue 32).

It stops a rope whose kinetic and gravitational energy rises above its budget: its start
frame's energy, elastic included, plus the work of forces and fields since. What a user
relies on:

- a rope that something moved (a keyed object swung away and back to where it started) is
  never compared with the energy it had at the start: it used to stop at the frame the
  object came back, "gained energy it cannot have ... with nothing moving it";
- under a force field the test stays on, and counts the field's work: a rope pushed hard by
  a field plays, and a real gain is still stopped, with a message naming the field's work.
"""

from __future__ import annotations

import bpy
import numpy as np
import pytest

from xpbd_addon.blender.frame import sim
from xpbd_addon.blender.frame.checks import energy, energy_anchor

from . import ropes


def _default_rope(air=False):
    """Add > Curve > XPBD Rope at its defaults; without the air unless ``air`` (its drag's
    work changes the budget frame by frame, which the tests of other work leave out)."""
    bpy.ops.xpbd.rope_add()
    rope = bpy.context.object
    rope.xpbd.use_air = air
    return rope


def _play_unstopped(scene, rope, last):
    """Play frames 1 .. ``last``: the safety net stops ``rope`` at none of them."""
    for frame in range(1, last + 1):
        scene.frame_set(frame)
        assert sim.status(rope) is None, (frame, sim.status(rope))


def _status_after_a_gain(scene, rope, frame):
    """The rope's status one frame after ``frame``, as if it had gained 1 kJ by then."""
    sim.REGISTRY[rope.session_uid].track.cache[frame].budget -= 1000.0
    scene.frame_set(frame + 1)
    return sim.status(rope) or ""


def _key_x(obj, keys):
    for frame, x in keys:
        obj.location.x = x
        obj.keyframe_insert("location", index=0, frame=frame)


@pytest.mark.parametrize("swing", [1.0, 3.0])
def test_a_rope_swung_away_and_back_is_not_stopped(scene, swing):
    """The rope's object keyed to move ``swing`` metres in two frames and back by frame 5 (a
    prop swung and put back, a hand back in its rest pose): it then swings hard."""
    scene.frame_set(1)
    rope = _default_rope()
    _key_x(rope, [(1, 0.0), (3, swing), (5, 0.0)])
    start = None
    for frame in range(1, 73):
        scene.frame_set(frame)
        assert sim.status(rope) is None, (frame, sim.status(rope))
        if frame == 5:
            start = rope.evaluated_get(bpy.context.evaluated_depsgraph_get()).matrix_world.copy()
    track = sim.REGISTRY[rope.session_uid].track
    # the object is back where it started, and the rope swings with what the swing gave it
    assert np.allclose(np.array(start.translation), 0.0)
    frame = track.cache[6]
    gravity = np.array(scene.gravity)
    assert energy(track.model, frame.x, frame.v, gravity) > track.cache[1].budget + 1.0
    # while the pins move the budget starts again from each frame's own energy; from the
    # frame the object is still, the test is back on, counted from there
    for f in range(2, 6):
        assert track.cache[f].budget == pytest.approx(
            energy_anchor(track.model, track.cache[f], gravity))
    budgets = np.array([track.cache[f].budget for f in range(5, 73)])
    energies = np.array([energy(track.model, track.cache[f].x, track.cache[f].v, gravity)
                         for f in range(5, 73)])
    assert np.all(budgets == budgets[0])
    assert np.all(energies <= budgets + 1e-6)


def _pushed_rope(scene):
    """The default rope and a Force field 50 m to its side (nearly the same force on every
    point, 5 N, 100 m/s^2 on a point of 50 g): the rope is blown out sideways."""
    scene.frame_set(1)
    rope = _default_rope()
    bpy.ops.object.effector_add(type="FORCE", location=(-50.0, 0.0, 0.0))
    bpy.context.object.field.strength = -5.0
    return rope


def test_under_a_force_field_the_energy_test_counts_the_fields_work(scene):
    rope = _pushed_rope(scene)
    _play_unstopped(scene, rope, 48)
    track = sim.REGISTRY[rope.session_uid].track
    gravity = np.array(scene.gravity)
    budgets = np.array([track.cache[f].budget for f in range(1, 49)])
    energies = np.array([energy(track.model, track.cache[f].x, track.cache[f].v, gravity)
                         for f in range(1, 49)])
    # the test stayed on (a budget every frame), the field did work, and the rope's energy
    # stayed within its start's plus that work
    assert np.all(np.isfinite(budgets))
    assert budgets[-1] - budgets[0] > 20.0, budgets[-1] - budgets[0]
    assert np.all(energies <= budgets + 1e-6)
    assert energies.max() > 20.0  # the field's push, beyond what the margin would allow


def test_under_a_force_field_a_gain_is_still_stopped(scene):
    """As if the rope had gained 1 kJ by frame 10: stopped, and the message names what was
    counted."""
    rope = _pushed_rope(scene)
    for frame in range(1, 11):
        scene.frame_set(frame)
    status = _status_after_a_gain(scene, rope, 10)
    assert "gained energy" in status and "work of forces and fields" in status, status


def _soft_held(scene):
    """A 12-point mesh rope hanging from its first vertex, which a Pin Map holds by a spring
    of 100 N/m (weight 0.5), no hard pin, no damping: it bounces on the spring."""
    obj = ropes.mesh_rope(scene, n=12, length=1.1, axis=2, name="held")
    obj.xpbd.pin_group = ""
    obj.vertex_groups.new(name="hold").add([0], 0.5, "REPLACE")
    obj.xpbd.pin_map = "hold"
    obj.xpbd.pin_map_stiffness = 100.0
    obj.xpbd.damping = 0.0
    return obj


def _budgets_and_energies(scene, obj, last):
    track = sim.REGISTRY[obj.session_uid].track
    gravity = np.array(scene.gravity)
    frames = [track.cache[f] for f in range(1, last + 1)]
    return (np.array([f.budget for f in frames], dtype=float),
            np.array([energy(track.model, f.x, f.v, gravity) for f in frames]))


@pytest.mark.parametrize("moving", [False, True])
def test_on_a_soft_pin_the_energy_test_counts_the_springs(scene, moving):
    """The springs store energy (they stretch as the rope falls into them) and, when the
    object moves, its Pin Map's targets jump from frame to frame and put energy in: both
    counted, so the test stays on, and holds."""
    scene.frame_set(1)
    obj = _soft_held(scene)
    if moving:  # half a metre in two frames, and back: about 12 J into the springs
        _key_x(obj, [(1, 0.0), (3, 0.5), (5, 0.0), (7, 0.5), (9, 0.0)])
    ropes.play(scene, 1, 48)
    assert sim.status(obj) is None, sim.status(obj)
    budgets, energies = _budgets_and_energies(scene, obj, 48)
    assert np.all(np.isfinite(budgets))
    assert np.all(energies <= budgets + 1e-6)
    if moving:  # the jumps of the targets did work
        assert budgets.max() - budgets[0] > 5.0
        assert energies.max() > energies[0] + 5.0


def _box_under(scene, rope, z=-0.4):
    """A 1 m box with Collision physics under the middle of ``rope``, its top ``z`` [m]
    below the rope: the rope falls onto it and drapes over it."""
    bpy.ops.mesh.primitive_cube_add(size=1.0, location=(0.0, 0.0, z - 0.5))
    box = bpy.context.object
    box.modifiers.new("Collision", "COLLISION")
    bpy.context.view_layer.objects.active = rope
    return box


def test_over_a_still_collider_the_energy_test_stays_on(scene):
    """The default rope dropped onto a box that stays where it is: a still collider does no
    work, so the budget is the start's all along, the rope keeps within it, and a gain is
    stopped (as if the rope had gained 1 kJ by frame 30)."""
    scene.frame_set(1)
    rope = _default_rope()
    _box_under(scene, rope)
    _play_unstopped(scene, rope, 30)
    budgets, energies = _budgets_and_energies(scene, rope, 30)
    assert np.all(budgets == budgets[0])
    assert np.all(energies <= budgets + 1e-6)
    assert ropes.world_points(rope)[:, 2].max() > -0.45  # it lies on the box
    status = _status_after_a_gain(scene, rope, 30)
    assert "gained energy" in status, status


def test_after_a_collider_stops_the_energy_test_is_back_on(scene):
    """A box keyed to rise into the hanging rope over frames 1-8 and then stay: while it
    moves the budget starts again each frame from the rope's energy; once it is still, the
    budget is that of the last moving frame, and holds."""
    scene.frame_set(1)
    rope = _default_rope()
    box = _box_under(scene, rope, z=-0.8)
    box.keyframe_insert("location", index=2, frame=1)
    box.location.z += 0.6
    box.keyframe_insert("location", index=2, frame=8)
    bpy.context.view_layer.objects.active = rope
    _play_unstopped(scene, rope, 48)
    budgets, energies = _budgets_and_energies(scene, rope, 48)
    assert np.all(energies <= budgets + 1e-6)
    assert np.all(budgets[8:] == budgets[8])  # frames 9-48: still, counted from frame 8's
    assert not np.all(budgets[1:8] == budgets[0])  # frames 2-8: moving, started again


def test_in_wind_the_energy_test_counts_the_airs_work(scene):
    """The default rope in a Wind field of 20 m/s across it: the air's work (wind pushes,
    drag brakes) joins the budget substep by substep, so the test stays on through the wind, the
    rope keeps within it, and a gain is stopped (as if the rope had gained 1 kJ by frame
    24)."""
    scene.frame_set(1)
    rope = _default_rope(air=True)
    bpy.ops.object.effector_add(type="WIND", rotation=(-np.pi / 2, 0.0, 0.0))  # along +y
    bpy.context.object.field.strength = 20.0
    bpy.context.view_layer.objects.active = rope
    _play_unstopped(scene, rope, 24)
    budgets, energies = _budgets_and_energies(scene, rope, 24)
    assert np.all(energies <= budgets + 1e-6)
    assert budgets.max() > budgets[0] + 0.1  # the wind put energy in, and it was counted
    track = sim.REGISTRY[rope.session_uid].track
    assert all(track.cache[f].model is track.cache[1].model for f in range(1, 25))
    status = _status_after_a_gain(scene, rope, 24)
    assert "gained energy" in status, status


def _counted_every_frame(scene, obj, last):
    """Frames 2 .. ``last`` each carried the budget on (the work counted), none started it
    again from the rope's energy at the frame's end (``energy_anchor``)."""
    track = sim.REGISTRY[obj.session_uid].track
    gravity = np.array(scene.gravity)
    again = [f for f in range(2, last + 1)
             if track.cache[f].budget == energy_anchor(track.model, track.cache[f], gravity)]
    assert not again, f"the budget started again at frames {again}"


def test_on_a_soft_pin_under_a_force_field_the_energy_test_counts_both(scene):
    """A Pin Map's spring and a Force field at once (each was counted alone; together the
    test used to stand aside): the budget counts both every frame, the rope keeps within
    it, and a gain is stopped (as if the rope had gained 1 kJ by frame 36)."""
    scene.frame_set(1)
    obj = _soft_held(scene)
    bpy.ops.object.effector_add(type="FORCE", location=(-50.0, 0.0, 0.0))
    bpy.context.object.field.strength = -5.0
    bpy.context.view_layer.objects.active = obj
    _play_unstopped(scene, obj, 36)
    _counted_every_frame(scene, obj, 36)
    budgets, energies = _budgets_and_energies(scene, obj, 36)
    assert np.all(energies <= budgets + 1e-6)
    assert budgets.max() > budgets[0] + 1.0  # the field did work, and it was counted
    status = _status_after_a_gain(scene, obj, 36)
    assert "gained energy" in status, status


def test_on_a_springy_attachment_pulled_along_the_energy_test_counts_its_work(scene):
    """A rope hanging from a springy attachment (compliance 2 mm/N, no damping) whose empty
    is keyed to swing 40 cm sideways and back every 16 frames: the spring's target moves
    within every frame, and its work, summed substep by substep, joins the budget; the test
    stays on while the empty moves, the rope keeps within it, and a gain is stopped (as if
    the rope had gained 1 kJ by frame 28, the empty moving)."""
    scene.frame_set(1)
    anchor = bpy.data.objects.new("anchor", None)
    scene.collection.objects.link(anchor)
    _key_x(anchor, [(1, 0.0), (9, 0.4), (17, 0.0), (25, 0.4), (33, 0.0), (41, 0.4)])
    obj, _ = ropes.hung_from_a_spring(scene, anchor, damping=0.0)
    _play_unstopped(scene, obj, 28)
    _counted_every_frame(scene, obj, 28)
    budgets, energies = _budgets_and_energies(scene, obj, 28)
    assert np.all(energies <= budgets + 1e-6)
    assert energies.max() > energies[0] + 0.1  # the swinging anchor put energy in
    status = _status_after_a_gain(scene, obj, 28)
    assert "gained energy" in status, status
