"""``Object.xpbd``: the rope settings of an object (a PropertyGroup, saved in the .blend).

Only settings live here. Each one is declared once, in ``blender.schema`` (type, UI text,
unit, default, range, what it does to the simulation); this module turns the declarations
into ``bpy.props`` properties and adds what needs bpy (the update and poll callbacks); the
attachment and bake groups are declared the same way (``blender.schema_groups``).
Simulation state (model, cache) is in ``blender.frame.sim.REGISTRY`` and is rebuilt from these
settings and the stored rest shape; a change of a setting the cache depends on invalidates
the cache (the next frame change replays from the start frame with the new values).
Settings marked animatable in the schema may be keyframed or driven: they are read at every
frame (blender/frame/changes.py), and editing their animation invalidates the frames after the
edit only.
"""

from __future__ import annotations

from typing import Any

import bpy
from bpy.props import (
    BoolProperty,
    CollectionProperty,
    EnumProperty,
    FloatProperty,
    IntProperty,
    PointerProperty,
    StringProperty,
)

from . import preparation
from .blender import schema, schema_groups


def _on_enabled(self: Any, context: Any) -> None:
    # Imported here, not at the top: they load numpy, which registering must not (Blender 4.2
    # has not loaded it at start; its start-up budget).
    from .blender.frame import sim
    from .blender.read import rest
    from .blender.write import rope_data

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
    if rope_data.restore_rest(obj) or rope_data.rest_unusable(obj):
        # A rest shape that no longer fits (topology changed, damaged data) cannot come
        # back: the rope is off, the current shape is the user's.
        rest.clear(obj)


def _is_armature(_settings: Any, obj: Any) -> bool:
    return obj.type == "ARMATURE"


PROPERTIES: dict[str, Any] = {
    schema.BOOL: BoolProperty, schema.INT: IntProperty, schema.FLOAT: FloatProperty,
    schema.ENUM: EnumProperty, schema.STRING: StringProperty,
    schema_groups.POINTER: PointerProperty}
"""The ``bpy.props`` function of each kind of setting."""

UPDATES = {"enabled": _on_enabled}
"""Update callbacks by setting of ``Object.xpbd``."""

BAKE_POLLS = {"bone_armature": _is_armature}
"""Poll callbacks by setting of ``Object.xpbd.bake`` (which objects a pointer may take)."""


def declared_properties(settings: tuple[schema.Setting, ...],
                        callbacks: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The ``bpy.props`` properties of ``settings`` (schema declarations), in their order;
    ``callbacks``: keyword ("update", "poll") -> setting name -> function."""
    out: dict[str, Any] = {}
    for setting in settings:
        extra = dict(setting.options)
        if setting.items:
            extra["items"] = setting.items
        for keyword, functions in callbacks.items():
            if setting.name in functions:
                extra[keyword] = functions[setting.name]
        if setting.kind == schema_groups.POINTER:
            # An ID pointer has no default; its struct is named in the declaration.
            extra["type"] = getattr(bpy.types, extra["type"])
        else:
            extra["default"] = setting.default
        if setting.label:  # without one, Blender names the property by its identifier
            extra["name"] = setting.label
        out[setting.name] = PROPERTIES[setting.kind](description=setting.description,
                                                     **extra)
    return out


def settings_properties() -> dict[str, Any]:
    """The properties of ``Object.xpbd``: the bake group, then every ``schema.SETTINGS``."""
    out: dict[str, Any] = {
        "bake": PointerProperty(  # type: ignore[func-returns-value]
            type=XPBD_PG_bake, name="Bake",
            description="Bake settings and the record of a bake"),
        # A collection of attachments (schema_groups.ATTACHMENT): its fixed fields are part
        # of the cache key (read/attachments.py, key), ``enabled`` is read at every frame.
        "attachments": CollectionProperty(  # type: ignore[func-returns-value]
            type=XPBD_PG_attachment, name="Attachments",
            description="Points of the rope held by other objects or bones while enabled"),
        "active_attachment": IntProperty(  # type: ignore[func-returns-value]
            name="Active Attachment", default=0, min=0,
            description="The attachment shown below the list")}
    out.update(declared_properties(schema.SETTINGS, {"update": UPDATES}))
    return out


class XPBD_PG_attachment(bpy.types.PropertyGroup):
    """One attachment of a rope (an item of ``Object.xpbd.attachments``), built from
    ``schema_groups.ATTACHMENT`` at each ``register``."""


class XPBD_PG_bake(bpy.types.PropertyGroup):
    """Bake settings and the record of a bake (``Object.xpbd.bake``), built from
    ``schema_groups.BAKE`` at each ``register``."""


class XPBD_PG_settings(bpy.types.PropertyGroup):
    """Rope settings of one object (``Object.xpbd``), built from ``blender.schema``: the
    properties are made afresh at each ``register`` and dropped at ``unregister``, as a class
    body's annotations are (Blender 4.2 and 4.5 crash at exit while a property with an update
    callback outlives its registration)."""


CLASSES = (XPBD_PG_bake, XPBD_PG_attachment, XPBD_PG_settings)
"""XPBD_PG_bake and XPBD_PG_attachment first: XPBD_PG_settings points at them."""


def register() -> None:
    XPBD_PG_attachment.__annotations__ = declared_properties(schema_groups.ATTACHMENT, {})
    XPBD_PG_bake.__annotations__ = declared_properties(schema_groups.BAKE,
                                                       {"poll": BAKE_POLLS})
    XPBD_PG_settings.__annotations__ = settings_properties()
    for cls in CLASSES:
        bpy.utils.register_class(cls)
    bpy.types.Object.xpbd = PointerProperty(  # type: ignore[attr-defined,func-returns-value]
        type=XPBD_PG_settings, name="XPBD Rope")


def unregister() -> None:
    del bpy.types.Object.xpbd  # type: ignore[attr-defined]
    for cls in reversed(CLASSES):
        bpy.utils.unregister_class(cls)
    for cls in CLASSES:
        cls.__annotations__ = {}
