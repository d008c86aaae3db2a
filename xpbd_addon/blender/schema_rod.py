"""The settings of the *Shape & Twist* panel: a rope as a rod (``core.Rod``), declared as
every setting of ``Object.xpbd`` is (``schema.Setting``) and appended to ``schema.SETTINGS``.

They reach the core through blender/frame/stiffness.py (``model_arguments``), which makes the
Model a rod where one of them asks for it: bending with a modelled shape that is not straight,
twist, or plasticity. A straight rope with its defaults stays a plain rope, bit for bit.
"""

from __future__ import annotations

from .schema_types import BOOL, ENUM, FLOAT, STIFFNESS, Check, Setting

_TWIST = (("use_twist", True),)
_PLASTIC = (("use_plasticity", True),)

SETTINGS: tuple[Setting, ...] = (
    Setting(
        "bend_rest", ENUM, "Rest Shape", default="MODELLED",
        items=(("MODELLED", "Modelled",
                "Bending holds the shape the rope was modelled in: a curl stays a curl and "
                "sags under gravity as its bending stiffness allows"),
               ("STRAIGHT", "Straight",
                "Bending pulls towards straight (files made before the rest shape existed; "
                "a rope modelled coiled that should uncoil)")),
        description="What bending pulls the rope back to (with Bending on)",
        reaches=STIFFNESS, check=Check(noun="rest shape")),
    Setting(
        "use_twist", BOOL, "Twist", default=False,
        description="Simulate the rope's twist with a torsional stiffness of its own: a pinned "
                    "end turned by its object or parent bone turns the rope, and the turn "
                    "travels down it. Off: a rope with a modelled shape twists as a solid "
                    "round rod of its bending stiffness (GJ = EI / 1.3)",
        reaches=STIFFNESS),
    Setting(
        "twist_stiffness", FLOAT, "Twist Stiffness", default=1.5e-3, unit="N m^2",
        options=dict(min=1e-9, soft_max=10.0, precision=5),
        description="Torsional stiffness GJ [N m^2]: a twist of 1 rad over 1 m takes a torque "
                    "of GJ (1.5e-3 = a 10 mm rope; a solid round rod has EI / 1.3)",
        reaches=STIFFNESS, when=_TWIST, check=Check(low=0.0, strict=True),
        panel="Twist GJ (N m\u00b2)"),
    Setting(
        "use_plasticity", BOOL, "Plasticity", default=False,
        description="Bending beyond a yield becomes permanent, as in a wire (needs Bending)",
        reaches=STIFFNESS),
    Setting(
        "plastic_yield", FLOAT, "Yield Curvature", default=2.0, unit="1/m",
        options=dict(min=0.0, soft_max=100.0, precision=3),
        description="Curvature [1/m] beyond the rest shape's at which the rope yields: bent "
                    "further, its rest shape follows (2 = bent round a 0.5 m radius)",
        reaches=STIFFNESS, when=_PLASTIC, check=Check(low=0.0), panel="Yield (1/m)"),
    Setting(
        "plastic_creep", FLOAT, "Creep Rate", default=10.0, unit="1/s",
        options=dict(min=0.0, soft_max=100.0, precision=2),
        description="How fast a yielded rope's rest shape follows the bend [1/s] (10: within "
                    "a tenth of a second)",
        reaches=STIFFNESS, when=_PLASTIC, check=Check(low=0.0), panel="Creep (1/s)"),
)
