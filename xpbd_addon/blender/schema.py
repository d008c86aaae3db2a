"""Every setting of ``Object.xpbd``, declared once.

A new setting: one declaration here (plus, if it is drawn, one line in panels.py). From the
declaration come the ``bpy.props`` property (properties.py builds the PropertyGroup from
``SETTINGS``) and everything the simulation does with it:

- ``cache_values`` (the settings part of ``sim.settings_key``): every setting with
  ``cache=True``; a change of one of them invalidates the cached frames;
- ``problem`` (``sim._check_settings``): each ``Check``, with its user-facing message;
- ``SHARED`` and ``shared_values`` (``group.SHARED``, ``group.shared_settings``): the settings
  ropes simulated together (collision groups) must have equal, with their label in the notes;
- ``model_keywords`` (``RopeSim._build_model``) and ``MODEL_WIDE`` (``group.build_model``):
  the ``core.Model`` keywords a setting gives (``reaches=MODEL``).

Places a new setting needs, counted: a ``core.Model`` keyword (``reaches=MODEL``), 2: the
declaration and its panel line. A setting of another route needs, besides, the line that
uses its value where that route is read, which is the feature itself, not wiring:
``STIFFNESS`` (``stiffness.model_arguments`` turns the stiffness mode's fields into masses
and compliances), ``PINS`` (``pins.pin_mask``), ``COLLIDERS`` (``colliders.read``), ``RUN``
(the ``RopeSim`` attribute of the same name: substeps and the frame range), ``FIELDS``
(``inputs.read_fields``), ``AIR`` (``air_of``: the core's ``Air``). The tests need
nothing: they go through ``SETTINGS``.

tests/blender/test_settings_schema.py checks that each declaration is wired: changing a
cached setting changes the key, two ropes differing in a shared one are not grouped, one
that reaches the Model changes the Model (or its pins, colliders, run), and the registered
RNA still equals the snapshot taken before the settings were declared here.

``when``: a setting that matters only with other settings at given values (a Material-mode
field, the ground's height) is left out of the key, the checks and the group comparison
(as None) otherwise, so editing a field the rope does not use restarts nothing.

``animatable``: changing it over time makes physical sense: keyed or driven, it is read at
every frame (frame/inputs.py); keying any other setting restarts the simulation when it
changes. The RNA flags are Blender's defaults (every property can be keyed).

Nothing here imports bpy or numpy: ``settings`` is anything with the ``Object.xpbd``
attribute names (the PropertyGroup or ``sim.settings_snapshot``'s namespace).
"""

from __future__ import annotations

import math
from typing import Any

from . import schema_fields, schema_rod

# re-exported: the routes and kinds others read from here (tests, sim, schema_groups)
from .schema_types import AIR as AIR
from .schema_types import (
    BOOL,
    COLLIDERS,
    ENUM,
    FLOAT,
    INT,
    MODEL,
    PINS,
    RUN,
    STIFFNESS,
    STRING,
    Check,
    Setting,
)
from .schema_types import FIELDS as FIELDS
from .schema_types import MAPS as MAPS
from .schema_types import NOWHERE as NOWHERE
from .schema_types import POINTER as POINTER

DEFAULT_COMPLIANCE = 1e-6
"""Default alpha [m/N]: a 1 m segment under 1 N of tension stretches 1 um, a rope, not an
elastic band; at 0.05 kg per point a 100-point rope stretches well under 1 %."""

_POINT = (("stiffness_mode", "POINT"),)
_MATERIAL = (("stiffness_mode", "MATERIAL"),)
_GROUND = (("use_ground", True),)

MAX_FRAME = 1048574
"""The frame range of Blender's own caches (``PointCache.frame_start`` / ``frame_end``): a
Start typed far below it (or set from a script to -2**31) had a first frame replay billions of
frames, and Blender never came back."""

SETTINGS: tuple[Setting, ...] = (
    Setting(
        "enabled", BOOL, "XPBD Rope", default=False, cache=False,
        description="Simulate this mesh or curve as a rope on frame change. Turning it off "
                    "restores the rest shape"),
    Setting(
        "compliance", FLOAT, "Compliance", default=DEFAULT_COMPLIANCE, unit="m/N",
        options=dict(min=0.0, soft_max=0.01, precision=7, step=0.0001),
        description="Per Point mode: compliance alpha [m/N], the inverse stiffness of every "
                    "segment: under a tension T a segment stretches by alpha*T. 0 = "
                    "inextensible, 1e-6 = rope, 1e-3 = elastic band. Independent of the "
                    "substeps",
        reaches=STIFFNESS, when=_POINT, check=Check(low=0.0), animatable=True,
        panel="Compliance (m/N)"),
    Setting(
        "substeps", INT, "Substeps", default=10, unit="count",
        options=dict(min=1, max=1000, soft_max=100),
        description="XPBD substeps S per frame [count]; each predicts, solves the "
                    "constraints and updates velocities. More substeps = more accurate "
                    "motion, not stiffer. A rod takes more where it needs them (at least 10 "
                    "a frame at 24 fps while its twist moves)",
        reaches=RUN, shared="Substeps", check=Check(low=1)),
    Setting(
        "vertex_mass", FLOAT, "Vertex Mass", default=0.05, unit="kg",
        options=dict(min=1e-6, soft_max=10.0, unit="MASS", precision=4),
        description="Per Point mode: mass of every point [kg]. Pinned points have infinite "
                    "mass",
        reaches=STIFFNESS, when=_POINT, check=Check(low=0.0, strict=True), animatable=True),
    Setting(
        "damping", FLOAT, "Damping", default=0.1, unit="1/s",
        options=dict(min=0.0, soft_max=10.0, precision=3),
        description="Velocity damping rate d [1/s]: free motion decays as exp(-d*t), like "
                    "air drag (1 = speed falls to 37 % in one second). Does not change how "
                    "the rope hangs at rest. 0 = none",
        reaches=MODEL, shared="Damping", animatable=True,
        check=Check(low=0.0, per_substep=True,
                    message="Damping must be at most {limit:g} 1/s at {substeps} substeps "
                            "and {fps:g} fps (got {value:g}): above that every substep "
                            "already stops all motion")),
    Setting(
        "pin_group", STRING, "Pin Group", default="",
        description="Meshes: vertex group of the pinned vertices (weight > 0 = pinned). "
                    "Pinned vertices follow the object, its parent, bones and deform "
                    "modifiers such as Armature",
        reaches=PINS),
    Setting(
        "pin_first", BOOL, "Pin First Point", default=True,
        description="Curves: pin the first point of every spline to the object",
        reaches=PINS, animatable=True, panel="First Point"),
    Setting(
        "pin_last", BOOL, "Pin Last Point", default=False,
        description="Curves: pin the last point of every spline to the object",
        reaches=PINS, animatable=True, panel="Last Point"),
    Setting(
        "frame_start", INT, "Start", default=1, unit="frame",
        options=dict(min=-MAX_FRAME, max=MAX_FRAME),
        description="Frame [frame] at which the simulation starts from the rest shape; at or "
                    "before it the rope is reset",
        reaches=RUN, shared="Simulation Start", panel="Simulation Start"),
    Setting(
        "frame_end", INT, "End", default=250, unit="frame", options=dict(min=1, max=MAX_FRAME),
        description="Last simulated frame [frame]; later frames hold this frame's shape",
        reaches=RUN, shared="End",
        check=Check(after="frame_start",
                    message="Cache end frame must come after the start frame")),
    Setting(
        "preroll", INT, "Pre-roll", default=0, unit="frame",
        options=dict(min=0, max=100000, soft_max=1000),
        description="Frames [frame] the rope settles before the start frame, its pins held "
                    "where they are at the start frame, so the shot begins with the rope at "
                    "rest (hanging, draped). 0 = start from the modelled shape",
        reaches=RUN, shared="Pre-roll", check=Check(low=0)),
    Setting(
        "length_scale", FLOAT, "Length Scale", default=1.0, unit="-",
        options=dict(min=0.01, max=1000.0, soft_min=0.05, soft_max=2.0, precision=3),
        description="Rest length of the rope as a fraction [-] of its modelled length: key it "
                    "to reel a rope in or pay it out like a winch (a rope pinned at both ends "
                    "tightens as it shortens), up to 1000 times. 1 = as modelled",
        reaches=STIFFNESS, check=Check(low=0.0, strict=True), animatable=True),
    Setting(
        "tear_force", FLOAT, "Tear Force", default=0.0, unit="N",
        options=dict(min=0.0, soft_max=1000.0, precision=2),
        description="Tension [N] above which a segment breaks for the rest of the run: the "
                    "rope parts there (meshes: the edge is removed; curves: the render shows "
                    "the gap). 0 = never",
        reaches=RUN, check=Check(low=0.0)),
    # Stiffness (blender/frame/stiffness.py turns these into the core Model's arguments).
    Setting(
        "stiffness_mode", ENUM, "Stiffness", default="POINT",
        items=(("POINT", "Per Point",
                "Compliance of every segment [m/N] and mass of every point [kg], as in "
                "plain XPBD; resampling the rope changes its stretch and weight"),
               ("MATERIAL", "Material",
                "Density [kg/m], stretch stiffness EA [N] and bend stiffness EI [N m^2] "
                "given per length: the rope behaves the same at any point count")),
        description="How the rope's mass and stiffness are given",
        reaches=STIFFNESS, check=Check(noun="stiffness mode")),
    Setting(
        "solver", ENUM, "Solver", default="DIRECT",
        items=(("DIRECT", "Direct",
                "Solve all stretch (and bend) constraints of each rope together every "
                "substep, implicitly: a rope is as stiff as its compliance or material "
                "says and never gains energy, at any substep count and point count "
                "(about 4x the cost of a sweep; default)"),
               ("SWEEP", "Gauss-Seidel Sweep",
                "Plain XPBD, one sweep over the constraints per substep, for "
                "comparison: long stiff ropes stretch like rubber "
                "(42 % at 100 points and 10 substeps) unless substeps or iterations "
                "are raised. No bending stiffness")),
        description="How the constraints are solved each substep. Direct is the default "
                    "because a sweep leaves a stretch growing with the square of the "
                    "point count",
        reaches=MODEL, model_values={"DIRECT": "direct", "SWEEP": "sweep"}, shared="Solver",
        check=Check(noun="solver")),
    Setting(
        "integrator", ENUM, "Integrator", default="EULER",
        items=(("EULER", "Implicit Euler",
                "Each substep implicit from the last: the most robust; slow swings lose "
                "some amplitude to it (a 2 m pendulum from 120 degrees keeps 89 after "
                "20 s at 20 substeps)"),
               ("BDF2", "Second Order (BDF2)",
                "Direct solver: the second-order backward formula from each frame's second "
                "substep on; keeps nearly all of a slow swing (117 of 120 degrees) at the "
                "same stability. Frames with contacts use implicit Euler")),
        description="How the direct solve steps in time",
        reaches=MODEL, model_values={"EULER": "euler", "BDF2": "bdf2"}, shared="Integrator",
        check=Check(noun="integrator")),
    Setting(
        "iterations", INT, "Iterations", default=1, unit="count",
        options=dict(min=1, max=1000, soft_max=50),
        description="Solver iterations per substep [count]: the least Newton steps of the "
                    "direct solve (it takes more by itself until the rope holds its length "
                    "within 0.1 %) or Gauss-Seidel sweeps",
        reaches=MODEL, shared="Iterations", check=Check(low=1)),
    Setting(
        "use_bending", BOOL, "Bending", default=False,
        description="Per Point mode: resist bending at every point (Direct solver only)",
        reaches=STIFFNESS, when=_POINT),
    Setting(
        "bending_compliance", FLOAT, "Bending Compliance", default=10.0, unit="1/(N m)",
        options=dict(min=0.0, soft_max=1e4, precision=3),
        description="Per Point mode: bending compliance alpha_b [1/(N m)] at every point, "
                    "the inverse bending stiffness of the rope at a joint: 0 = rigid, "
                    "larger = softer. For a material EI [N m^2] with segments of length "
                    "l [m], alpha_b = l/EI",
        reaches=STIFFNESS, when=_POINT + (("use_bending", True),), check=Check(low=0.0),
        animatable=True, panel="Compliance (1/(N m))"),
    Setting(
        "linear_density", FLOAT, "Density", default=0.065, unit="kg/m",
        options=dict(min=1e-6, soft_max=10.0, precision=4),
        description="Material mode: mass per length [kg/m] (0.065 = a 10 mm rope, 1.4 = "
                    "an 8 mm chain). Point masses follow from the segment lengths",
        reaches=STIFFNESS, when=_MATERIAL, check=Check(low=0.0, strict=True, noun="Density"),
        animatable=True, panel="Density (kg/m)"),
    Setting(
        "inextensible", BOOL, "Inextensible", default=False,
        description="Material mode: the rope does not stretch at all (infinite stretch "
                    "stiffness)",
        reaches=STIFFNESS, when=_MATERIAL),
    Setting(
        "stretch_stiffness", FLOAT, "Stretch Stiffness", default=3.0e4, unit="N",
        options=dict(min=1e-6, soft_max=1e8, precision=1),
        description="Material mode: axial stiffness EA [N], the tension that would double "
                    "a length: under a tension T the rope stretches T/EA per metre "
                    "(3e4 = a polyester rope, 2e6 = a steel cable)",
        reaches=STIFFNESS, when=_MATERIAL + (("inextensible", False),),
        check=Check(low=0.0, strict=True,
                    hint="; tick Inextensible for a rope that does not stretch"),
        animatable=True, panel="Stretch EA (N)"),
    Setting(
        "use_bend_stiffness", BOOL, "Bending", default=True,
        description="Material mode: the rope resists bending (a cable); off = bends "
                    "freely (a chain, a string). Direct solver only",
        reaches=STIFFNESS, when=_MATERIAL),
    Setting(
        "bend_stiffness", FLOAT, "Bend Stiffness", default=2.0e-3, unit="N m^2",
        options=dict(min=1e-9, soft_max=10.0, precision=5),
        description="Material mode: bending stiffness EI [N m^2]: a clamped end of length "
                    "L [m] and weight q [N/m] droops by q L^4/(8 EI) (2e-3 = a 10 mm "
                    "rope, 0.3 = a 6 mm steel cable)",
        reaches=STIFFNESS, when=_MATERIAL + (("use_bend_stiffness", True),),
        check=Check(low=0.0, strict=True), animatable=True, panel="Bend EI (N m\u00b2)"),
    # Collision (blender/read/collision_objects.py reads the colliders of each frame).
    Setting(
        "radius", FLOAT, "Radius", default=0.005, unit="m",
        options=dict(min=0.0, soft_max=0.1, unit="LENGTH", precision=4),
        description="Rope radius r [m]: each segment is a capsule kept r (+ the collider's "
                    "Thickness Outer) from colliders' faces, edges and corners, and 2r from "
                    "other segments. 0 = a thin line",
        reaches=MODEL, check=Check(low=0.0), animatable=True),
    Setting(
        "use_collision", BOOL, "Collision Objects", default=True,
        description="Collide with visible mesh objects that have Collision physics; "
                    "their Thickness Outer [m] and Friction (mu = Friction/100, as "
                    "Blender's cloth) are used",
        reaches=COLLIDERS, shared="Collision Objects"),
    Setting(
        "use_ground", BOOL, "Ground", default=False,
        description="An infinite ground plane at Height (world z): the rope rests on it",
        reaches=COLLIDERS, shared="Ground"),
    Setting(
        "ground_height", FLOAT, "Height", default=0.0, unit="m",
        options=dict(unit="LENGTH", precision=3),
        description="World height z [m] of the ground plane",
        reaches=COLLIDERS, when=_GROUND, shared="Ground Height", animatable=True,
        check=Check(within_coordinates=True,
                    message="Ground Height must be within +/-{limit:g} m (got {value:g} m): "
                            "beyond that single-precision coordinates have no precision "
                            "left")),
    Setting(
        "ground_friction", FLOAT, "Friction", default=0.5, unit="-",
        options=dict(min=0.0, soft_max=2.0, precision=2),
        description="Coulomb friction coefficient mu [-] of the ground (static and "
                    "dynamic): 0 = ice, 0.5 = rope on wood, 1 = rubber",
        reaches=COLLIDERS, when=_GROUND, shared="Ground Friction", check=Check(),
        animatable=True),
    Setting(
        "use_self_collision", BOOL, "Self Collision", default=False,
        description="Rope segments of this object push each other apart (a rope coils "
                    "on the floor, two splines can twist around each other). Needs a "
                    "radius > 0; costs extra time",
        reaches=MODEL, keyword="self_collision"),
    Setting(
        "self_friction", FLOAT, "Friction", default=0.2, unit="-",
        options=dict(min=0.0, soft_max=2.0, precision=2),
        description="Coulomb friction coefficient mu [-] between rope segments",
        reaches=MODEL, shared="Self Collision Friction", check=Check(), animatable=True),
    Setting(
        "sleep_speed", FLOAT, "Sleep Below", default=1e-3, unit="m/s",
        options=dict(min=0.0, soft_max=1e-2, precision=6, unit="VELOCITY"),
        description="With collisions on, a rope whose every point moves slower than this "
                    "[m/s] for half a second sleeps: it keeps its shape and costs almost "
                    "nothing until something touches or moves it. 0 = never sleep",
        reaches=MODEL, shared="Sleep Below", check=Check(low=0.0, noun="Sleep speed")),
) + schema_fields.SETTINGS + schema_rod.SETTINGS
"""The settings in their order on ``Object.xpbd`` (after the ``bake`` group)."""

BY_NAME: dict[str, Setting] = {s.name: s for s in SETTINGS}

SHARED: tuple[tuple[str, str], ...] = tuple((s.name, s.shared) for s in SETTINGS if s.shared)
"""(setting, label in the group notes): what ropes simulated together must have equal."""

MODEL_WIDE: tuple[str, ...] = tuple(s.model_keyword for s in SETTINGS
                                    if s.reaches == MODEL and s.shared)
"""Model keywords held once per Model (shared by the ropes of a group): a joint Model takes
them from any member's Model attribute of the same name."""


def matters(setting: Setting, settings: Any) -> bool:
    """Whether ``setting`` acts with the other values of ``settings`` (its ``when``)."""
    return all(getattr(settings, other) == value for other, value in setting.when)


def _values(chosen: tuple[Setting, ...], reads: tuple[str, ...], settings: Any,
            skip: frozenset[str] = frozenset()) -> tuple:
    """The values of ``chosen`` (None where one does not matter or is in ``skip``), each
    property of ``settings`` in ``reads`` read once: this runs for every rope at every
    frame, and reading a property of a PropertyGroup costs far more than a dict lookup."""
    read = {name: getattr(settings, name) for name in reads}
    return tuple(None if s.name in skip or not all(read[other] == value
                                                   for other, value in s.when)
                 else read[s.name] for s in chosen)


def _reads(chosen: tuple[Setting, ...]) -> tuple[str, ...]:
    """The properties ``_values`` reads for ``chosen``: theirs and those of their ``when``."""
    return tuple(sorted({s.name for s in chosen} | {o for s in chosen for o, _v in s.when}))


_CACHED: tuple[Setting, ...] = tuple(s for s in SETTINGS if s.cache)
_CACHED_READS = _reads(_CACHED)
_SHARED_SETTINGS: tuple[Setting, ...] = tuple(BY_NAME[name] for name, _label in SHARED)
_SHARED_READS = _reads(_SHARED_SETTINGS)


def cache_values(settings: Any, skip: frozenset[str] = frozenset()) -> tuple:
    """The values of the settings the cached frames depend on (None where one does not
    matter): part of ``sim.settings_key``. ``skip``: settings read at every frame instead
    (keyframed or driven, ``changes.py``), left out."""
    return _values(_CACHED, _CACHED_READS, settings, skip)


def shared_values(settings: Any) -> tuple:
    """The values of ``SHARED`` (None where one does not matter, e.g. the ground's height
    without a ground)."""
    return _values(_SHARED_SETTINGS, _SHARED_READS, settings)


def _noun(setting: Setting, check: Check) -> str:
    return check.noun or setting.name.replace("_", " ").capitalize()


def _problem_of(setting: Setting, check: Check, value: Any, settings: Any,
                frame: float | None) -> str | None:
    noun = _noun(setting, check)
    if setting.kind == ENUM:
        if value not in {item[0] for item in setting.items}:
            return f"Unknown {noun} {value!r}{check.hint}"
    elif setting.kind == INT:
        if check.low is not None and value < check.low:
            return f"{noun} must be {check.low:g} or more (got {value}){check.hint}"
    elif setting.kind == FLOAT:
        if check.low is None and not math.isfinite(value):
            return f"{noun} must be a number (got {value}){check.hint}"
        if check.low is not None and not (math.isfinite(value) and (
                value > check.low if check.strict else value >= check.low)):
            return (f"{noun} must be a number {'>' if check.strict else '>='} "
                    f"{check.low:g} {setting.unit} (got {value}){check.hint}")
    if check.within_coordinates:
        from .frame.checks import MAX_COORDINATE  # numpy: only when a rope is built

        if abs(value) >= MAX_COORDINATE:
            return check.message.format(limit=MAX_COORDINATE, value=value)
    if check.after and not value > getattr(settings, check.after):
        return check.message
    if check.per_substep and frame is not None:
        from ..core.solver import MAX_DAMPING_PER_SUBSTEP  # numpy: only when a rope is built

        substeps = int(settings.substeps)
        limit = MAX_DAMPING_PER_SUBSTEP * substeps / frame
        if not value <= limit:
            return check.message.format(limit=limit, substeps=substeps, fps=1.0 / frame,
                                        value=value)
    return None


def problem(settings: Any, frame: float | None = None) -> str | None:
    """The message of the first setting (in declaration order) whose value is invalid, or
    None. Settings that do not matter (``when``) are not checked. ``frame``: the frame's
    length [s] (``sim.frame_dt``), for the checks per substep (without it they are left
    out)."""
    for setting in SETTINGS:
        if setting.check is not None and matters(setting, settings):
            found = _problem_of(setting, setting.check, getattr(settings, setting.name),
                                settings, frame)
            if found is not None:
                return found
    return None


_CONVERT = {BOOL: bool, INT: int, FLOAT: float, STRING: str}


def model_keywords(settings: Any) -> dict[str, Any]:
    """The ``core.Model`` keyword arguments given directly by settings (``reaches=MODEL``);
    the stiffness (masses, compliances) comes from ``stiffness.model_arguments``."""
    out: dict[str, Any] = {}
    for s in SETTINGS:
        if s.reaches == MODEL:
            value = getattr(settings, s.name)
            out[s.model_keyword] = (s.model_values[value] if s.kind == ENUM
                                    else _CONVERT[s.kind](value))
    return out


def air_of(settings: Any) -> Any:
    """The ``core.Air`` of the settings (``reaches=AIR``), or None without air."""
    if not settings.use_air:
        return None
    from ..core.air import Air  # numpy: only when a rope is built

    return Air(float(settings.air_density), float(settings.drag_normal),
               float(settings.drag_tangential))


def panel_text(name: str) -> str:
    """The text a setting is drawn with in the panel (its panel text, else its label)."""
    setting = BY_NAME[name]
    return setting.panel or setting.label
