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

from typing import Any

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
