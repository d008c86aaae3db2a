"""The registered RNA of ``Object.xpbd`` (and its groups: ``bake``, the items of
``attachments``) as plain data, for
``test_settings_schema``: names, types, UI text, defaults, ranges, units and enum items.

    python tests/blender/rna_snapshot.py tests/blender/object_xpbd_rna.json

writes the snapshot the test compares against (take it from a commit whose properties are
the reference; the add-on is registered in a fresh Blender for it)."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

FIELDS = ("type", "subtype", "unit", "name", "description", "default", "hard_min", "hard_max",
          "soft_min", "soft_max", "precision", "step", "is_array", "array_length",
          "is_animatable", "is_hidden", "is_skip_save", "is_enum_flag")
"""RNA attributes compared, where a property has them."""


def _plain(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    if isinstance(value, (bool, int, str)) or value is None:
        return value
    return [_plain(v) for v in value]


def describe(struct: Any) -> dict[str, Any]:
    """``{identifier: {field: value}}`` of every property of an RNA struct (``bl_rna``)."""
    out: dict[str, Any] = {}
    for prop in struct.properties:
        if prop.identifier == "rna_type":
            continue
        entry = {f: _plain(getattr(prop, f)) for f in FIELDS if hasattr(prop, f)}
        if prop.type == "ENUM":
            entry["default"] = prop.default
            entry["items"] = [[i.identifier, i.name, i.description]
                              for i in prop.enum_items]
        if prop.type in ("POINTER", "COLLECTION"):  # the bake group, the attachments' items
            entry["fixed_type"] = prop.fixed_type.identifier
            if prop.fixed_type.identifier.startswith("XPBD_"):  # not Object's whole RNA
                entry["fields"] = describe(prop.fixed_type)
        out[prop.identifier] = entry
    return out


def snapshot() -> dict[str, Any]:
    """The RNA of ``Object.xpbd`` with the add-on registered."""
    import bpy

    return describe(bpy.types.Object.bl_rna.properties["xpbd"].fixed_type)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    import xpbd_addon

    xpbd_addon.register()
    data = snapshot()
    xpbd_addon.unregister()
    Path(sys.argv[1]).write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
