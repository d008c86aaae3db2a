"""From an object's stiffness settings (``Object.xpbd``) to the core ``Model``'s arguments.

Two ways to give a rope's stiffness (``stiffness_mode``):

- ``POINT``: plain XPBD's per-constraint quantities, as the add-on always had them: the
  compliance alpha [m/N] of every segment and the mass [kg] of every point, plus an optional
  bending compliance alpha_b [1/(N m)] at every point. Resampling the rope changes how it
  behaves (ten times the points: ten times the stretch and mass).
- ``MATERIAL``: the continuum quantities, given once per unit length: linear density rho
  [kg/m], axial stiffness EA [N] (or inextensible) and bending stiffness EI [N m^2] (or
  none); ``core.material.rope_parameters`` turns them into masses and compliances for the
  points at hand, so a rope resampled from 20 to 200 points keeps its stretch and its droop.

The settings themselves (units, ranges, checks, the cache key) are declared in ``schema``.
Nothing here imports bpy: ``settings`` is anything with the ``Object.xpbd`` attribute names.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...core import material as core_material
from ..read.geometry import RopeError


def material(settings: Any) -> core_material.RopeMaterial:
    """The ``RopeMaterial`` of the MATERIAL-mode fields of ``settings``."""
    return core_material.RopeMaterial(
        linear_density=float(settings.linear_density),
        stretch_stiffness=None if settings.inextensible else float(settings.stretch_stiffness),
        bend_stiffness=float(settings.bend_stiffness) if settings.use_bend_stiffness else None)


def model_arguments(settings: Any, positions: np.ndarray, edges: np.ndarray,
                    pinned: np.ndarray) -> dict[str, Any]:
    """The stiffness keyword arguments of ``core.Model``: ``inv_mass`` [1/kg] (N,),
    ``compliance`` [m/N], ``bending_compliance`` [1/(N m)] or None (the other keywords come
    from ``schema.model_keywords``). ``positions``: world rest positions [m] (N, 3), so that
    lengths, and with them a material's masses and compliances, include the object's scale;
    ``pinned``: boolean (N,) mask (inverse mass 0). With a ``length_scale`` other than 1
    also ``rest_length`` [m] (M,): the segments' lengths in ``positions`` times it (masses
    and compliances stay those of the modelled rope: a winch changes how much rope hangs
    out, not what it is made of)."""
    scale = float(settings.length_scale)
    rest = {} if scale == 1.0 else {"rest_length": scale * np.linalg.norm(
        positions[edges[:, 1]] - positions[edges[:, 0]], axis=1)}
    if settings.stiffness_mode == "MATERIAL":
        try:
            inv_mass, compliance, bending = core_material.rope_parameters(
                positions, edges, material(settings), pinned=pinned)
        except ValueError as exc:
            raise RopeError(f"Bad material: {exc}") from exc
        return {"inv_mass": inv_mass, "compliance": compliance, "bending_compliance": bending,
                **rest}
    inv_mass = np.where(pinned, 0.0, 1.0 / settings.vertex_mass)
    bending = float(settings.bending_compliance) if settings.use_bending else None
    return {"inv_mass": inv_mass, "compliance": float(settings.compliance),
            "bending_compliance": bending, **rest}


def apply_maps(arguments: dict[str, Any], maps: dict[str, np.ndarray], settings: Any,
               edges: np.ndarray, radius: float) -> dict[str, Any]:
    """``arguments`` (``model_arguments``) with the per-point maps applied
    (``read.maps.read_maps``: weights 0..1): a weight w scales a setting by
    1 + w (max - 1), ``<name>_map_max`` at w = 1. Mass: each point's (inverse mass divided by
    it; pins stay pins); stiffness: each segment's, by the mean weight of its two points
    (compliance divided by it; an inextensible rope stays so); radius: each point's
    ``radius`` [m] (returned as the Model's ``radius`` keyword, per particle); damping: each
    point's rate [1/s] (the Model's ``damping``, per particle)."""
    from ..read.maps import scaled

    out = dict(arguments)
    if "mass" in maps:
        out["inv_mass"] = out["inv_mass"] / scaled(maps["mass"], 1.0,
                                                   float(settings.mass_map_max))
    if "stiffness" in maps:
        w = maps["stiffness"]
        per_edge = 0.5 * (w[edges[:, 0]] + w[edges[:, 1]])
        out["compliance"] = np.asarray(out["compliance"], dtype=np.float64) / scaled(
            per_edge, 1.0, float(settings.stiffness_map_max))
    if "radius" in maps:
        out["radius"] = radius * scaled(maps["radius"], 1.0, float(settings.radius_map_max))
    if "damping" in maps:  # (the Model's keyword: one rate per point)
        out["damping"] = float(settings.damping) * scaled(maps["damping"], 1.0,
                                                          float(settings.damping_map_max))
    return out
