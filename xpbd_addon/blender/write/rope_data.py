"""The mesh or curve a rope writes, as data that objects share (a linked duplicate, Alt-D):
who holds it in Edit Mode, and putting its stored rest shape back."""

from __future__ import annotations

from typing import Any

from ..read import geometry, rest
from ..read.geometry import RopeError
from .kinds import writer_for


def data_editor(obj: Any) -> str | None:
    """The name of the object whose Edit Mode holds ``obj``'s data (``obj`` itself, or a
    linked duplicate sharing its mesh or curve), or None. While one is in Edit Mode the
    data's points are not readable or writable (a mesh has no 'position' attribute then)."""
    if obj.mode == "EDIT":
        return obj.name
    data = obj.data
    if data is None or not getattr(data, "is_editmode", False):
        return None
    import bpy

    return next((o.name for o in bpy.data.objects if o.data == data and o.mode == "EDIT"),
                "another object")


def restore_rest(obj: Any) -> bool:
    """Write the stored rest shape back into the object's data, if there is one that still
    fits its topology. Returns True if it did."""
    if obj.type not in ("MESH", "CURVE") or data_editor(obj) is not None:
        return False
    try:
        layout = geometry.build_layout(obj)
    except RopeError:
        return False
    stored = rest.load(obj, layout)  # checked: never a NaN, never another topology
    if stored is None:
        return False
    writer = writer_for(layout.kind)
    writer.write_rest(obj.data, layout, stored)
    writer.restore_tears(obj, layout)
    return True


def rest_unusable(obj: Any) -> bool:
    """True if the object's data holds a stored rest shape that can never be written back
    (another topology, wrong type, NaN); False if it has none, it fits, or the object cannot
    be read now (Edit Mode, shape keys, linked data: it may fit again later)."""
    if (obj.type not in ("MESH", "CURVE") or data_editor(obj) is not None
            or not rest.has_rest(obj)):
        return False
    try:
        layout = geometry.build_layout(obj)
    except RopeError:
        return False
    return rest.inspect(obj, layout).problem is not None
