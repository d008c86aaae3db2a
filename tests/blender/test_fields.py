"""Blender's force fields on a rope's point, side by side with Blender's own particles.

A particle (Newtonian, Euler integrator, gravity weight 0, mass m) and a free rope point of
the same mass: each frame the point is put where the particle is (Blender's Euler moves a
particle with its old velocity, the rope with its new one, so left alone they would part by
a dt^2 per frame), its acceleration is the fields' force over its mass
(``fields.evaluate``, ``fields.accelerations``) and the core steps it a frame.
Blender's particles take 0.04 s per frame (``ParticleSettings.timestep``), so the point
does too. Their accelerations agree within 2 % frame by frame (in fact to float32 rounding:
the formulas are Blender's). Wind is the exception by design: for the rope it is the air's
velocity (its drag acts normal to the segments, ``core.air``), which is the velocity a
Blender particle drifts at in the same Wind with its default flow of 1. A Drag field acts on
a moving point only: the particle is born moving (its object-aligned start velocity).
"""

from __future__ import annotations

import bpy
import numpy as np
import pytest

from xpbd_addon.blender.read import fields
from xpbd_addon.core import Model, step

PARTICLE_DT = 0.04
MASS = 2.0
START = (1.0, 0.5, 0.2)


def emitter(scene, at=START, mass=MASS, velocity=(0.0, 0.0, 0.0)):
    """One particle born at ``at`` on frame 1 with ``velocity`` [m/s] (Blender's object-
    aligned start velocity), moved by the fields alone."""
    mesh = bpy.data.meshes.new("emitter")
    mesh.from_pydata([at], [], [])
    obj = bpy.data.objects.new("emitter", mesh)
    scene.collection.objects.link(obj)
    settings = obj.modifiers.new("particles", "PARTICLE_SYSTEM").particle_system.settings
    settings.count, settings.frame_start, settings.frame_end = 1, 1, 1
    settings.lifetime, settings.emit_from = 500, "VERT"
    settings.use_emit_random, settings.normal_factor = False, 0.0
    settings.physics_type, settings.integrator = "NEWTON", "EULER"
    settings.mass = mass
    settings.effector_weights.gravity = 0.0
    settings.use_rotations = False
    settings.object_align_factor = velocity
    return obj


def field(kind, location=(0.0, 0.0, 0.0), rotation=(0.0, 0.0, 0.0), **settings):
    bpy.ops.object.effector_add(type=kind, location=location, rotation=rotation)
    obj = bpy.context.active_object
    for name, value in settings.items():
        setattr(obj.field, name, value)
    return obj


def side_by_side(scene, field_objects, frames=8, mass=MASS, velocity=(0.0, 0.0, 0.0)):
    """(Blender's particle accelerations, the rope point's) [m/s^2], (frames - 1, 3) each:
    every frame the point is put where the particle is, at its velocity, and stepped one
    frame by the core with the fields' acceleration; the velocity change of each over the
    frame, over its length."""
    particle = emitter(scene, mass=mass, velocity=velocity)
    point = Model([START], np.zeros((0, 2), dtype=np.int64), [1.0 / mass], 0.0)
    state = point.state()
    theirs, ours = [], []
    last = None
    for frame in range(1, frames + 1):
        scene.frame_set(frame)
        depsgraph = bpy.context.evaluated_depsgraph_get()
        p = particle.evaluated_get(depsgraph).particle_systems[0].particles[0]
        x = np.array(p.location, dtype=np.float64)
        v = np.array(p.velocity, dtype=np.float64)
        if last is not None:
            theirs.append((v - last) / PARTICLE_DT)
        last = v
        if frame < frames:
            state.x[0], state.v[0] = x, v
            sources = fields.read_fields(o.evaluated_get(depsgraph) for o in field_objects)
            sample = fields.evaluate(sources, state.x, state.v, frame)
            step(point, state, PARTICLE_DT, 1, gravity=(0.0, 0.0, 0.0),
                 accelerations=fields.accelerations(sample, point.particle_inv_mass))
            ours.append((state.v[0] - v) / PARTICLE_DT)
    return np.array(theirs), np.array(ours)


CASES = {
    "force": ("FORCE", {"strength": 3.0}),
    "force, flow, power 2, min distance": ("FORCE", {"strength": -4.0, "flow": 0.7,
                                                     "falloff_power": 2.0,
                                                     "use_min_distance": True,
                                                     "distance_min": 0.3}),
    "force, gravity falloff": ("FORCE", {"strength": 2.0, "use_gravity_falloff": True}),
    "vortex, plane": ("VORTEX", {"strength": 1.5}),
    "vortex, point": ("VORTEX", {"strength": 1.5, "shape": "POINT"}),
    "harmonic, rest length, damping": ("HARMONIC", {"strength": 4.0, "rest_length": 0.4,
                                                    "harmonic_damping": 0.3}),
    "turbulence": ("TURBULENCE", {"strength": 5.0, "size": 0.7}),
    "turbulence, global, flow": ("TURBULENCE", {"strength": 5.0, "size": 0.7, "flow": 0.3,
                                                "use_global_coords": True}),
    "force, line, tube": ("FORCE", {"strength": 3.0, "shape": "LINE", "falloff_type": "TUBE",
                                    "falloff_power": 1.0, "use_radial_max": True,
                                    "radial_max": 5.0, "radial_falloff": 1.5}),
    "force, plane, cone": ("FORCE", {"strength": 30.0, "shape": "PLANE",
                                     "falloff_type": "CONE", "falloff_power": 0.5,
                                     "radial_falloff": 1.0}),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_rope_point_accelerates_as_blenders_particle_in_the_same_field(scene, case):
    kind, settings = CASES[case]
    obj = field(kind, location=(0.1, -0.2, -0.3), rotation=(0.3, 0.2, 0.0), **settings)
    theirs, ours = side_by_side(scene, [obj])
    assert np.abs(theirs).max() > 0.05  # the field does push
    scale = np.linalg.norm(theirs, axis=1)[:, None]
    assert np.all(np.abs(ours - theirs) <= 0.02 * scale + 1e-6), (ours, theirs)


@pytest.mark.parametrize("settings", [{"linear_drag": 0.6, "quadratic_drag": 0.0},
                                      {"linear_drag": 0.0, "quadratic_drag": 0.5}])
def test_a_moving_rope_point_is_slowed_as_blenders_particle_in_a_drag_field(scene, settings):
    obj = field("DRAG", location=(0.1, -0.2, -0.3), **settings)
    theirs, ours = side_by_side(scene, [obj], velocity=(2.0, -1.0, 1.0))
    assert np.abs(theirs).max() > 0.05  # the field does slow it
    scale = np.linalg.norm(theirs, axis=1)[:, None]
    assert np.all(np.abs(ours - theirs) <= 0.02 * scale + 1e-6), (ours, theirs)


def test_a_drag_field_pushes_against_the_velocity_as_blenders_code_says():
    """A Drag field acts on velocity only; a particle born at rest never feels it, so its
    formula is checked directly. Blender stores the |v|^2 factor in ``linear_drag`` and the
    |v| factor in ``quadratic_drag`` (the labels are the other way round from the code)."""
    sources = [fields.FieldSource("drag", "DRAG", np.eye(4), strength=0.8, damping=0.4)]
    v = np.array([[1.5, 0.0, 0.0], [0.0, -3.0, 4.0]])
    force = fields.evaluate(sources, np.zeros((2, 3)), v, 1).force
    # Blender's effect.cc: -|v| (linear_drag |v| + quadratic_drag) v / |v|
    speed = np.linalg.norm(v, axis=1)[:, None]
    np.testing.assert_allclose(force, -(0.8 * speed + 0.4) * v)


def test_wind_is_the_air_velocity_blenders_particle_drifts_at(scene):
    """A particle in Wind of strength 3 and flow 1 (Blender's default for a new Wind)
    relaxes to 3 m/s along the field's Z axis: the rope's air moves at that velocity."""
    obj = field("WIND", rotation=(np.pi / 2, 0.0, 0.3), strength=3.0)
    assert obj.field.flow == pytest.approx(1.0)
    particle = emitter(scene, mass=0.25)
    for frame in range(1, 60):
        scene.frame_set(frame)
    depsgraph = bpy.context.evaluated_depsgraph_get()
    p = particle.evaluated_get(depsgraph).particle_systems[0].particles[0]
    sample = fields.evaluate(fields.read_fields([obj.evaluated_get(depsgraph)]),
                             np.array([p.location]), np.zeros((1, 3)), 59)
    np.testing.assert_allclose(sample.wind[0], np.array(p.velocity), rtol=0.02, atol=0.02)
    assert not sample.force.any()  # wind acts through the air's drag only


def test_fields_beyond_their_reach_or_of_strength_zero_give_exactly_nothing(scene):
    x = np.array([[0.0, 0.0, 5.0], [0.0, 0.0, 0.5]])
    v = np.ones((2, 3))
    far = field("FORCE", strength=10.0, use_max_distance=True, distance_max=1.0, flow=1.0)
    off = field("VORTEX", strength=0.0)
    above = field("WIND", strength=5.0, z_direction="NEGATIVE")
    depsgraph = bpy.context.evaluated_depsgraph_get()
    sample = fields.evaluate(fields.read_fields([far.evaluated_get(depsgraph)]), x[:1], v[:1],
                             1)
    assert not sample.force.any() and not sample.wind.any()
    sample = fields.evaluate(fields.read_fields([o.evaluated_get(depsgraph) for o in
                                                 (off, above)]), x, np.zeros((2, 3)), 1)
    assert not sample.force.any() and not sample.wind.any()
    assert not fields.accelerations(sample, np.ones(2), 0.0).any()


def test_noise_and_turbulence_are_the_same_at_a_frame_however_it_is_reached():
    sources = [fields.FieldSource("gusts", "WIND", np.eye(4), strength=4.0, noise=2.0,
                                  seed=7),
               fields.FieldSource("turbulence", "TURBULENCE", np.eye(4), strength=2.0,
                                  size=0.5, noise=1.0, seed=3)]
    x = np.random.default_rng(0).random((20, 3))
    v = np.zeros((20, 3))
    at = {frame: fields.evaluate(sources, x, v, frame) for frame in (5, 3, 9)}
    again = fields.evaluate(sources, x, v, 3)
    assert np.array_equal(again.force, at[3].force) and np.array_equal(again.wind, at[3].wind)
    assert not np.array_equal(at[5].wind, at[3].wind)  # the gusts change frame to frame


def test_unsupported_fields_are_named():
    sources = [fields.FieldSource("magnet", "MAGNET", np.eye(4)),
               fields.FieldSource("skin", "FORCE", np.eye(4), shape="SURFACE")]
    sample = fields.evaluate(sources, np.zeros((1, 3)), np.zeros((1, 3)), 1)
    assert len(sample.skipped) == 2 and "magnet" in sample.skipped[0]
    assert not sample.force.any()


@pytest.mark.parametrize("kind, setting, says", [
    ("FORCE", "strength", "NaN or infinite forces"),
    ("HARMONIC", "rest_length", "more than 1e+09 m/s^2"),
])
def test_a_field_set_to_inf_from_a_script_stops_the_rope_saying_so(scene, kind, setting, says):
    """A Harmonic field's rest length set to inf arrives as Blender's float maximum (3.4e38
    m): finite forces of that size threw the rope past the world's coordinates, and the panel
    said the solve blew up and asked for more substeps. The field is named as the cause, and
    nothing is written."""
    from xpbd_addon.blender.frame import sim

    from . import ropes

    rope = ropes.curve_rope(scene, "POLY")
    before = ropes.local_points(rope).copy()
    field(kind, location=(0.5, 0.0, 0.3), **{setting: float("inf")})
    ropes.play(scene, 1, 3)
    assert says in (sim.status(rope) or ""), sim.status(rope)
    assert np.array_equal(ropes.local_points(rope), before)
