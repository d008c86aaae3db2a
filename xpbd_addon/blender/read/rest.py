"""The rest shape, stored on the object's data so that it is saved in the .blend (the rest
shape is never lost).

The simulation writes the free points into the mesh/curve itself, so the data no longer holds
the shape the user modelled; it is kept here:

- an array ID property ``xpbd_rest`` of floats in object space [m]: 3 per vertex of a mesh,
  ``CURVE_REST_STRIDE`` per control point of a curve (co, w, handles). Not a shape key:
  shape keys override vertex positions and vertex keyframes, which the simulation and a
  later bake write;
- beside it ``xpbd_rest_signature``, the flattened topology signature at the time of storing
  (``geometry.topology_signature``), so a topology edit is noticed even after the file was
  saved and reopened.

Where (``holder``): in the data's *system* ID properties (Blender 5.0+: the storage of
add-on properties, saved in the .blend, copied with the data, shared by linked duplicates),
which no exporter writes. Kept as a generic attribute and a custom property before (issue
34), the rest shape went into USD files as ``primvars:xpbd_rest`` and
``userProperties:xpbd_rest_signature``, into PLY, Alembic and FBX (custom properties).
Blender 4.2-4.5 have no separate system properties: there they stay custom properties of the
data (a limitation). What earlier versions stored (``LEGACY``: a mesh's point attribute, a
custom property) is still read, and moved on the next store.

What is stored is user data: a file may carry anything under these names (an older version,
a script, a crafted file). So:

- storing replaces the ID properties as a whole (deleted, then created): assigning an array
  of another length to an existing array ID property does not resize it in Blender 5.0 and
  writes past its end when longer (heap corruption);
- storing refuses a shape with NaN or infinite values (``RopeError`` naming the point): the
  rest shape is what Reset and disabling write back, it must never hold one;
- ``inspect`` checks type, domain, length, topology and finiteness on every read and says
  what is wrong (``Stored.problem``) instead of returning something unusable; callers then
  write nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ...core.collision import MAX_COORDINATE
from ..errors import ShapeError
from .geometry import CURVE_REST_STRIDE, Layout, read_curve_tilt

REST_NAME = "xpbd_rest"
SIGNATURE_NAME = "xpbd_rest_signature"
TILT_NAME = "xpbd_rest_tilt"
"""A curve's modelled tilt [rad] per control point, beside the rest shape (stores made
before it have none: their tilt is left as it is)"""


def holder(data: Any, create: bool = False) -> Any:
    """Where the rest shape of ``data`` (a Mesh or Curve) is kept: its system ID properties
    (Blender 5.0+), None if it has none yet and not ``create``; the data's own custom
    properties on Blender 4.x (no separate system properties there)."""
    system = getattr(data, "bl_system_properties_get", None)
    return data if system is None else system(do_create=create)


def _legacy(data: Any) -> bool:
    """True if the data carries the rest shape where older versions of the add-on kept it (a
    mesh's point attribute, custom properties) and that is not where ``holder`` keeps it."""
    if holder(data, create=True) is data:
        return False
    attributes = getattr(data, "attributes", None)
    return (SIGNATURE_NAME in data or REST_NAME in data
            or (attributes is not None and REST_NAME in attributes))


def _source(data: Any) -> Any:
    """The ID property group to read: ``holder`` if it holds anything, else the data itself
    (a legacy store, or nothing)."""
    group = holder(data)
    if group is not None and (SIGNATURE_NAME in group or REST_NAME in group):
        return group
    return data


@dataclass
class Stored:
    """What an object's data holds as rest shape (``inspect``)."""

    local: np.ndarray | None
    """The rest shape, float32 ([N, 3] mesh, [N, CURVE_REST_STRIDE] curve) in object space
    [m], finite and fitting the layout; None if there is none or it cannot be used"""
    problem: str | None = None
    """Why a stored rest shape cannot be used (worded for the panel), or None"""
    topology_changed: bool = False
    """The problem is only that the topology differs from the one stored with it"""


def flat_signature(signature: tuple) -> list[int]:
    """The integers of a topology signature (its kind tag dropped), storable as an ID property."""
    out: list[int] = []
    for item in signature[1:]:
        out.extend(int(v) for v in (item if isinstance(item, tuple) else (item,)))
    return out


def _legacy_signature(layout: Layout) -> list[int] | None:
    """The signature versions before 0.2 stored for a mesh (vertex and edge counts only), so
    that files saved then still restore; None for curves (their signature is unchanged)."""
    if layout.kind != "MESH":
        return None
    return [layout.particle_count, len(layout.edges)]


def _data_label(obj: Any) -> str:
    kind = "mesh" if obj.type == "MESH" else "curve"
    return f"{kind} '{obj.data.name}'"


def has_rest(obj: Any) -> bool:
    """True if the object's data carries anything under the rest-shape names (usable or not)."""
    data = getattr(obj, "data", None)
    if data is None or obj.type not in ("MESH", "CURVE"):
        return False
    group = _source(data)
    if SIGNATURE_NAME in group or REST_NAME in group:
        return True
    return obj.type == "MESH" and REST_NAME in data.attributes


def _int_list(value: Any) -> list[int] | None:
    """``value`` (an ID property) as a list of integers, or None if it is not one."""
    to_list = getattr(value, "to_list", None)
    if to_list is None or isinstance(value, (str, bytes)):
        return None
    try:
        items = to_list()
    except (TypeError, ValueError, AttributeError):
        return None
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in items):
        return None
    return [int(v) for v in items]


def stored_signature(obj: Any) -> list[int] | None:
    """The flattened topology signature stored with the rest shape, or None (none, or not a
    list of integers)."""
    group = _source(obj.data)
    if SIGNATURE_NAME not in group:
        return None
    return _int_list(group[SIGNATURE_NAME])


def non_finite_message(obj: Any, local: np.ndarray, what: str) -> str | None:
    """A message naming the first point of ``local`` with a NaN or infinite value, or one
    beyond ``MAX_COORDINATE`` (Blender clamps an infinite coordinate typed in to 3.4e38), or
    None."""
    with np.errstate(invalid="ignore"):
        bad = ~(np.abs(local) < MAX_COORDINATE).all(axis=1)
    if not bad.any():
        return None
    index = int(np.flatnonzero(bad)[0])
    noun = "Vertex" if obj.type == "MESH" else "Control point"
    extra = "" if obj.type == "MESH" else " (position, NURBS weight or handle)"
    return (f"{noun} {index} of {_data_label(obj)} has a NaN or infinite value (or one "
            f"beyond {MAX_COORDINATE:g}){extra} in "
            f"{what} ({int(bad.sum())} point(s) in all)")


def inspect(obj: Any, layout: Layout) -> Stored:
    """The object's stored rest shape, checked: type, domain, length, topology, finiteness."""
    data = obj.data
    group = _source(data)
    label = _data_label(obj)
    if not has_rest(obj):
        return Stored(None)
    if SIGNATURE_NAME not in group:
        return Stored(None, f"The stored rest shape of {label} has no topology signature "
                            f"('{SIGNATURE_NAME}'): Reset to store the current shape")
    signature = stored_signature(obj)
    if signature is None:
        kind = type(group[SIGNATURE_NAME]).__name__
        return Stored(None, f"The stored topology signature '{SIGNATURE_NAME}' of {label} is "
                            f"not a list of integers (a {kind}): Reset to store the current "
                            "shape")
    expected = flat_signature(layout.signature)
    if signature != expected and signature != _legacy_signature(layout):
        return Stored(None, "The topology changed since the rest shape was stored; geometry "
                            "is left as it is. Reset to use the current shape as the new rest "
                            "shape", topology_changed=True)
    n = layout.particle_count
    if obj.type == "MESH" and REST_NAME not in group:  # a legacy store: an attribute
        attribute = data.attributes.get(REST_NAME)
        if attribute is None:
            return Stored(None, f"The stored rest shape (attribute '{REST_NAME}') of {label} "
                                "is missing: Reset to store the current shape")
        if attribute.data_type != "FLOAT_VECTOR" or attribute.domain != "POINT":
            return Stored(None, f"The stored rest shape (attribute '{REST_NAME}') of {label} "
                                f"is {attribute.data_type} on {attribute.domain}, not a "
                                "FLOAT_VECTOR point attribute: Reset to store the current "
                                "shape")
        if len(attribute.data) != n:
            return Stored(None, f"The stored rest shape of {label} has {len(attribute.data)} "
                                f"values for {n} vertices: Reset to store the current shape")
        buf = np.empty(3 * n, dtype=np.float32)
        attribute.data.foreach_get("vector", buf)
        local = buf.reshape(-1, 3)
    else:
        value = group.get(REST_NAME)
        typecode = getattr(value, "typecode", None)
        if typecode not in ("d", "f"):
            kind = type(value).__name__ if typecode is None else f"array of '{typecode}'"
            return Stored(None, f"The stored rest shape '{REST_NAME}' of {label} is not an "
                                f"array of floats (a {kind}): Reset to store the current shape")
        stride = 3 if obj.type == "MESH" else CURVE_REST_STRIDE
        points = "vertices" if obj.type == "MESH" else "control points"
        if len(value) != n * stride:
            return Stored(None, f"The stored rest shape '{REST_NAME}' of {label} has "
                                f"{len(value)} values for {n} {points} "
                                f"({n * stride} expected): Reset to store the current shape")
        local = np.array(value.to_list(), dtype=np.float64).astype(np.float32).reshape(
            -1, stride)
    message = non_finite_message(obj, local, "the stored rest shape")
    if message is not None:
        return Stored(None, f"{message}: Reset to store the current shape")
    return Stored(local)


def load(obj: Any, layout: Layout) -> np.ndarray | None:
    """The stored rest shape (see ``Stored.local``), or None if there is none usable."""
    return inspect(obj, layout).local


def store(obj: Any, layout: Layout, local: np.ndarray) -> None:
    """Keep ``local`` (see ``geometry.read_local``) as the object's rest shape. RopeError (and
    nothing stored) if it has a NaN or infinite value: a ShapeError."""
    message = non_finite_message(obj, np.asarray(local), "its current shape")
    if message is not None:
        raise ShapeError(f"{message}: fix the point (or undo) before simulating")
    data = obj.data
    if _legacy(data):
        _clear_group(data, legacy=True)
    group = holder(data, create=True)
    # Deleted first, never assigned over: see the module docstring (heap corruption).
    if REST_NAME in group:
        del group[REST_NAME]
    group[REST_NAME] = np.ascontiguousarray(local, np.float64).ravel()
    if SIGNATURE_NAME in group:
        del group[SIGNATURE_NAME]
    group[SIGNATURE_NAME] = flat_signature(layout.signature)
    store_tilt(data, layout)


def store_tilt(data: Any, layout: Layout) -> None:
    """Keep a curve's points' tilt [rad] beside its rest shape (``TILT_NAME``; replaced as
    a whole, as ``store`` does); nothing for a mesh."""
    group = holder(data, create=True)
    if TILT_NAME in group:
        del group[TILT_NAME]
    if layout.kind == "CURVE":
        group[TILT_NAME] = read_curve_tilt(data, layout).astype(np.float64)


def modelled_tilt(data: Any, layout: Layout) -> np.ndarray | None:
    """A curve's modelled tilt [rad] (N,) (``load_tilt``); where its rest shape was stored
    without one, the points' tilt, stored now (versions before never wrote a tilt, so the
    points still hold the modelled one). None for a mesh."""
    if layout.kind != "CURVE":
        return None
    tilt = load_tilt(data, layout)
    if tilt is None:
        store_tilt(data, layout)
        tilt = load_tilt(data, layout)
    return tilt


def load_tilt(data: Any, layout: Layout) -> np.ndarray | None:
    """The modelled tilt [rad] (N,) stored with a curve's rest shape (``store``), or None:
    none (a store made before tilt was kept), or one that does not fit or is not finite."""
    value = _source(data).get(TILT_NAME)
    if getattr(value, "typecode", None) not in ("d", "f") or \
            len(value) != layout.particle_count:
        return None
    tilt = np.array(value.to_list(), dtype=np.float64)
    return tilt if np.isfinite(tilt).all() else None


def _clear_group(data: Any, *, legacy: bool) -> None:
    """Remove the rest shape from ``holder`` (or, with ``legacy``, from where versions before
    older versions kept it: the data's custom properties and a mesh's point attribute)."""
    group = data if legacy else holder(data)
    if group is None:
        return
    for name in (REST_NAME, SIGNATURE_NAME, TILT_NAME):
        if name in group:
            del group[name]
    attributes = getattr(data, "attributes", None)
    if legacy and attributes is not None and REST_NAME in attributes:
        attributes.remove(attributes[REST_NAME])


def clear(obj: Any) -> None:
    """Remove the stored rest shape (after it has been written back)."""
    data = getattr(obj, "data", None)
    if data is None or obj.type not in ("MESH", "CURVE"):
        return
    clear_data(data)


def clear_data(data: Any) -> None:
    """Remove any rest shape from a Mesh or Curve, where it is kept now and where it was."""
    _clear_group(data, legacy=False)
    _clear_group(data, legacy=True)


def other_users(obj: Any, objects: Any) -> list[Any]:
    """Objects of ``objects`` (e.g. ``bpy.data.objects``) other than ``obj`` that use its data
    and are ropes (enabled or baked): the stored rest shape is theirs too."""
    data = getattr(obj, "data", None)
    if data is None or data.users < 2:
        return []
    return [o for o in objects if o != obj and o.data == data
            and (o.xpbd.enabled or o.xpbd.bake.baked)]
