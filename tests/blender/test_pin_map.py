"""The Pin Map (``Object.xpbd.pin_map``): how firmly each point is held where the object
puts it, as Blender's Soft Body goal: weight 1 pins, 0 leaves free, a weight w between holds
the point by a spring of ``pin_map_stiffness`` * w / (1 - w) [N/m]."""

from __future__ import annotations

import numpy as np
import pytest

from xpbd_addon.blender.frame import sim

from . import ropes

POINTS, MASS, STIFFNESS = 12, 0.05, 100.0  # [count], [kg] a point, [N/m] at weight 0.5


def _hanging(scene, weight, *, location=(0.0, 0.0, 0.0)):
    """A 12-point mesh rope hanging down from its first vertex, which the vertex group
    'hold' holds with ``weight``; no Pin Group."""
    obj = ropes.mesh_rope(scene, n=POINTS, length=1.1, axis=2, name="held")
    obj.xpbd.pin_group = ""
    obj.vertex_groups.new(name="hold").add([0], weight, "REPLACE")
    obj.location = location
    s = obj.xpbd
    s.pin_map = "hold"
    s.pin_map_stiffness = STIFFNESS
    s.vertex_mass = MASS
    s.damping = 5.0  # settles within the 4 s played
    return obj


@pytest.mark.parametrize("weight", [0.5, 0.8])
def test_a_point_held_by_weight_hangs_below_its_place_by_the_weight_over_the_spring(
        scene, weight):
    obj = _hanging(scene, weight, location=(0.3, -0.2, 1.0))
    ropes.play(scene, 1, 96)
    assert sim.status(obj) is None
    top = ropes.world_points(obj)[0]
    spring = STIFFNESS * weight / (1.0 - weight)  # [N/m]
    sag = POINTS * MASS * 9.81 / spring  # the spring holds the whole rope [m]
    np.testing.assert_allclose(top[:2], (0.3, -0.2), atol=1e-4)  # where the object puts it
    assert 1.0 - top[2] == pytest.approx(sag, rel=0.01)


def test_weight_one_pins_and_weight_zero_leaves_free(scene):
    pinned = _hanging(scene, 1.0)
    free = _hanging(scene, 0.0, location=(1.0, 0.0, 0.0))
    ropes.play(scene, 1, 24)
    np.testing.assert_allclose(ropes.world_points(pinned)[0], (0.0, 0.0, 0.0), atol=1e-6)
    assert ropes.world_points(free)[0][2] < -1.0  # fell (at 5 /s of damping: 1.5 m in 1 s)
