"""Every setting of ``Object.xpbd`` is declared once (``blender.schema``) and wired: the
registered properties are the ones the add-on had before the schema (a snapshot of their RNA),
and each declaration acts where it says it does: a cached setting changes the cache key, a
shared one keeps two ropes apart, one that reaches the Model (or the pins, the colliders, the
run) changes it, and each check reports its message. A setting declared but not wired fails
here instead of leaving a stale cache."""

from __future__ import annotations

import inspect
import json
import math
from pathlib import Path
from types import SimpleNamespace

import bpy
import numpy as np
import pytest

from xpbd_addon import core, panels
from xpbd_addon.blender import schema
from xpbd_addon.blender.frame import group, inputs, sim
from xpbd_addon.blender.read import collision_objects as colliders

from . import ropes
from .rna_snapshot import snapshot

SNAPSHOT = Path(__file__).with_name("object_xpbd_rna.json")
"""The RNA of ``Object.xpbd`` before the schema (``rna_snapshot.py``), taken again with the
attachments' items described, while the attachment and bake groups were still written by
hand: so it holds both groups as they were before ``schema_groups.py`` declared them."""

NAMES = [s.name for s in schema.SETTINGS]


def _other(setting: schema.Setting, value):
    """A valid value other than ``value`` for ``setting``."""
    if setting.kind == schema.BOOL:
        return not value
    if setting.kind == schema.INT:
        return value + 1
    if setting.kind == schema.FLOAT:
        return value * 2.0 + 0.5
    if setting.kind == schema.ENUM:
        return next(item[0] for item in setting.items if item[0] != value)
    if setting.kind == schema.POINTER:  # the Field Collection: one without the scene's fields
        return bpy.data.collections.new("other") if value is None else None
    return "pin" if value != "pin" else ""  # the mesh rope's vertex group


def _make_matter(obj, setting: schema.Setting) -> None:
    """Set the settings ``setting`` depends on (its ``when``; a map's for its Max: the mesh
    rope's group) so that it acts."""
    for other, value in setting.when:
        setattr(obj.xpbd, other, value)
    if setting.name in ("bend_rest", "use_plasticity", "plastic_yield", "plastic_creep"):
        obj.xpbd.use_bending = True  # a rod's rest shape and yield act where it bends,
        if obj.type == "CURVE":  # and the rest shape where it is not straight
            obj.data.splines[0].points[-1].co.z += 0.1
    if setting.name.endswith("_map_max"):
        setattr(obj.xpbd, setting.name[:-4], "pin")
    if setting.name == "pin_map_stiffness":  # springs: a weight between 0 and 1
        if obj.type == "MESH":
            obj.xpbd.pin_map = "pin"
            obj.vertex_groups["pin"].add([0], 0.5, "REPLACE")
        else:
            obj.xpbd.pin_map = "weight"
            obj.data.splines[0].points[-1].weight_softbody = 0.5


def _signature(value, depth=0):
    """A comparable picture of a Model, a collider snapshot or a value in them: arrays by
    shape and bytes, objects by their public attributes."""
    if isinstance(value, np.ndarray):
        return (value.shape, value.dtype.str, value.tobytes())
    if isinstance(value, (bool, int, float, str, type(None))):
        return repr(value)
    if depth > 3:
        return type(value).__name__
    if isinstance(value, dict):
        return tuple((k, _signature(v, depth + 1)) for k, v in sorted(value.items()))
    if isinstance(value, (tuple, list)):
        return tuple(_signature(v, depth + 1) for v in value)
    names = (sorted(vars(value)) if hasattr(value, "__dict__")
             else [n for cls in type(value).__mro__ for n in getattr(cls, "__slots__", ())])
    return tuple((k, _signature(getattr(value, k), depth + 1)) for k in names
                 if not k.startswith("_") and hasattr(value, k))


# --- the properties are the ones they were ------------------------------------------------

def test_registered_rna_equals_the_snapshot_from_before_the_schema(addon):
    """Every property there was is there as it was (new ones may be added)."""
    expected = json.loads(SNAPSHOT.read_text())
    now = json.loads(json.dumps(snapshot()))  # the same JSON round trip as the snapshot
    assert not set(expected) - set(now)
    for name in expected:
        was, is_ = dict(expected[name]), dict(now[name])
        if "fields" in was:  # a group (bake): its properties as they were, new ones added
            fields = is_.pop("fields")
            for field, entry in was.pop("fields").items():
                assert fields.get(field) == entry, f"{name}.{field}"
        assert is_ == was, name


def test_settings_are_the_properties_in_their_order(addon):
    rna = [p.identifier for p in bpy.types.Object.bl_rna.properties["xpbd"].fixed_type.properties
           if p.identifier not in ("rna_type", "name", "bake", "attachments",
                                   "active_attachment")]
    assert rna == NAMES
    assert len(set(NAMES)) == len(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_the_declaration_is_complete_and_consistent(name):
    s = schema.BY_NAME[name]
    if s.unit is not None:
        assert f"[{s.unit}]" in s.description
    assert s.kind in (schema.BOOL, schema.INT, schema.FLOAT, schema.ENUM, schema.STRING,
                      schema.POINTER)
    assert (s.kind == schema.ENUM) == bool(s.items)
    # Nothing reads a setting that reaches nowhere, so it cannot be part of the cache key.
    assert (s.reaches == schema.NOWHERE) == (not s.cache)
    assert all(other in schema.BY_NAME for other, _value in s.when)
    if s.reaches == schema.MODEL:
        assert s.model_keyword in inspect.signature(core.Model).parameters
        if s.kind == schema.ENUM:
            assert sorted(s.model_values) == sorted(item[0] for item in s.items)
    if s.check is not None and s.check.after:
        assert s.check.after in schema.BY_NAME and s.check.message
    # Drawn in the panel (``enabled`` in its header).
    assert f'"{name}"' in inspect.getsource(panels)


# --- the cache key --------------------------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_a_cached_setting_changes_the_key_where_it_matters(scene, name):
    setting = schema.BY_NAME[name]
    obj = ropes.curve_rope(scene, "POLY", name="rope")
    _make_matter(obj, setting)
    before = sim.settings_key(obj, scene)
    setattr(obj.xpbd, name, _other(setting, getattr(obj.xpbd, name)))
    assert (sim.settings_key(obj, scene) != before) == setting.cache
    if setting.when:  # where it does not matter, editing it restarts nothing
        other, value = setting.when[-1]
        setattr(obj.xpbd, other, _other(schema.BY_NAME[other], value))
        before = sim.settings_key(obj, scene)
        setattr(obj.xpbd, name, _other(setting, getattr(obj.xpbd, name)))
        assert sim.settings_key(obj, scene) == before


# --- ropes simulated together --------------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_ropes_differing_in_a_shared_setting_are_not_grouped(scene, name):
    setting = schema.BY_NAME[name]
    a = ropes.curve_rope(scene, "POLY", name="a")
    b = ropes.curve_rope(scene, "POLY", name="b")
    for obj in (a, b):
        obj.xpbd.use_self_collision = True
        _make_matter(obj, setting)
    groups, _notes = group.partition([(a, None), (b, None)])
    assert [[obj.name for obj, _ in g] for g in groups] == [["a", "b"]]
    if name == "use_self_collision":
        return  # it decides whether a rope collides with others at all
    setattr(b.xpbd, name, _other(setting, getattr(b.xpbd, name)))
    groups, notes = group.partition([(a, None), (b, None)])
    assert (groups == []) == bool(setting.shared)
    if setting.shared:
        labels = notes[b.session_uid][0].split("different ")[1].split(" (rope")[0]
        assert setting.shared in labels.split(", ")


# --- what each setting reaches --------------------------------------------------------------

def _rope_for(scene, setting):
    """A rope object on which ``setting`` acts (a mesh for the pin group)."""
    on_mesh = setting.name == "pin_group" or setting.reaches == schema.MAPS
    obj = (ropes.mesh_rope(scene, name="rope") if on_mesh
           else ropes.curve_rope(scene, "POLY", name="rope"))
    if on_mesh:  # the group "pin" (vertex 0) then free: a map of it acts on a free point
        obj.xpbd.pin_group = ""
    if setting.name == "pin_last":
        obj.xpbd.pin_first = False
    _make_matter(obj, setting)
    return obj


def _reached(scene, obj, setting):
    """What ``setting`` reaches (its ``reaches``) for ``obj`` as it is now."""
    if setting.reaches == schema.COLLIDERS:
        depsgraph = bpy.context.evaluated_depsgraph_get()
        return _signature(colliders.read(depsgraph, obj.xpbd, obj.name, None))
    sim.forget(obj)
    rope = sim.RopeSim(obj, scene, sim.settings_key(obj, scene))
    if setting.reaches == schema.RUN:
        return getattr(rope, setting.name)
    if setting.reaches == schema.AIR:
        return _signature(rope.air)
    if setting.reaches == schema.FIELDS:
        depsgraph = bpy.context.evaluated_depsgraph_get()
        reading = inputs.Reading(rope, obj, obj.evaluated_get(depsgraph), depsgraph, False, 1)
        return _signature(inputs.read_fields(reading))
    if setting.reaches == schema.MAPS:  # the Model, or a Pin Map's springs
        return _signature((rope.model, rope.soft_map))
    return _signature(rope.model)


@pytest.mark.parametrize("name", NAMES)
def test_a_setting_changes_what_it_reaches(scene, name):
    setting = schema.BY_NAME[name]
    if setting.reaches == schema.NOWHERE:
        return
    if setting.reaches == schema.COLLIDERS:
        bpy.ops.mesh.primitive_cube_add(size=1.0, location=(0.0, 0.0, -1.0))
        bpy.context.object.modifiers.new("Collision", "COLLISION")
    if setting.reaches == schema.FIELDS:
        bpy.ops.object.effector_add(type="WIND")
    obj = _rope_for(scene, setting)
    before = _reached(scene, obj, setting)
    setattr(obj.xpbd, name, _other(setting, getattr(obj.xpbd, name)))
    assert _reached(scene, obj, setting) != before


@pytest.mark.parametrize("name", [s.name for s in schema.SETTINGS if s.reaches == schema.MODEL
                                  and s.name != "use_self_collision"])
def test_a_model_setting_reaches_the_joint_model_of_colliding_ropes(scene, name):
    """``group.build_model`` joins the members' Models: each Model setting of theirs (the
    shared ones once, the radius per particle) is in the joint Model. Self collision is on
    for every member of a group."""
    setting = schema.BY_NAME[name]
    joint = []
    for k, value in enumerate((None, "other")):
        members = [ropes.curve_rope(scene, "POLY", name=f"{k}{i}") for i in range(2)]
        for obj in members:
            obj.xpbd.use_self_collision = True
            if value is not None:
                setattr(obj.xpbd, name, _other(setting, getattr(obj.xpbd, name)))
        models = [sim.RopeSim(obj, scene, "").model for obj in members]
        joint.append(_signature(group.build_model(models)))
    assert joint[0] != joint[1]


# --- checks ---------------------------------------------------------------------------------

MESSAGES = {
    "compliance": (math.nan, "Compliance must be a number >= 0 m/N (got nan)"),
    "substeps": (0, "Substeps must be 1 or more (got 0)"),
    "vertex_mass": (0.0, "Vertex mass must be a number > 0 kg (got 0.0)"),
    "damping": (-1.0, "Damping must be a number >= 0 1/s (got -1.0)"),
    "frame_end": (1, "Cache end frame must come after the start frame"),
    "stiffness_mode": ("BOGUS", "Unknown stiffness mode 'BOGUS'"),
    "solver": ("BOGUS", "Unknown solver 'BOGUS'"),
    "integrator": ("BOGUS", "Unknown integrator 'BOGUS'"),
    "iterations": (0, "Iterations must be 1 or more (got 0)"),
    "bending_compliance": (math.nan,
                           "Bending compliance must be a number >= 0 1/(N m) (got nan)"),
    "linear_density": (math.nan, "Density must be a number > 0 kg/m (got nan)"),
    "stretch_stiffness": (math.nan, "Stretch stiffness must be a number > 0 N (got nan); "
                                    "tick Inextensible for a rope that does not stretch"),
    "bend_stiffness": (math.inf, "Bend stiffness must be a number > 0 N m^2 (got inf)"),
    "radius": (math.nan, "Radius must be a number >= 0 m (got nan)"),
    "ground_height": (1e8, "Ground Height must be within +/-1e+07 m (got 1e+08 m): beyond "
                           "that single-precision coordinates have no precision left"),
    "ground_friction": (math.nan, "Ground friction must be a number (got nan)"),
    "self_friction": (math.inf, "Self friction must be a number (got inf)"),
    "sleep_speed": (math.nan, "Sleep speed must be a number >= 0 m/s (got nan)"),
}
"""A bad value of each checked setting and the message the add-on has always given."""


def _defaults() -> SimpleNamespace:
    return SimpleNamespace(**{s.name: s.default for s in schema.SETTINGS})


def _bad(setting: schema.Setting, settings: SimpleNamespace):
    """A value ``setting``'s check refuses, with the other values of ``settings``."""
    check = setting.check
    assert check is not None
    if setting.name in MESSAGES:
        return MESSAGES[setting.name][0]
    if setting.kind == schema.ENUM:
        return "BOGUS"
    if check.after:
        return getattr(settings, check.after)
    if check.within_coordinates:
        return 1e30
    if setting.kind == schema.INT:
        return int(check.low) - 1
    return math.nan


def test_the_defaults_pass_the_checks():
    assert set(MESSAGES) <= {s.name for s in schema.SETTINGS if s.check is not None}
    assert schema.problem(_defaults()) is None


@pytest.mark.parametrize("name", [s.name for s in schema.SETTINGS if s.check is not None])
def test_a_bad_value_is_reported_where_it_matters(name):
    setting = schema.BY_NAME[name]
    settings = _defaults()
    settings.__dict__.update(setting.when)
    setattr(settings, name, _bad(setting, settings))
    problem = schema.problem(settings)
    if name in MESSAGES:
        assert problem == MESSAGES[name][1]  # as the add-on has always worded it
    else:
        assert problem is not None
    if setting.when:
        other, value = setting.when[-1]
        setattr(settings, other, _other(schema.BY_NAME[other], value))
        assert schema.problem(settings) is None


def test_a_bad_setting_stops_the_rope_with_its_message(scene):
    obj = ropes.curve_rope(scene, "POLY")
    obj.xpbd.damping = math.nan
    scene.frame_set(2)
    assert sim.status(obj) == MESSAGES["damping"][1].replace("-1.0", "nan")


def test_the_settings_that_may_change_over_time():
    """Issue 17 reads these at each frame; the rest keep their value for a whole run."""
    assert {s.name for s in schema.SETTINGS if s.animatable} == {
        "compliance", "vertex_mass", "damping", "bending_compliance", "linear_density",
        "stretch_stiffness", "bend_stiffness", "radius", "ground_height", "ground_friction",
        "self_friction", "pin_first", "pin_last", "length_scale", "field_weight"}


def test_damping_is_checked_per_substep_with_the_frame_length():
    """Damping times the substep at most core.solver.MAX_DAMPING_PER_SUBSTEP (50): 12,000 1/s
    at 10 substeps and 24 fps passes, above it the message names Damping and the limit;
    without a frame length (the panel's own checks) it is not checked."""
    settings = _defaults()
    settings.damping = 12000.0
    assert schema.problem(settings, 1.0 / 24.0) is None
    settings.damping = 2e5
    assert schema.problem(settings, 1.0 / 24.0) == (
        "Damping must be at most 12000 1/s at 10 substeps and 24 fps (got 200000): above "
        "that every substep already stops all motion")
    assert schema.problem(settings) is None
