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
from bpy.props import BoolProperty, FloatProperty, IntProperty, PointerProperty, StringProperty

from .blender import rest, sim

DEFAULT_COMPLIANCE = 1e-6
"""Default alpha [m/N]: a 1 m segment under 1 N of tension stretches 1 um, a rope, not an
elastic band; at 0.05 kg per point a 100-point rope stretches well under 1 %."""


def _on_enabled(self: Any, context: Any) -> None:
    obj = self.id_data
    if self.enabled:
        sim.forget(obj)  # retry an object that failed before
        return
    # Turning a rope off puts the modelled shape back and removes the stored copy.
    if sim.restore_rest(obj):
        rest.clear(obj)
    sim.forget(obj)


class XPBD_PG_settings(bpy.types.PropertyGroup):
    """Rope settings of one object (``Object.xpbd``)."""

    if TYPE_CHECKING:
        enabled: bool
        compliance: float
        substeps: int
        vertex_mass: float
        damping: float
        pin_group: str
        pin_first: bool
        pin_last: bool
        frame_start: int
        frame_end: int
    else:
        enabled: BoolProperty(
            name="XPBD Rope", default=False, update=_on_enabled,
            description="Simulate this mesh or curve as a rope on frame change. Turning it off "
                        "restores the rest shape")
        compliance: FloatProperty(
            name="Compliance", default=DEFAULT_COMPLIANCE, min=0.0, soft_max=0.01,
            precision=7, step=0.0001,
            description="Compliance alpha [m/N], the inverse stiffness of every segment: under "
                        "a tension T a segment stretches by alpha*T. 0 = inextensible, "
                        "1e-6 = rope, 1e-3 = elastic band. Independent of the substeps")
        substeps: IntProperty(
            name="Substeps", default=10, min=1, max=1000, soft_max=100,
            description="XPBD substeps S per frame [count]; each does one constraint sweep. "
                        "More substeps = more accurate (less solver stretch), not stiffer")
        vertex_mass: FloatProperty(
            name="Vertex Mass", default=0.05, min=1e-6, soft_max=10.0, unit="MASS",
            precision=4,
            description="Mass of every point [kg]. Pinned points have infinite mass")
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


CLASSES = (XPBD_PG_settings,)


def register() -> None:
    for cls in CLASSES:
        bpy.utils.register_class(cls)
    bpy.types.Object.xpbd = PointerProperty(  # type: ignore[attr-defined,func-returns-value]
        type=XPBD_PG_settings, name="XPBD Rope")


def unregister() -> None:
    del bpy.types.Object.xpbd  # type: ignore[attr-defined]
    for cls in reversed(CLASSES):
        bpy.utils.unregister_class(cls)
