"""The settings of the *Fields & Air* panel and the per-point maps, declared as every setting
of ``Object.xpbd`` is (``schema.Setting``) and appended to ``schema.SETTINGS`` (in this
order, after the collision settings): kept here so that schema.py stays readable.

Fields and air (issue 31): which force fields act and how much (``FIELDS``: read at every
frame by blender/frame/inputs.py, ``read_fields``), and the air the rope moves through
(``AIR``: ``schema.air_of``, the core's ``Air``, shared by ropes stepped together). Maps
(``MAPS``): a vertex group or the curve points' Weight or Radius that scales a setting point
by point (read/maps.py, ``read_maps``; blender/frame/stiffness.py, ``apply_maps``).
"""

from __future__ import annotations

from .schema_types import AIR, BOOL, FIELDS, FLOAT, MAPS, POINTER, STRING, Check, Setting

_MAP_SOURCE = ("Meshes: a vertex group; curves: 'weight' or 'radius' (the points' Weight or "
               "Radius, read up to 1). ")
"""How every map names where its weights are (read/maps.py)"""


def _scaled_map(name: str, scaled: str, most: float, note: str = "") -> tuple[Setting, ...]:
    """A map that scales the setting ``name`` point by point (``<name>_map``) and its factor
    at weight 1 (``<name>_map_max``): ``scaled`` says what it scales, ``most`` the default
    factor, ``note`` an example."""
    label = name.capitalize()
    return (
        Setting(
            f"{name}_map", STRING, f"{label} Map", default="",
            description=f"{_MAP_SOURCE}A point of weight w has {scaled} scaled from 1x at w "
                        f"= 0 to {label} Max at w = 1{note}. Empty = none",
            reaches=MAPS, panel=label),
        Setting(
            f"{name}_map_max", FLOAT, f"{label} Max", default=most, unit="x",
            options=dict(min=1e-6, soft_max=100.0, precision=3),
            description=f"The factor [x] the {label} Map gives a weight of 1 (the {name} at "
                        "weight 0 is the setting's)",
            reaches=MAPS, check=Check(low=0.0, strict=True), panel="Max"),
    )


SETTINGS: tuple[Setting, ...] = (
    # Per-point maps (read/maps.py reads them when the rope is made).
    *_scaled_map("mass", "the point's mass (Vertex Mass, or the Material's)", 10.0),
    *_scaled_map("stiffness", "the segment's stretch stiffness (1/Compliance, or EA; a "
                              "segment takes the mean of its two points)", 10.0),
    *_scaled_map("radius", "the point's Radius (collisions and the air's drag)", 2.0),
    *_scaled_map("damping", "the Damping", 10.0,
                 note=" (a tail's tip calmer than its root, a frayed end)"),
    Setting(
        "pin_map", STRING, "Pin Map", default="",
        description=_MAP_SOURCE + "How firmly each point is held where "
                    "the object puts it, as Soft Body's goal: weight 1 pins it, 0 leaves it "
                    "free, a weight w between holds it by a spring of Pin Stiffness * w / "
                    "(1 - w). Empty = none (Pin Group and the point pins still pin)",
        reaches=MAPS, panel="Pin"),
    Setting(
        "pin_map_stiffness", FLOAT, "Pin Stiffness", default=100.0, unit="N/m",
        options=dict(min=1e-6, soft_max=10000.0, precision=2),
        description="The spring [N/m] that holds a point of Pin Map weight 0.5 to its place "
                    "(weight w: Pin Stiffness * w / (1 - w))",
        reaches=MAPS, check=Check(low=0.0, strict=True), panel="Stiffness (N/m)"),
    # Fields & Air (blender/frame/inputs.py reads the fields of each frame; the air is the
    # core's Air, held once per Model: ropes stepped together share it).
    Setting(
        "effector_collection", POINTER, "Field Collection", default=None,
        options=dict(type="Collection"),
        description="Only the force fields in this collection act on the rope; empty = "
                    "every visible force field of the scene (as Blender's cloth)",
        reaches=FIELDS, panel="Collection"),
    Setting(
        "field_weight", FLOAT, "Field Weight", default=1.0, unit="-",
        options=dict(min=0.0, soft_max=2.0, precision=3),
        description="How much force fields act on the rope [-]: their forces and their wind "
                    "speed are scaled by it. 0 = fields are ignored",
        reaches=FIELDS, check=Check(low=0.0), animatable=True, panel="Weight"),
    Setting(
        "use_air", BOOL, "Air", default=False,
        description="The air drags the rope as a cylinder of the rope's Radius: a Wind field "
                    "moves it, and swinging through still air slows it. Needs Radius > 0. "
                    "New ropes (Add > Curve > XPBD Rope) have it on",
        reaches=AIR, shared="Air"),
    Setting(
        "air_density", FLOAT, "Air Density", default=1.2, unit="kg/m^3",
        options=dict(min=0.0, soft_max=1000.0, precision=3),
        description="Density rho of the air [kg/m^3]: 1.2 = air at sea level, 1000 = water",
        reaches=AIR, when=(("use_air", True),), shared="Air Density", check=Check(low=0.0),
        panel="Density (kg/m\u00b3)"),
    Setting(
        "drag_normal", FLOAT, "Normal Drag", default=1.2, unit="-",
        options=dict(min=0.0, soft_max=3.0, precision=3),
        description="Drag coefficient C_n across the rope [-]: 1.2 = a smooth round cable; "
                    "the push of a wind u across the rope is 0.5 rho C_n d u^2 per metre",
        reaches=AIR, when=(("use_air", True),), shared="Normal Drag", check=Check(low=0.0)),
    Setting(
        "drag_tangential", FLOAT, "Tangential Drag", default=0.01, unit="-",
        options=dict(min=0.0, soft_max=0.1, precision=4),
        description="Skin-friction coefficient C_t along the rope [-] on its surface pi d "
                    "per metre: 0.01 = smooth cable, more for a hairy rope",
        reaches=AIR, when=(("use_air", True),), shared="Tangential Drag",
        check=Check(low=0.0)),
)
"""Fields & Air and the maps, in their order on ``Object.xpbd``."""
