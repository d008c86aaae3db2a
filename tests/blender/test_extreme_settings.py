"""Every number setting set from a script to the ends of what Python can give it (inf and
-inf for a float, which Blender stores as the property's limits, 3.4e38 where it has none;
+-2**31 for an int): the rope plays, or stops with its message, which names the setting.
Never an Internal error, never "the simulation blew up" (the guard must be right about why),
never a non-finite point. Found this way: a Length Scale of 3.4e38 (rest lengths of 1e38 m),
a Twist Stiffness of 3.4e38 (the twist solve overflowed into NaN), a Simulation Start of
-2**31 (two billion frames replayed). The settings come from the schema, so a new one is
tried too."""

from __future__ import annotations

import numpy as np
import pytest

from xpbd_addon.blender import schema
from xpbd_addon.blender.frame import sim

from . import ropes

SLOW = {"preroll"}
"""Settings whose largest value is honoured as asked, at a cost a test cannot pay: a pre-roll
of 100,000 frames settles the rope for 100,000 frames (8 s for a small rope)"""

CASES = [(s.name, value) for s in schema.SETTINGS if s.kind == schema.FLOAT
         for value in (float("inf"), -float("inf"))]
CASES += [(s.name, value) for s in schema.SETTINGS if s.kind == schema.INT
          and s.name not in SLOW for value in (2**31 - 1, -2**31)]


@pytest.mark.parametrize("name, value", CASES)
def test_a_number_setting_at_its_extreme_plays_or_says_why(scene, name, value):
    obj = ropes.curve_rope(scene, "POLY")
    settings = obj.xpbd
    settings.use_ground = True
    settings.use_self_collision = True
    for other, wanted in schema.BY_NAME[name].when:  # (so that it matters)
        setattr(settings, other, wanted)
    setattr(settings, name, value)
    ropes.play(scene, 1, 4)
    status = sim.status(obj)
    assert np.isfinite(ropes.local_points(obj)).all()
    if status is not None:
        assert "Internal error" not in status and "blew up" not in status, status
        noun = schema.BY_NAME[name].check
        label = (noun.noun if noun is not None and noun.noun else
                 name.replace("_", " ").capitalize())
        assert (label.lower() in status.lower() or "frame" in status.lower()), status


@pytest.mark.parametrize("gravity", [float("inf"), -float("inf"), float("nan")])
def test_a_scene_gravity_set_to_inf_from_a_script_is_named(scene, gravity):
    """inf arrives as 3.4e38 m/s^2, which is finite: the rope was thrown past the world's
    coordinates in one frame and the panel said the solve blew up."""
    obj = ropes.curve_rope(scene, "POLY")
    before = ropes.local_points(obj).copy()
    scene.gravity = (0.0, 0.0, gravity)
    ropes.play(scene, 1, 3)
    assert "Scene gravity" in (sim.status(obj) or ""), sim.status(obj)
    assert np.array_equal(ropes.local_points(obj), before)
