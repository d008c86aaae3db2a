"""A frame's inputs: every per-frame source read for a rope reaches the core.

A force source is a reader and one entry of ``inputs.ACCELERATIONS`` (docs/development.md);
these tests add the documented example, a constant acceleration field, and check that the
rope moves under it exactly as the core moves it, in playback, in a jump and in a group of
ropes stepped together. A source that is read but dropped on the way to ``core.step`` leaves
the rope hanging still and fails them.
"""

from __future__ import annotations

import dataclasses
import inspect

import numpy as np
import pytest

from xpbd_addon import core
from xpbd_addon.blender.frame import handoff, inputs, sim
from xpbd_addon.core.soft_pins import step_with_soft_pins

from . import ropes

DOWN = np.array([0.0, 0.0, -9.81])
"""The field [m/s^2]: the scene's own gravity, so the rope must fall as under gravity."""

ATOL = 1e-6
"""[m]: the points are read back from float32 mesh data, and the core adds gravity and the
field in its predict (g + a) where under gravity alone it adds g: the last bits may differ."""


def read_constant_field(reading: inputs.Reading) -> np.ndarray | None:
    """The example of docs/development.md: one acceleration [m/s^2] on every particle."""
    return np.broadcast_to(DOWN, reading.rope.rest_xyz.shape)


@pytest.fixture
def constant_field(monkeypatch):
    """``read_constant_field`` added where the sources are gathered (the one line)."""
    monkeypatch.setattr(inputs, "ACCELERATIONS", (*inputs.ACCELERATIONS, read_constant_field))


def _played_under_gravity(scene, objects, last):
    played = ropes.played_points(scene, objects, 1, last)
    sim.clear()
    scene.use_gravity = False  # the field alone pulls now
    return played


def test_a_force_source_moves_the_rope_as_gravity_does(scene, monkeypatch):
    obj = ropes.mesh_rope(scene)
    played = _played_under_gravity(scene, [obj], 12)
    monkeypatch.setattr(inputs, "ACCELERATIONS",
                        (*inputs.ACCELERATIONS, read_constant_field))
    for frame in range(1, 13):
        scene.frame_set(frame)
        np.testing.assert_allclose(ropes.world_points(obj), played[frame][obj.name],
                                   rtol=0.0, atol=ATOL)
    assert np.ptp(played[12][obj.name][:, 2]) > 0.1  # it did fall: the test can fail
    # A jump (the frames replayed) is made with the same inputs as playback.
    sim.clear()
    scene.frame_set(1)
    scene.frame_set(9)
    np.testing.assert_allclose(ropes.world_points(obj), played[9][obj.name], rtol=0.0,
                               atol=ATOL)


def test_a_force_source_reaches_every_rope_stepped_together(scene, constant_field):
    # Plain ropes with equal settings are one batch (one joint Model): the field's rows of
    # each must land on that rope's particles.
    objects = [ropes.mesh_rope(scene, name=f"rope{k}", n=8 + 4 * k) for k in range(3)]
    for k, obj in enumerate(objects):
        obj.location.y = 0.5 * k
    scene.use_gravity = False
    held = ropes.played_points(scene, objects, 1, 10)
    uid = objects[0].session_uid
    assert len(sim.REGISTRY[uid].run.ropes) == 3  # stepped together
    for obj in objects:
        points = held[10][obj.name]
        assert points[1:, 2].max() < -0.05, obj.name  # every rope fell under the field


def test_the_handoff_is_what_the_core_takes():
    """Every per-particle field of the hand-off is a keyword of both ways the core steps."""
    per_particle = {f.name for f in dataclasses.fields(handoff.Handoff)} - {"holds", "held",
                                                                         "notes"}
    for function in (core.step, step_with_soft_pins):
        keywords = set(inspect.signature(function).parameters)
        assert per_particle - {"soft_pins"} <= keywords, function.__name__
    assert "soft_pins" in inspect.signature(step_with_soft_pins).parameters


def test_a_rope_description_is_fixed_once_made(scene):
    obj = ropes.mesh_rope(scene)
    scene.frame_set(2)
    rope = sim.REGISTRY[obj.session_uid]
    with pytest.raises(AttributeError):
        rope.substeps = 3  # what describes a rope does not change after it is made
    with pytest.raises(AttributeError):
        rope.scratch = 0  # no undeclared attributes
    with pytest.raises(AttributeError):
        rope.track.scratch = 0
