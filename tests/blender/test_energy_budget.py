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
from xpbd_addon.blender.frame.checks import energy

from . import ropes


def _default_rope():
    bpy.ops.xpbd.rope_add()  # Add > Curve > XPBD Rope at its defaults
    return bpy.context.object


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
    # no budget from the first frame the pin moved: no energy test until the next start
    assert track.cache[1].budget is not None
    assert all(track.cache[f].budget is None for f in range(2, 73))


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
    for frame in range(1, 49):
        scene.frame_set(frame)
        assert sim.status(rope) is None, (frame, sim.status(rope))
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
    sim.REGISTRY[rope.session_uid].track.cache[10].budget -= 1000.0
    scene.frame_set(11)
    status = sim.status(rope) or ""
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
