"""The vocabulary of the settings' declarations (``schema.py``, ``schema_groups.py``):
the kinds of setting, the routes by which one reaches the simulation, ``Check`` and
``Setting``. Nothing here imports bpy or numpy."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

BOOL, INT, FLOAT, ENUM, STRING = "BOOL", "INT", "FLOAT", "ENUM", "STRING"
"""Kinds of setting: the ``bpy.props`` property each one becomes (``BoolProperty``, ...)."""

POINTER = "POINTER"
"""A ``PointerProperty`` to an ID (``options["type"]``: "Object", "Collection", "Action")."""

MODEL = "model"
"""Reaches the core Model as its keyword ``keyword`` (the value converted by kind, an enum
through ``model_values``)."""
STIFFNESS = "stiffness"
"""Reaches the Model through blender/frame/stiffness.py (masses, compliances, bending)."""
PINS = "pins"
"""Decides which particles are pinned (blender/read/pins.py): inverse mass 0 in the Model."""
COLLIDERS = "colliders"
"""Read with each frame's colliders (blender/read/collision_objects.py)."""
RUN = "run"
"""The ``RopeSim`` attribute of the same name (the step's substeps, the frame range)."""
FIELDS = "fields"
"""Decides which force fields act on the rope and how much (blender/frame/inputs.py,
``read_fields``: read at every frame)."""
MAPS = "maps"
"""Names a per-point map (read/maps.py, ``read_maps``) that scales a setting point by point in
the Model (blender/frame/stiffness.py, ``apply_maps``)."""
AIR = "air"
"""Makes the air the rope moves through (``RopeSim.air``, the core's ``Air``)."""
NOWHERE = "nowhere"
"""Reaches no simulation (``enabled``: whether there is one)."""


@dataclass(frozen=True)
class Check:
    """What a valid value is, with the user-facing message when it is not. The properties
    clamp typed values; NaN from a script, or an unknown enum item, still arrives.

    Messages: FLOAT "<noun> must be a number >= <low> <unit> (got <v>)" (``strict``: > low;
    no ``low``: "must be a number"); INT "<noun> must be <low> or more (got <v>)"; ENUM
    "Unknown <noun> <v!r>"; then ``hint`` appended."""

    low: float | None = None
    """The least value (FLOAT, INT), or None: any finite value"""
    strict: bool = False
    """The value must be above ``low``, not equal to it"""
    noun: str = ""
    """The setting in the message; default: its name, capitalised, with spaces"""
    hint: str = ""
    """Appended to the message (what to do instead)"""
    within_coordinates: bool = False
    """|value| must be under ``checks.MAX_COORDINATE`` (a height in world space)"""
    after: str = ""
    """The value must be above this other setting's (with ``message``)"""
    per_substep: bool = False
    """A rate [1/s] whose product with the substep [s] is at most
    ``core.solver.MAX_DAMPING_PER_SUBSTEP`` (``message``; when ``problem`` has the frame)"""
    message: str = ""
    """The message of ``within_coordinates`` / ``after`` / ``per_substep``"""


@dataclass(frozen=True)
class Setting:
    """One setting of ``Object.xpbd``: its property, how it acts, how it is checked."""

    name: str
    """Property identifier (``Object.xpbd.<name>``); saved files and scripts use it"""
    kind: str
    """BOOL, INT, FLOAT, ENUM or STRING"""
    label: str
    """UI name of the property"""
    description: str
    """Tooltip, with the unit in brackets where there is one ([m], [m/N], [kg], [1/s])"""
    default: Any
    unit: str | None = None
    """Unit as the description and the messages write it (None: bools, enums, names)"""
    options: dict[str, Any] = field(default_factory=dict)
    """Further ``bpy.props`` arguments: min, max, soft_min, soft_max, precision, step,
    unit (Blender's unit type, e.g. "LENGTH")"""
    items: tuple[tuple[str, str, str], ...] = ()
    """Enum items (identifier, UI name, tooltip)"""
    reaches: str = NOWHERE
    """How it reaches the simulation: MODEL, STIFFNESS, PINS, COLLIDERS, RUN or NOWHERE"""
    keyword: str = ""
    """With MODEL: the ``core.Model`` keyword (default: ``name``)"""
    model_values: dict[str, str] = field(default_factory=dict)
    """With MODEL and ENUM: enum item -> the Model's value"""
    cache: bool = True
    """A change invalidates the cached frames (part of ``sim.settings_key``)"""
    when: tuple[tuple[str, Any], ...] = ()
    """(setting, value) pairs that must all hold for this setting to matter"""
    shared: str = ""
    """Ropes simulated together must have it equal; the label naming it in the group notes
    ("" = not shared)"""
    check: Check | None = None
    animatable: bool = False
    """Changing it over time makes physical sense (read per frame when keyed or driven)"""
    panel: str = ""
    """Text of the setting in the panel where it differs from ``label`` (panels.py)"""

    @property
    def model_keyword(self) -> str:
        return self.keyword or self.name
