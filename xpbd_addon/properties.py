"""``Object.xpbd``: the rope settings of an object (a PropertyGroup, saved in the .blend).

Only settings live here. Simulation state (model, cache) is in ``blender.sim.REGISTRY`` and is
rebuilt from these settings and the stored rest shape; any change of a setting invalidates
the cache (the next frame change replays from the start frame with the new values).
Settings are read as they are when the simulation is (re)built; animating them is not
supported (each change restarts the simulation).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import bpy
from bpy.props import (
    BoolProperty,
    EnumProperty,
    FloatProperty,
    IntProperty,
    PointerProperty,
    StringProperty,
)

from . import preparation
from .bake_operators import XPBD_PG_bake

DEFAULT_COMPLIANCE = 1e-6
"""Default alpha [m/N]: a 1 m segment under 1 N of tension stretches 1 um, a rope, not an
elastic band; at 0.05 kg per point a 100-point rope stretches well under 1 %."""


def _on_enabled(self: Any, context: Any) -> None:
    # Imported here, not at the top: they load numpy, which registering must not (Blender 4.2
    # has not loaded it at start; issue 5's start-up budget).
    from .blender import rest, sim

    obj = self.id_data
    if self.enabled:
        sim.forget(obj)  # retry an object that failed before
        # The kernels start compiling (or loading) now, on a thread, not at the first frame.
        preparation.start_default()
        return
    sim.forget(obj)
    # Turning a rope off puts the modelled shape back and removes the stored copy, unless
    # another rope uses the same data (a linked duplicate): the copy is its rest shape too,
    # and the shape in the data is its simulation.
    if rest.other_users(obj, bpy.data.objects):
        return
    if self.bake.baked:
        # The baked animation plays over the data; Free Bake puts the rest shape back and
        # needs it then.
        return
    if sim.restore_rest(obj) or sim.rest_unusable(obj):
        # A rest shape that no longer fits (topology changed, damaged data) cannot come
        # back: the rope is off, the current shape is the user's.
        rest.clear(obj)


class XPBD_PG_settings(bpy.types.PropertyGroup):
    """Rope settings of one object (``Object.xpbd``)."""

    if TYPE_CHECKING:
        enabled: bool
        bake: Any
        compliance: float
        substeps: int
        vertex_mass: float
        damping: float
        pin_group: str
        pin_first: bool
        pin_last: bool
        frame_start: int
        frame_end: int
        stiffness_mode: str
        solver: str
        integrator: str
        iterations: int
        use_bending: bool
        bending_compliance: float
        linear_density: float
        inextensible: bool
        stretch_stiffness: float
        use_bend_stiffness: bool
        bend_stiffness: float
        radius: float
        use_collision: bool
        use_ground: bool
        ground_height: float
        ground_friction: float
        use_self_collision: bool
        self_friction: float
        sleep_speed: float
    else:
        bake: PointerProperty(type=XPBD_PG_bake, name="Bake",
                              description="Bake settings and the record of a bake")
        enabled: BoolProperty(
            name="XPBD Rope", default=False, update=_on_enabled,
            description="Simulate this mesh or curve as a rope on frame change. Turning it off "
                        "restores the rest shape")
        compliance: FloatProperty(
            name="Compliance", default=DEFAULT_COMPLIANCE, min=0.0, soft_max=0.01,
            precision=7, step=0.0001,
            description="Per Point mode: compliance alpha [m/N], the inverse stiffness of "
                        "every segment: under "
                        "a tension T a segment stretches by alpha*T. 0 = inextensible, "
                        "1e-6 = rope, 1e-3 = elastic band. Independent of the substeps")
        substeps: IntProperty(
            name="Substeps", default=10, min=1, max=1000, soft_max=100,
            description="XPBD substeps S per frame [count]; each predicts, solves the "
                        "constraints and updates velocities. More substeps = more accurate "
                        "motion, not stiffer")
        vertex_mass: FloatProperty(
            name="Vertex Mass", default=0.05, min=1e-6, soft_max=10.0, unit="MASS",
            precision=4,
            description="Per Point mode: mass of every point [kg]. Pinned points have "
                        "infinite mass")
        damping: FloatProperty(
            name="Damping", default=0.1, min=0.0, soft_max=10.0, precision=3,
            description="Velocity damping rate d [1/s]: free motion decays as exp(-d*t), like "
                        "air drag (1 = speed falls to 37 % in one second). Does not change "
                        "how the rope hangs at rest. 0 = none")
        pin_group: StringProperty(
            name="Pin Group", default="",
            description="Meshes: vertex group of the pinned vertices (weight > 0 = pinned). "
                        "Pinned vertices follow the object, its parent, bones and deform "
                        "modifiers such as Armature")
        pin_first: BoolProperty(
            name="Pin First Point", default=True,
            description="Curves: pin the first point of every spline to the object")
        pin_last: BoolProperty(
            name="Pin Last Point", default=False,
            description="Curves: pin the last point of every spline to the object")
        frame_start: IntProperty(
            name="Start", default=1,
            description="Frame [frame] at which the simulation starts from the rest shape; "
                        "at or before it the rope is reset")
        frame_end: IntProperty(
            name="End", default=250,
            description="Last simulated frame [frame]; later frames hold this frame's shape")
        # Stiffness (blender/stiffness.py turns these into the core Model's arguments).
        stiffness_mode: EnumProperty(
            name="Stiffness", default="POINT",
            items=(("POINT", "Per Point",
                    "Compliance of every segment [m/N] and mass of every point [kg], as in "
                    "plain XPBD; resampling the rope changes its stretch and weight"),
                   ("MATERIAL", "Material",
                    "Density [kg/m], stretch stiffness EA [N] and bend stiffness EI [N m^2] "
                    "given per length: the rope behaves the same at any point count")),
            description="How the rope's mass and stiffness are given")
        solver: EnumProperty(
            name="Solver", default="DIRECT",
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
                        "point count")
        integrator: EnumProperty(
            name="Integrator", default="EULER",
            items=(("EULER", "Implicit Euler",
                    "Each substep implicit from the last: the most robust; slow swings lose "
                    "some amplitude to it (a 2 m pendulum from 120 degrees keeps 89 after "
                    "20 s at 20 substeps)"),
                   ("BDF2", "Second Order (BDF2)",
                    "Direct solver: the second-order backward formula from each frame's second "
                    "substep on; keeps nearly all of a slow swing (117 of 120 degrees) at the "
                    "same stability. Frames with contacts use implicit Euler")),
            description="How the direct solve steps in time")
        iterations: IntProperty(
            name="Iterations", default=1, min=1, max=1000, soft_max=50,
            description="Solver iterations per substep [count]: the least Newton steps of "
                        "the direct solve (it takes more by itself until the rope holds its "
                        "length within 0.1 %) or Gauss-Seidel sweeps")
        use_bending: BoolProperty(
            name="Bending", default=False,
            description="Per Point mode: resist bending at every point (Direct solver only)")
        bending_compliance: FloatProperty(
            name="Bending Compliance", default=10.0, min=0.0, soft_max=1e4, precision=3,
            description="Per Point mode: bending compliance alpha_b [1/(N m)] at every point, "
                        "the inverse bending stiffness of the rope at a joint: 0 = rigid, "
                        "larger = softer. For a material EI [N m^2] with segments of length "
                        "l [m], alpha_b = l/EI")
        linear_density: FloatProperty(
            name="Density", default=0.065, min=1e-6, soft_max=10.0, precision=4,
            description="Material mode: mass per length [kg/m] (0.065 = a 10 mm rope, 1.4 = "
                        "an 8 mm chain). Point masses follow from the segment lengths")
        inextensible: BoolProperty(
            name="Inextensible", default=False,
            description="Material mode: the rope does not stretch at all (infinite stretch "
                        "stiffness)")
        stretch_stiffness: FloatProperty(
            name="Stretch Stiffness", default=3.0e4, min=1e-6, soft_max=1e8, precision=1,
            description="Material mode: axial stiffness EA [N], the tension that would double "
                        "a length: under a tension T the rope stretches T/EA per metre "
                        "(3e4 = a polyester rope, 2e6 = a steel cable)")
        use_bend_stiffness: BoolProperty(
            name="Bending", default=True,
            description="Material mode: the rope resists bending (a cable); off = bends "
                        "freely (a chain, a string). Direct solver only")
        bend_stiffness: FloatProperty(
            name="Bend Stiffness", default=2.0e-3, min=1e-9, soft_max=10.0, precision=5,
            description="Material mode: bending stiffness EI [N m^2]: a clamped end of length "
                        "L [m] and weight q [N/m] droops by q L^4/(8 EI) (2e-3 = a 10 mm "
                        "rope, 0.3 = a 6 mm steel cable)")
        # Collision (blender/colliders.py reads the colliders of each frame).
        radius: FloatProperty(
            name="Radius", default=0.005, min=0.0, soft_max=0.1, unit="LENGTH", precision=4,
            description="Rope radius r [m], half its thickness: contacts keep the rope's "
                        "points r (+ the collider's Thickness Outer) away from colliders and "
                        "rope segments 2r apart. 0 = a thin line")
        use_collision: BoolProperty(
            name="Collision Objects", default=True,
            description="Collide with visible mesh objects that have Collision physics; "
                        "their Thickness Outer [m] and Friction (mu = Friction/100, as "
                        "Blender's cloth) are used")
        use_ground: BoolProperty(
            name="Ground", default=False,
            description="An infinite ground plane at Height (world z): the rope rests on it")
        ground_height: FloatProperty(
            name="Height", default=0.0, unit="LENGTH", precision=3,
            description="World height z [m] of the ground plane")
        ground_friction: FloatProperty(
            name="Friction", default=0.5, min=0.0, soft_max=2.0, precision=2,
            description="Coulomb friction coefficient mu [-] of the ground (static and "
                        "dynamic): 0 = ice, 0.5 = rope on wood, 1 = rubber")
        use_self_collision: BoolProperty(
            name="Self Collision", default=False,
            description="Rope segments of this object push each other apart (a rope coils "
                        "on the floor, two splines can twist around each other). Needs a "
                        "radius > 0; costs extra time")
        self_friction: FloatProperty(
            name="Friction", default=0.2, min=0.0, soft_max=2.0, precision=2,
            description="Coulomb friction coefficient mu [-] between rope segments")
        sleep_speed: FloatProperty(
            name="Sleep Below", default=1e-5, min=0.0, soft_max=1e-3, precision=6,
            unit="VELOCITY",
            description="With collisions on, a rope at rest moving slower than this [m/s] "
                        "sleeps: it keeps its shape and costs almost nothing until something "
                        "moves it. 0 = never sleep")


CLASSES = (XPBD_PG_bake, XPBD_PG_settings)
"""XPBD_PG_bake first: XPBD_PG_settings points at it."""


def register() -> None:
    for cls in CLASSES:
        bpy.utils.register_class(cls)
    bpy.types.Object.xpbd = PointerProperty(  # type: ignore[attr-defined,func-returns-value]
        type=XPBD_PG_settings, name="XPBD Rope")


def unregister() -> None:
    del bpy.types.Object.xpbd  # type: ignore[attr-defined]
    for cls in reversed(CLASSES):
        bpy.utils.unregister_class(cls)
