"""Per-point maps read from Blender: vertex-group weights of meshes, the weight and radius
Blender stores on every curve point. Each reader returns a float64 array with one value per
rope particle, in the particle order of ``geometry.build_layout`` (mesh vertices; curve
splines one after another, their points in order), for the frame engine to scale into
masses, compliances, radii, damping or soft-pin weights (``scaled``).

What else a curve could carry per point: its tilt (``tilt``, a twist for a rope with
twist), and on Blender's newer hair ``Curves`` any named float attribute (read with
``attributes[name].data.foreach_get('value')``).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

CURVE_VALUES = ("weight_softbody", "radius", "tilt")
"""The per-point floats of legacy curve points that can be read as maps: ``weight_softbody``
(the point's *Weight* in the sidebar, 0..1, Soft Body's goal weight), ``radius`` (the
bevel's scale, 1 by default) and ``tilt`` [rad]"""


def vertex_group_weights(obj: Any, name: str, *, missing: float = 0.0) -> np.ndarray | None:
    """(N,) the weights of mesh ``obj``'s vertex group ``name`` per vertex; vertices not in
    the group get ``missing``. None if the object has no such group.

    Blender has no bulk read of vertex-group weights (they live in per-vertex lists), so
    this walks the vertices once: a few microseconds per vertex, for reading at a reset,
    not per frame (weights cannot be animated)."""
    group = obj.vertex_groups.get(name)
    if group is None:
        return None
    index = group.index
    out = np.full(len(obj.data.vertices), missing, dtype=np.float64)
    for vertex in obj.data.vertices:
        for element in vertex.groups:
            if element.group == index:
                out[vertex.index] = element.weight
                break
    return out


def curve_point_values(curve: Any, value: str) -> np.ndarray:
    """(N,) a per-point float of every spline's points (``CURVE_VALUES``) of the curve data
    ``curve``, splines one after another: one ``foreach_get`` per spline."""
    if value not in CURVE_VALUES:
        raise ValueError(f"value: expected one of {', '.join(CURVE_VALUES)}, got {value!r}")
    parts = []
    for spline in curve.splines:
        points = spline.bezier_points if spline.type == "BEZIER" else spline.points
        buf = np.empty(len(points), dtype=np.float32)
        points.foreach_get(value, buf)
        parts.append(buf)
    return (np.concatenate(parts).astype(np.float64) if parts
            else np.zeros(0, dtype=np.float64))


def scaled(weights: np.ndarray, at_zero: float, at_one: float) -> np.ndarray:
    """(N,) ``at_zero`` + weights (``at_one`` - ``at_zero``): a map from weights 0..1 to a
    setting's range (e.g. a mass from the rope's vertex mass at 0 to ten times it at 1).
    Weights are clipped to 0..1 first, as Blender's vertex groups hold them."""
    w = np.clip(np.asarray(weights, dtype=np.float64), 0.0, 1.0)
    return at_zero + w * (at_one - at_zero)


MAPPED = ("mass", "stiffness", "radius", "damping", "pin")
"""The maps a rope can have (``Object.xpbd.<name>_map``): mass, stiffness, radius and
damping scale the setting point by point (``_map_max``); pin holds points by springs
(``soft_pins``)."""


class SoftMap(NamedTuple):
    """The points a Pin Map holds by springs (weights strictly between 0 and 1)."""

    ids: np.ndarray
    """int64 (P,) the particles held"""
    compliance: np.ndarray
    """(P,) [m/N] each spring's alpha = (1 - w) / (k0 w), k0 the Pin Stiffness [N/m]"""


def soft_pins(weights: np.ndarray | None, stiffness: float,
              pinned: np.ndarray) -> SoftMap | None:
    """The springs of a Pin Map's ``weights`` (N,) 0..1 with Pin Stiffness ``stiffness``
    [N/m] (``core.soft_pins.from_weights``' law), leaving out the ``pinned`` (N,) points;
    None without a map or a weight strictly between 0 and 1."""
    if weights is None:
        return None
    ids = np.flatnonzero((weights > 0.0) & (weights < 1.0) & ~pinned)
    if not len(ids):
        return None
    w = weights[ids]
    return SoftMap(ids.astype(np.int64), (1.0 - w) / (w * float(stiffness)))


def read_maps(obj: Any, count: int) -> dict[str, np.ndarray]:
    """The weights (N,) of each map the rope ``obj`` names (``MAPPED``), clipped to 0..1, for
    its ``count`` particles: a mesh's vertex group (vertices not in it: 0), a curve's points'
    'weight' or 'radius'. RopeError (a clear message) for a group that does not exist, another
    name on a curve, or a curve whose points are not its particles."""
    from .geometry import RopeError

    settings = obj.xpbd
    out = {}
    for name in MAPPED:
        source = getattr(settings, f"{name}_map")
        if not source:
            continue
        label = f"{name.capitalize()} Map"
        if obj.type == "MESH":
            weights = vertex_group_weights(obj, source)
            if weights is None:
                raise RopeError(f"{label}: '{obj.name}' has no vertex group '{source}'")
        elif source.lower() in ("weight", "radius"):
            key = "weight_softbody" if source.lower() == "weight" else "radius"
            weights = curve_point_values(obj.data, key)
        else:
            raise RopeError(f"{label}: on a curve it is 'weight' or 'radius' (the points' "
                            f"Weight or Radius), not '{source}'")
        if len(weights) != count:
            raise RopeError(f"{label}: {len(weights)} values for {count} points (curves: "
                            "maps need the points to be the rope's: Poly or NURBS splines)")
        if not np.all(np.isfinite(weights)):
            raise RopeError(f"{label}: a weight is NaN or infinite")
        out[name] = np.clip(weights, 0.0, 1.0)
    return out


def key(obj: Any) -> bytes:
    """The maps' part of ``sim.settings_key``: their weights, so that painting them restarts
    the rope's frames (b"" without maps; a map that cannot be read: its name, and building
    the rope says why)."""
    settings = obj.xpbd
    parts = []
    for name in MAPPED:
        source = getattr(settings, f"{name}_map")
        if not source:
            continue
        try:
            if obj.type == "MESH":
                weights = vertex_group_weights(obj, source)
            else:
                value = "weight_softbody" if source.lower() == "weight" else "radius"
                weights = curve_point_values(obj.data, value)
        except (ValueError, AttributeError):
            weights = None
        parts.append(name.encode() + (b"?" if weights is None else weights.tobytes()))
    return b"|".join(parts)
