"""Attachments (``Object.xpbd.attachments``, declared in ``blender/schema_groups.py``): points
of the rope held by another object or a bone while ``enabled``; here their list in the Pins
panel and its add and remove operators (``xpbd.attachment_add``, ``xpbd.attachment_remove``).

An attachment grabs the rope where it is: when it turns on, its points keep the offset they
have relative to the target at that moment, and follow the target (its animation, parents,
the bone's pose) until it turns off (``enabled`` is keyframable) or its force passes
``break_force``. The simulation side is ``blender/read/attachments.py``.
"""

from __future__ import annotations

from typing import Any

import bpy


class XPBD_UL_attachments(bpy.types.UIList):  # type: ignore[misc]
    """The attachments of a rope, one line each: target (and bone), on/off."""

    def draw_item(self, context: Any, layout: Any, data: Any, item: Any, icon: Any,
                  active_data: Any, active_property: str | None, index: int | None = 0,
                  flt_flag: int | None = 0) -> None:
        target = item.target.name if item.target is not None else "(no target)"
        if item.subtarget:
            target += f" : {item.subtarget}"
        layout.label(text=target, icon="CONSTRAINT")
        layout.prop(item, "enabled", text="")


class _OnRope:
    """What the attachment operators share: they act on the active mesh or curve."""

    @classmethod
    def poll(cls, context: Any) -> bool:
        obj = context.object
        return obj is not None and obj.type in {"MESH", "CURVE"}


class XPBD_OT_attachment_add(_OnRope, bpy.types.Operator):
    """Add an attachment to the active rope: points held by an object or a bone"""

    bl_idname = "xpbd.attachment_add"
    bl_label = "Add Attachment"
    bl_options = {"REGISTER", "UNDO"}

    def execute(self, context: Any) -> Any:
        settings = context.object.xpbd
        item = settings.attachments.add()
        item.name = f"Attachment {len(settings.attachments)}"
        settings.active_attachment = len(settings.attachments) - 1
        context.object.update_tag()  # the evaluated copy gets the new item
        return {"FINISHED"}


class XPBD_OT_attachment_remove(_OnRope, bpy.types.Operator):
    """Remove the active attachment of the active rope"""

    bl_idname = "xpbd.attachment_remove"
    bl_label = "Remove Attachment"
    bl_options = {"REGISTER", "UNDO"}

    def execute(self, context: Any) -> Any:
        settings = context.object.xpbd
        index = settings.active_attachment
        if not 0 <= index < len(settings.attachments):
            self.report({"ERROR"}, "No attachment selected to remove")
            return {"CANCELLED"}
        settings.attachments.remove(index)
        settings.active_attachment = max(0, min(index, len(settings.attachments) - 1))
        context.object.update_tag()
        return {"FINISHED"}


def draw(layout: Any, obj: Any) -> None:
    """The attachments list and the active item's settings (the Pins panel calls this)."""
    settings = obj.xpbd
    layout.label(text="Attachments")
    row = layout.row()
    row.template_list("XPBD_UL_attachments", "", settings, "attachments", settings,
                      "active_attachment", rows=2)
    column = row.column(align=True)
    column.operator("xpbd.attachment_add", icon="ADD", text="")
    column.operator("xpbd.attachment_remove", icon="REMOVE", text="")
    index = settings.active_attachment
    if not 0 <= index < len(settings.attachments):
        return
    item = settings.attachments[index]
    layout.prop(item, "target")
    if item.target is not None and item.target.type == "ARMATURE":
        layout.prop_search(item, "subtarget", item.target.data, "bones")
    if obj.type == "MESH":
        layout.prop_search(item, "vertex_group", obj, "vertex_groups")
    else:
        layout.prop(item, "spline")
        layout.prop(item, "point")
    layout.prop(item, "enabled")
    layout.prop(item, "compliance")
    layout.prop(item, "break_force")


CLASSES = (XPBD_UL_attachments, XPBD_OT_attachment_add, XPBD_OT_attachment_remove)
"""Registered by ``register``; ``XPBD_PG_attachment`` is registered with the settings
(properties.py), before the PropertyGroup that holds the collection."""


def register() -> None:
    for cls in CLASSES:
        bpy.utils.register_class(cls)


def unregister() -> None:
    for cls in reversed(CLASSES):
        bpy.utils.unregister_class(cls)
