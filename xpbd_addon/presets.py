"""Material presets: ``xpbd.material_preset`` fills the Material-mode stiffness fields of the
active object from ``core.material.PRESETS`` (string, rope, steel cable, chain), and the
``XPBD_MT_material_presets`` menu lists them in the panel's Stiffness header.

The presets live in the core (plain data, tested there) rather than as Blender preset files:
they are part of the physics, need no writable preset folder and behave the same in scripts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import bpy
from bpy.props import EnumProperty

if TYPE_CHECKING:
    from .core.material import RopeMaterial

_items: tuple[tuple[str, str, str], ...] = ()
_by_identifier: dict[str, RopeMaterial] = {}


def preset_items() -> tuple[tuple[str, str, str], ...]:
    """Enum items of the presets: identifier 'STEEL_CABLE', label 'Steel Cable', description
    with the preset's values and units.

    Built on first use, not at import: ``core.material`` imports numpy, which registering the
    add-on must not load (Blender 4.2 does not at start; its start-up budget). So the
    operator's enum takes its items from a callback. Kept in a module global because Blender
    needs the strings of callback items to stay alive."""
    global _items
    if not _items:
        from .core.material import PRESETS

        _items = tuple(
            (name.upper().replace(" ", "_"), name.title(),
             f"{name.title()}: {m.linear_density:g} kg/m, "
             + ("inextensible" if m.stretch_stiffness is None
                else f"EA {m.stretch_stiffness:g} N")
             + ", " + ("bends freely" if m.bend_stiffness is None
                       else f"EI {m.bend_stiffness:g} N m^2"))
            for name, m in PRESETS.items())
        _by_identifier.update({item[0]: PRESETS[name]
                               for item, name in zip(_items, PRESETS, strict=True)})
    return _items


def _enum_items(_self: Any, _context: Any) -> tuple[tuple[str, str, str], ...]:
    return preset_items()


def apply_material(settings: Any, material: RopeMaterial) -> None:
    """Write ``material`` into the Material-mode fields of ``settings`` (``Object.xpbd``) and
    switch it to Material mode. A field the material leaves out (None) turns its toggle:
    inextensible, or no bend stiffness; the number in the field is kept for later."""
    settings.stiffness_mode = "MATERIAL"
    settings.linear_density = material.linear_density
    settings.inextensible = material.stretch_stiffness is None
    if material.stretch_stiffness is not None:
        settings.stretch_stiffness = material.stretch_stiffness
    settings.use_bend_stiffness = material.bend_stiffness is not None
    if material.bend_stiffness is not None:
        settings.bend_stiffness = material.bend_stiffness


class XPBD_OT_material_preset(bpy.types.Operator):
    """Set the rope's material (density, stretch and bend stiffness per length) to a preset"""

    bl_idname = "xpbd.material_preset"
    bl_label = "Rope Material Preset"
    bl_options = {"REGISTER", "UNDO"}

    if TYPE_CHECKING:
        preset: str
    else:
        preset: EnumProperty(name="Preset", items=_enum_items,
                             description="Material to copy into the Stiffness settings")

    @classmethod
    def poll(cls, context: Any) -> bool:
        return context.object is not None

    def execute(self, context: Any) -> Any:
        obj = context.object
        label = next(item[1] for item in preset_items() if item[0] == self.preset)
        apply_material(obj.xpbd, _by_identifier[self.preset])
        self.report({"INFO"}, f"'{obj.name}': {label} material")
        return {"FINISHED"}


class XPBD_MT_material_presets(bpy.types.Menu):
    bl_label = "Material Presets"

    def draw(self, context: Any) -> None:
        layout: Any = self.layout
        for identifier, label, _description in preset_items():
            layout.operator(XPBD_OT_material_preset.bl_idname, text=label).preset = identifier


CLASSES = (XPBD_OT_material_preset, XPBD_MT_material_presets)


def register() -> None:
    for cls in CLASSES:
        bpy.utils.register_class(cls)


def unregister() -> None:
    for cls in reversed(CLASSES):
        bpy.utils.unregister_class(cls)
