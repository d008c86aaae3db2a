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

from ... import dependencies
from ...core import material as core_material
from ...core import rod as core_rod
from ..read.geometry import RopeError


def material(settings: Any) -> core_material.RopeMaterial:
    """The ``RopeMaterial`` of the MATERIAL-mode fields of ``settings``."""
    return core_material.RopeMaterial(
        linear_density=float(settings.linear_density),
        stretch_stiffness=None if settings.inextensible else float(settings.stretch_stiffness),
        bend_stiffness=float(settings.bend_stiffness) if settings.use_bend_stiffness else None)


def model_arguments(settings: Any, positions: np.ndarray, edges: np.ndarray,
                    pinned: np.ndarray, roll: Any = 0.0) -> dict[str, Any]:
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
                **rest, **rod_argument(settings, positions, bending is not None, roll)}
    inv_mass = np.where(pinned, 0.0, 1.0 / settings.vertex_mass)
    bending = float(settings.bending_compliance) if settings.use_bending else None
    return {"inv_mass": inv_mass, "compliance": float(settings.compliance),
            "bending_compliance": bending, **rest,
            **rod_argument(settings, positions, bending is not None, roll)}


def rod_argument(settings: Any, positions: np.ndarray, bends: bool,
                 roll: Any = 0.0) -> dict[str, Any]:
    """``{"rod": core.Rod}`` where the settings make the rope a rod (``schema_rod``): it
    bends and its modelled shape is its rest shape and is not straight, or it twists, or it
    yields; else ``{}``: a plain rope, stepped as before rods existed. ``positions``: world
    rest positions [m] (N, 3); ``roll`` [rad]: the rod's modelled roll (a curve's tilt,
    ``write.curve_tilt.rest_roll``), a scalar or (N,), or a callable giving it (made only
    for a rod)."""
    modelled = bends and settings.bend_rest == "MODELLED" and not _straight(positions)
    plastic = bends and bool(settings.use_plasticity)
    if not (modelled or settings.use_twist or plastic):
        return {}
    # A rod's frames are made by numba kernels, here on Blender's thread: numba is imported
    # first, or waited for while the preparation thread imports it (``dependencies``)
    reason = dependencies.load_numba()
    if reason is not None:
        raise RopeError(reason)
    return {"rod": core_rod.Rod(
        roll=roll() if callable(roll) else roll, bend_rest="modelled" if modelled else "straight",
        twist_stiffness=float(settings.twist_stiffness) if settings.use_twist else None,
        plastic_yield=float(settings.plastic_yield) if plastic else np.inf,
        plastic_creep=float(settings.plastic_creep) if plastic else 0.0)}


def _straight(positions: np.ndarray) -> bool:
    """All points on one line (within 1e-9 of the shape's size): nothing to keep."""
    if len(positions) < 3:
        return True
    spread = np.linalg.svd(positions - positions.mean(axis=0), compute_uv=False)
    return bool(spread[1] <= 1e-9 * max(spread[0], 1e-300))


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


def turn_of(model: Any, built: np.ndarray, now: np.ndarray) -> np.ndarray | None:
    """The rotation [3, 3] from the object's world matrix ``built`` [4, 4] (the one
    ``model``'s rest shape was placed with) to ``now`` [4, 4], scale and shear taken out;
    None where ``model`` is no rod (no ``rod_layout``)."""
    if getattr(model, "rod_layout", None) is None:
        return None
    if np.array_equal(now[:3, :3], built[:3, :3]):
        return np.eye(3)  # exactly: an object that did not turn holds its rod's ends
    return _rotation(now[:3, :3]) @ _rotation(built[:3, :3]).T


def end_turns(model: Any, before: np.ndarray | None, now: np.ndarray,
              x: np.ndarray) -> np.ndarray:
    """How far the object's turn from ``before`` to ``now`` (rotations [3, 3], ``turn_of``;
    None: none before) turns each rope end of ``model``'s rod about its end segment at
    ``x`` [m] (N, 3) (the twist part of the turn, [rad]), [N] with nan elsewhere: the core
    holds those ends' roll and turns them by it (``core.step``'s ``pin_turns``)."""
    layout = model.rod_layout
    out = np.full(model.particle_count, np.nan)
    ends = np.flatnonzero(layout.end_segment >= 0)
    out[ends] = 0.0
    if before is None or np.array_equal(before, now):
        return out
    w, v = _quaternion(now @ before.T)
    for end in ends.tolist():
        a = int(layout.end_segment[end])
        b = end if a != end else _next_in_walk(layout, end)
        tangent = x[b] - x[a]
        length = float(np.linalg.norm(tangent))
        if length > 0.0:
            out[end] = 2.0 * np.arctan2(float(v @ tangent) / length, w)
    out[ends] = np.mod(out[ends] + np.pi, 2.0 * np.pi) - np.pi
    return out


def _next_in_walk(layout: Any, particle: int) -> int:
    """The particle after ``particle`` in its rope's walking order."""
    where = int(np.flatnonzero(layout.particles == particle)[0])
    return int(layout.particles[where + 1])


def _quaternion(rotation: np.ndarray) -> tuple[float, np.ndarray]:
    """(w, (x, y, z)) of a rotation matrix, w >= 0 (Shepperd's method)."""
    m = rotation
    trace = float(np.trace(m))
    if trace > 0.0:
        s = 2.0 * np.sqrt(trace + 1.0)
        w = 0.25 * s
        v = np.array([m[2, 1] - m[1, 2], m[0, 2] - m[2, 0], m[1, 0] - m[0, 1]]) / s
    else:
        i = int(np.argmax(np.diag(m)))
        j, k = (i + 1) % 3, (i + 2) % 3
        s = 2.0 * np.sqrt(max(1.0 + m[i, i] - m[j, j] - m[k, k], 0.0))
        v = np.zeros(3)
        v[i] = 0.25 * s
        v[j] = (m[j, i] + m[i, j]) / s
        v[k] = (m[k, i] + m[i, k]) / s
        w = (m[k, j] - m[j, k]) / s
    if w < 0.0:
        w, v = -w, -v
    return float(w), v


def _rotation(matrix: np.ndarray) -> np.ndarray:
    """The rotation of a 3x3 matrix (its polar factor, U V^T of its SVD)."""
    u, _, vt = np.linalg.svd(np.asarray(matrix, dtype=np.float64))
    rotation = u @ vt
    if np.linalg.det(rotation) < 0.0:  # a mirrored object: keep a rotation
        u[:, -1] = -u[:, -1]
        rotation = u @ vt
    return rotation
