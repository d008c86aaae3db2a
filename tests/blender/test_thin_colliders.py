"""Ropes hang on thin things, as a user makes them (issue 28): Add > Curve > XPBD Rope at its
defaults (20 points over 2 m, radius 1 cm, 10 substeps), first pin off, dropped onto a pipe,
a table's edge and a hook with Blender's Collision physics at its defaults (friction 5, i.e.
mu 0.05). Each segment is 10.5 cm long: only segment contacts hold it on anything thinner."""

from __future__ import annotations

import math

import bpy
import numpy as np
import pytest

from . import ropes

R = 0.01  # the default rope's radius [m] (Add > Curve > XPBD Rope: Thickness 1 cm)


def _default_rope(scene, location, substeps=10):
    """Add > Curve > XPBD Rope at ``location`` (the rope runs 2 m along +x from there), its
    first pin off."""
    scene.cursor.location = location
    assert bpy.ops.xpbd.rope_add() == {"FINISHED"}
    obj = bpy.context.object
    obj.xpbd.pin_first = False
    obj.xpbd.substeps = substeps
    assert math.isclose(obj.xpbd.radius, R, rel_tol=1e-6) and len(ropes.world_points(obj)) == 20
    return obj


def _collision(obj):
    """Blender's Collision physics at its defaults."""
    obj.modifiers.new("Collision", "COLLISION")
    return obj


def _pipe(radius, vertices=32, friction=None):
    """A horizontal pipe along y through the origin (a cylinder of ``radius`` [m]); its
    Collision friction on Blender's 0-80 scale (None: Blender's default, 5 = mu 0.05)."""
    bpy.ops.mesh.primitive_cylinder_add(vertices=vertices, radius=radius, depth=1.0,
                                        rotation=(math.pi / 2, 0.0, 0.0))
    pipe = _collision(bpy.context.object)
    if friction is not None:
        pipe.collision.cloth_friction = friction
    return pipe


def _distance_to_y_axis(points):
    """(M,) distance [m] of each segment of the polyline ``points`` to the y axis."""
    p = points[:, [0, 2]]
    a, b = p[:-1], p[1:]
    d = b - a
    t = np.clip(-(a * d).sum(axis=1) / np.maximum((d * d).sum(axis=1), 1e-30), 0.0, 1.0)
    return np.linalg.norm(a + t[:, None] * d, axis=1)


@pytest.mark.parametrize("substeps", [5, 10, 20])
@pytest.mark.parametrize("radius", [0.025, 0.01, 0.005])
def test_the_default_rope_hangs_over_a_thin_pipe(scene, radius, substeps):
    """Dropped from 30 cm across the middle of a steel pipe (friction 30: mu 0.3): it never
    cuts into the pipe by more than 15 % of its radius (it rests 7 % in), hangs over it with
    both halves down after 3 s, and rests there (the point of the rope that lies on the pipe
    moves along the rope by less than 2 cm from 3 s to 5 s: it does not creep off)."""
    _pipe(radius, friction=30.0)
    rope = _default_rope(scene, (-1.0, 0.0, 0.3), substeps)
    inscribed = radius * math.cos(math.pi / 32)
    centres = {}
    for frame in range(1, 122):
        scene.frame_set(frame)
        points = ropes.world_points(rope)
        assert _distance_to_y_axis(points).min() > inscribed + 0.85 * R, frame
        if frame in (73, 121):
            # on the pipe, both halves hanging down (they may still swing: damping 0.1 /s)
            assert _distance_to_y_axis(points).min() < radius + R + 0.05, frame
            assert points[:10, 2].min() < -0.3 and points[10:, 2].min() < -0.3, frame
            # where along the rope it crosses over the pipe's top (x = 0, above the pipe)
            a, b = points[:-1], points[1:]
            over = np.flatnonzero((a[:, 0] * b[:, 0] <= 0.0) & (a[:, 2] + b[:, 2] > 0.0))
            assert len(over) == 1, frame
            i = int(over[0])
            along = a[i, 0] / (a[i, 0] - b[i, 0]) if a[i, 0] != b[i, 0] else 0.5
            centres[frame] = (i + along) * 2.0 / 19
    assert abs(centres[121] - centres[73]) < 0.02


@pytest.mark.parametrize("radius", [0.025, 0.005])
def test_the_default_rope_hangs_over_a_pipe_at_blenders_default_friction(scene, radius):
    """The same with the pipe's Collision at its defaults (mu 0.05): after 3 s it hangs over
    the pipe, both halves down. (At so little friction its swinging halves can slide it
    over the pipe later: docs/blender-usage.md, Collisions.)"""
    _pipe(radius)
    rope = _default_rope(scene, (-1.0, 0.0, 0.3))
    inscribed = radius * math.cos(math.pi / 32)
    for frame in range(1, 74):
        scene.frame_set(frame)
        assert _distance_to_y_axis(ropes.world_points(rope)).min() > inscribed + 0.85 * R
    points = ropes.world_points(rope)
    assert _distance_to_y_axis(points).min() < radius + R + 0.05
    assert points[:10, 2].min() < -0.3 and points[10:, 2].min() < -0.3


def test_a_rope_pulled_over_a_table_edge_wraps_it(scene):
    """A 20-point rope lying on a table (a 1 m cube with Collision), half of it over the
    edge, slides off over the edge: no point of its surface goes deeper into the table than
    a tenth of its radius (its points alone let the 10.5 cm segments cut the corner)."""
    bpy.ops.mesh.primitive_cube_add(size=1.0, location=(0.0, 0.0, -0.5))
    _collision(bpy.context.object)
    rope = _default_rope(scene, (-0.5, 0.0, R + 1e-4))
    s = np.linspace(0.0, 1.0, 41)[None, :, None]
    for frame in range(1, 49):
        scene.frame_set(frame)
        x = ropes.world_points(rope)
        p = x[:-1, None, :] + s * (x[1:] - x[:-1])[:, None, :]
        q = np.abs(p - np.array([0.0, 0.0, -0.5])) - 0.5  # the table's signed distance
        clear = np.linalg.norm(np.maximum(q, 0.0), axis=-1) + np.minimum(q.max(axis=-1), 0.0)
        assert clear.min() > 0.9 * R, (frame, clear.min())
    assert ropes.world_points(rope)[-1, 2] < -0.3  # the free half went over the edge


def test_a_hook_holds_a_rope_by_its_middle(scene):
    """A hook (a torus of 1 cm tube radius, 5 cm across, standing up like a ring across the
    rope) holds the default rope dropped across it by its middle, both halves down."""
    bpy.ops.mesh.primitive_torus_add(major_radius=0.05, minor_radius=0.01,
                                     rotation=(0.0, math.pi / 2, 0.0))
    _collision(bpy.context.object)
    rope = _default_rope(scene, (-1.0, 0.0, 0.15))
    for frame in range(1, 74):
        scene.frame_set(frame)
    points = ropes.world_points(rope)
    assert points[0, 2] < -0.4 and points[-1, 2] < -0.4
    top = points[np.argmax(points[:, 2])]
    assert abs(top[0]) < 0.1 and 0.06 < top[2] < 0.12, top
