"""The rest shape, stored on the object's data so that it is saved in the .blend (decision 2).

The simulation writes the free points into the mesh/curve itself, so the data no longer holds
the shape the user modelled; it is kept here:

- mesh: a point attribute ``xpbd_rest`` (FLOAT_VECTOR, object space [m]). An attribute rather
  than a shape key because shape keys override vertex positions and vertex keyframes, which
  the simulation and a later bake write; an attribute is inert data.
- curve: an ID property ``xpbd_rest`` on the Curve, ``CURVE_REST_STRIDE`` floats per control
  point (co, w, handles), since legacy curves have no generic attributes.

Both carry ``xpbd_rest_signature``, the flattened topology signature at the time of storing,
so a topology edit is noticed even after the file was saved and reopened.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .geometry import CURVE_REST_STRIDE, Layout

REST_NAME = "xpbd_rest"
SIGNATURE_NAME = "xpbd_rest_signature"


def flat_signature(signature: tuple) -> list[int]:
    """The integers of a topology signature (its kind tag dropped), storable as an ID property."""
    out: list[int] = []
    for item in signature[1:]:
        out.extend(int(v) for v in (item if isinstance(item, tuple) else (item,)))
    return out


def has_rest(obj: Any) -> bool:
    """True if the object's data carries a stored rest shape."""
    data = obj.data
    if obj.type == "MESH":
        return REST_NAME in data.attributes and SIGNATURE_NAME in data
    return REST_NAME in data and SIGNATURE_NAME in data


def stored_signature(obj: Any) -> list[int] | None:
    """The flattened topology signature stored with the rest shape, or None."""
    if not has_rest(obj):
        return None
    return [int(v) for v in obj.data[SIGNATURE_NAME]]


def store(obj: Any, layout: Layout, local: np.ndarray) -> None:
    """Keep ``local`` (see ``geometry.read_local``) as the object's rest shape."""
    data = obj.data
    if obj.type == "MESH":
        attribute = data.attributes.get(REST_NAME)
        if attribute is None or attribute.data_type != "FLOAT_VECTOR" or (
                attribute.domain != "POINT"):
            if attribute is not None:
                data.attributes.remove(attribute)
            attribute = data.attributes.new(REST_NAME, "FLOAT_VECTOR", "POINT")
        attribute.data.foreach_set("vector", np.ascontiguousarray(local, np.float32).ravel())
    else:
        data[REST_NAME] = np.ascontiguousarray(local, np.float64).ravel()
    data[SIGNATURE_NAME] = flat_signature(layout.signature)


def load(obj: Any, layout: Layout) -> np.ndarray | None:
    """The stored rest shape as float32 ([N, 3] mesh, [N, CURVE_REST_STRIDE] curve), or None if
    there is none or it belongs to another topology."""
    if stored_signature(obj) != flat_signature(layout.signature):
        return None
    data = obj.data
    if obj.type == "MESH":
        buf = np.empty(3 * layout.particle_count, dtype=np.float32)
        data.attributes[REST_NAME].data.foreach_get("vector", buf)
        return buf.reshape(-1, 3)
    values = np.asarray(data[REST_NAME], dtype=np.float64)
    if values.size != layout.particle_count * CURVE_REST_STRIDE:
        return None
    return values.astype(np.float32).reshape(-1, CURVE_REST_STRIDE)


def clear(obj: Any) -> None:
    """Remove the stored rest shape (after it has been written back)."""
    data = getattr(obj, "data", None)
    if data is None:
        return
    if obj.type == "MESH":
        attribute = data.attributes.get(REST_NAME)
        if attribute is not None:
            data.attributes.remove(attribute)
    elif REST_NAME in data:
        del data[REST_NAME]
    if SIGNATURE_NAME in data:
        del data[SIGNATURE_NAME]
