"""Stiffness settings in real Blender (issue 6): the solver setting reaches the core (Direct
keeps a stiff 100-point rope at its length where the Gauss-Seidel sweep stretches it like
rubber), a material given per length behaves the same at 20 and 200 points (stretch and
cantilever droop), presets fill the fields, bad values are clamped or reported, and a changed
stiffness setting invalidates the cache."""

from __future__ import annotations

import bpy
import numpy as np
import pytest

import xpbd_addon
from xpbd_addon import panels, presets
from xpbd_addon.blender.frame import sim
from xpbd_addon.core.material import PRESETS

from . import ropes

G = 9.81
LENGTH = 2.0


def _hanging_stretch(scene, solver, *, points=100, substeps=10, frames=48):
    """Mean stretch (fraction) of a vertical poly curve rope, alpha = 0, over its second
    second of hanging from its pinned top."""
    obj = ropes.curve_rope(scene, "POLY", n=points, length=LENGTH, axis=2,
                           name=f"hang_{solver}")
    obj.xpbd.compliance = 0.0
    obj.xpbd.substeps = substeps
    obj.xpbd.solver = solver
    samples = []
    for frame in range(1, frames + 1):
        scene.frame_set(frame)
        if frame > frames // 2:
            samples.append(ropes.length(ropes.world_points(obj)) / LENGTH - 1.0)
    return float(np.mean(samples))


def test_direct_solver_keeps_a_stiff_rope_at_its_length_and_the_sweep_does_not(scene):
    assert scene.objects.get("hang_DIRECT") is None
    direct = _hanging_stretch(scene, "DIRECT")
    sweep = _hanging_stretch(scene, "SWEEP")
    assert 0.0 <= direct < 0.005
    assert sweep > 0.20  # plain XPBD: rubber at 100 points and S = 10


def _material_rope(scene, points, *, name, substeps=10):
    obj = ropes.curve_rope(scene, "POLY", n=points, length=LENGTH, axis=2, name=name)
    s = obj.xpbd
    s.stiffness_mode = "MATERIAL"
    s.linear_density = 0.065
    s.inextensible = False
    s.stretch_stiffness = 100.0  # soft enough to measure a centimetre
    s.use_bend_stiffness = False
    s.substeps = substeps
    s.damping = 8.0  # settles quickly; damping never changes the resting shape
    return obj


def test_material_stretch_does_not_depend_on_the_point_count(scene):
    coarse = _material_rope(scene, 20, name="coarse")
    fine = _material_rope(scene, 200, name="fine")
    ropes.play(scene, 1, 96)
    stretch = [ropes.length(ropes.world_points(o)) - LENGTH for o in (coarse, fine)]
    # A hanging continuum rope stretches rho g L^2 / (2 EA) in total.
    expected = 0.065 * G * LENGTH**2 / (2 * 100.0)
    assert stretch[0] == pytest.approx(stretch[1], rel=0.02)
    assert stretch[1] == pytest.approx(expected, rel=0.05)


def _cantilever(scene, points, substeps, *, free_length=0.5, bend_stiffness=0.1):
    """A mesh cable clamped by its first two points (pin group), the free part of
    ``free_length`` [m] horizontal along x; the same free length at any point count."""
    segment = free_length / (points - 2)
    co = np.zeros((points, 3))
    co[:, 0] = segment * (np.arange(points) - 1)
    mesh = bpy.data.meshes.new(f"cantilever_{points}_{substeps}")
    mesh.from_pydata(co.tolist(), [(i, i + 1) for i in range(points - 1)], [])
    obj = ropes.link(scene, mesh.name, mesh)
    obj.vertex_groups.new(name="clamp").add([0, 1], 1.0, "REPLACE")
    s = obj.xpbd
    s.pin_group = "clamp"
    s.stiffness_mode = "MATERIAL"
    s.linear_density = 0.1
    s.inextensible = True
    s.use_bend_stiffness = True
    s.bend_stiffness = bend_stiffness
    s.substeps = substeps
    s.damping = 5.0
    s.enabled = True
    return obj


def test_cantilever_droop_does_not_depend_on_points_or_substeps(scene):
    cables = {key: _cantilever(scene, *key) for key in ((20, 10), (20, 40), (200, 10))}
    ropes.play(scene, 1, 120)
    droop = {key: -ropes.world_points(o)[-1, 2] for key, o in cables.items()}
    # Small-deflection beam theory, q L^4 / (8 EI): 7.7 cm; the cable really holds itself up
    # (without bending it would hang 0.5 m down).
    theory = 0.1 * G * 0.5**4 / (8 * 0.1)
    assert droop[(20, 10)] == pytest.approx(theory, rel=0.15)
    assert droop[(20, 10)] == pytest.approx(droop[(20, 40)], rel=0.05)
    assert droop[(20, 10)] == pytest.approx(droop[(200, 10)], rel=0.05)
    for obj in cables.values():
        assert np.abs(sim.REGISTRY[obj.session_uid].cache[120].v).max() < 1e-3  # at rest


def test_bending_in_per_point_mode_holds_a_cantilever_up(scene):
    limp = _cantilever(scene, 20, 10)
    stiff = _cantilever(scene, 20, 10)
    for obj, bending in ((limp, False), (stiff, True)):
        obj.xpbd.stiffness_mode = "POINT"
        obj.xpbd.vertex_mass = 0.1 * 0.5 / 18
        obj.xpbd.use_bending = bending
        obj.xpbd.bending_compliance = (0.5 / 18) / 0.1  # alpha_b = l / EI
    ropes.play(scene, 1, 72)
    assert -ropes.world_points(limp)[-1, 2] > 0.3
    assert -ropes.world_points(stiff)[-1, 2] < 0.12


@pytest.mark.parametrize("identifier, name", [("STRING", "string"), ("ROPE", "rope"),
                                              ("STEEL_CABLE", "steel cable"),
                                              ("CHAIN", "chain")])
def test_presets_fill_the_material_fields(scene, identifier, name):
    obj = ropes.curve_rope(scene, "POLY")
    obj.xpbd.inextensible = True
    bpy.ops.xpbd.material_preset(preset=identifier)
    s, material = obj.xpbd, PRESETS[name]
    assert s.stiffness_mode == "MATERIAL"
    assert s.linear_density == pytest.approx(material.linear_density, rel=1e-6)
    assert not s.inextensible
    assert s.stretch_stiffness == pytest.approx(material.stretch_stiffness, rel=1e-6)
    assert s.use_bend_stiffness == (material.bend_stiffness is not None)
    if material.bend_stiffness is not None:
        assert s.bend_stiffness == pytest.approx(material.bend_stiffness, rel=1e-6)
    ropes.play(scene, 1, 24)  # and the rope simulates with it
    assert sim.status(obj) is None
    assert ropes.world_points(obj)[-1, 2] < -0.05


def test_a_preset_rope_hangs_at_its_length(scene):
    obj = ropes.curve_rope(scene, "POLY", n=100, length=LENGTH, axis=2)
    bpy.ops.xpbd.material_preset(preset="STEEL_CABLE")
    ropes.play(scene, 1, 24)
    assert abs(ropes.length(ropes.world_points(obj)) / LENGTH - 1.0) < 1e-4


def test_typed_bad_values_are_clamped(scene):
    s = ropes.curve_rope(scene, "POLY").xpbd
    s.linear_density = -1.0
    s.stretch_stiffness = -5.0
    s.bend_stiffness = 0.0
    s.bending_compliance = -1.0
    s.iterations = 0
    assert s.linear_density > 0.0 and s.stretch_stiffness > 0.0 and s.bend_stiffness > 0.0
    assert s.bending_compliance == 0.0 and s.iterations == 1
    s.stretch_stiffness = float("inf")  # clamped to the largest float32: as good as rigid
    assert np.isfinite(s.stretch_stiffness)


@pytest.mark.parametrize("field, value, message", [
    ("linear_density", float("nan"), "Density must be a number > 0 kg/m"),
    ("stretch_stiffness", float("nan"), "Stretch stiffness must be a number > 0 N"),
    ("bend_stiffness", float("nan"), "Bend stiffness must be a number > 0 N m^2"),
])
def test_nan_material_values_are_reported_and_the_rope_left_alone(scene, field, value,
                                                                  message):
    witness = ropes.curve_rope(scene, "POLY", name="witness")
    obj = ropes.curve_rope(scene, "POLY", name="bad")
    obj.xpbd.stiffness_mode = "MATERIAL"
    obj.xpbd.use_bend_stiffness = True
    setattr(obj.xpbd, field, value)
    before = ropes.local_points(obj).copy()
    ropes.play(scene, 1, 6)
    assert message in sim.status(obj)
    assert np.array_equal(ropes.local_points(obj), before)
    assert sim.status(witness) is None
    assert ropes.world_points(witness)[-1, 2] < -0.05


def test_nan_bending_compliance_is_reported(scene):
    obj = ropes.curve_rope(scene, "POLY")
    obj.xpbd.use_bending = True
    obj.xpbd.bending_compliance = float("nan")
    ropes.play(scene, 1, 3)
    assert "Bending compliance must be a number >= 0 1/(N m)" in sim.status(obj)


@pytest.mark.parametrize("field, value", [("stiffness_mode", "MATERIAL"), ("solver", "SWEEP"),
                                          ("integrator", "BDF2"), ("iterations", 3),
                                          ("use_bending", True)])
def test_changing_a_stiffness_setting_invalidates_the_cache(scene, field, value):
    obj = ropes.curve_rope(scene, "POLY", n=40)
    ropes.play(scene, 1, 20)
    entry = sim.REGISTRY[obj.session_uid]
    before = ropes.local_points(obj).copy()
    setattr(obj.xpbd, field, value)
    scene.frame_set(20)
    assert sim.REGISTRY[obj.session_uid] is not entry
    after = ropes.local_points(obj).copy()
    assert not np.array_equal(before, after)
    bpy.ops.xpbd.reset()  # the new frame is what playing from the start gives
    ropes.play(scene, 1, 20)
    assert np.array_equal(ropes.local_points(obj), after)


def test_fields_of_the_other_mode_do_not_restart_the_simulation(scene):
    obj = ropes.curve_rope(scene, "POLY")
    ropes.play(scene, 1, 5)
    entry = sim.REGISTRY[obj.session_uid]
    obj.xpbd.linear_density = 1.0  # a Material field, the rope is Per Point
    scene.frame_set(6)
    assert sim.REGISTRY[obj.session_uid] is entry


class _Layout:
    """Records what a panel draws (a UILayout cannot be made headless): every prop must name
    a real property of the real settings."""

    def __init__(self, log):
        self.log = log

    def __getattr__(self, name):
        if name in ("row", "column", "box", "split"):
            return lambda *a, **k: self
        if name in ("label", "separator", "prop_search"):
            return lambda *a, **k: None
        raise AttributeError(name)

    def __setattr__(self, name, value):
        object.__setattr__(self, name, value)

    def prop(self, data, name, **kwargs):
        assert name in data.bl_rna.properties, name
        self.log.append(name)

    def menu(self, name, **kwargs):
        assert hasattr(bpy.types, name), name
        self.log.append(name)

    def operator(self, name, **kwargs):
        self.log.append(name)
        return type("Props", (), {})()


@pytest.mark.parametrize("mode", ["POINT", "MATERIAL"])
def test_stiffness_panel_draws_its_mode(scene, mode):
    obj = ropes.curve_rope(scene, "POLY")
    obj.xpbd.stiffness_mode = mode
    log = []
    panel = type("P", (), {"layout": _Layout(log)})()
    panels.XPBD_PT_rope_stiffness.draw(panel, bpy.context)
    panels.XPBD_PT_rope_stiffness.draw_header_preset(panel, bpy.context)
    panels.XPBD_PT_rope.draw(panel, bpy.context)
    assert {"solver", "iterations", "substeps", "XPBD_MT_material_presets"} <= set(log)
    wanted = ({"linear_density", "stretch_stiffness", "bend_stiffness"} if mode == "MATERIAL"
              else {"compliance", "vertex_mass", "bending_compliance"})
    assert wanted <= set(log)


def test_presets_register_and_unregister(scene):
    assert all(cls.is_registered for cls in presets.CLASSES)
    xpbd_addon.unregister()
    try:
        assert not any(cls.is_registered for cls in presets.CLASSES)
    finally:
        xpbd_addon.register()
    assert all(cls.is_registered for cls in presets.CLASSES)
