"""Compliance and substeps set from the properties act as XPBD says: alpha sets the
stretch (tension * alpha per segment), S only buys accuracy. Gravity comes from the scene."""

from __future__ import annotations

import numpy as np
import pytest

from . import ropes

G = 9.81
N = 12
MASS = 1.0  # kg per point, inverse mass w = 1


def _hang(scene, compliance, substeps, frames=120):
    """The 12-point test rope hanging straight down from its pinned top, settled (heavy damping:
    damping never changes the resting shape)."""
    obj = ropes.curve_rope(scene, "POLY", axis=2, name=f"rope_{compliance}_{substeps}")
    settings = obj.xpbd
    settings.compliance = compliance
    settings.substeps = substeps
    settings.vertex_mass = MASS
    settings.damping = 8.0
    ropes.play(scene, 1, frames)
    return ropes.length(ropes.world_points(obj)) - 1.98


def test_compliance_sets_the_stretch_and_substeps_hardly_change_it(scene):
    alpha = 1e-3
    # Segment k from the bottom carries k points: stretch = alpha * m g * sum(k), k = 1..11.
    predicted = alpha * MASS * G * sum(range(1, N))
    soft5 = _hang(scene, alpha, 5)
    soft20 = _hang(scene, alpha, 20)
    assert soft5 == pytest.approx(predicted, rel=0.1)
    assert soft20 == pytest.approx(predicted, rel=0.1)
    assert abs(soft20 - soft5) < 0.05 * predicted
    stiff = _hang(scene, 1e-7, 20)
    assert stiff < 0.1 * predicted
    assert soft20 > 0.5  # the soft rope visibly sags below its rest length (1.98 m)


def test_gravity_is_the_scenes(scene):
    obj = ropes.curve_rope(scene, "POLY")
    scene.use_gravity = False
    rest = ropes.world_points(obj)
    ropes.play(scene, 1, 10)
    np.testing.assert_allclose(ropes.world_points(obj), rest, atol=1e-6)
    scene.use_gravity = True
    scene.gravity = (0.0, 9.81, 0.0)  # sideways and up: the rope swings towards +y
    ropes.play(scene, 1, 10)
    now = ropes.world_points(obj)
    assert now[-1, 1] > 0.2
    assert abs(now[-1, 2]) < 1e-6
