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

Nothing here imports bpy: ``settings`` is anything with the ``Object.xpbd`` attribute names.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..core import material as core_material
from .geometry import RopeError

SOLVERS = {"DIRECT": "direct", "SWEEP": "sweep"}
"""``Object.xpbd.solver`` enum items -> the core's ``Model(solver=...)``."""

INTEGRATORS = {"EULER": "euler", "BDF2": "bdf2"}
"""``Object.xpbd.integrator`` enum items -> the core's ``Model(integrator=...)``."""


def material(settings: Any) -> core_material.RopeMaterial:
    """The ``RopeMaterial`` of the MATERIAL-mode fields of ``settings``."""
    return core_material.RopeMaterial(
        linear_density=float(settings.linear_density),
        stretch_stiffness=None if settings.inextensible else float(settings.stretch_stiffness),
        bend_stiffness=float(settings.bend_stiffness) if settings.use_bend_stiffness else None)


def key(settings: Any) -> tuple:
    """The stiffness settings the simulation depends on (part of ``sim.settings_key``): a
    change of any of them invalidates the cache. Fields the current mode ignores are left
    out, so editing them does not restart the simulation."""
    common = (settings.stiffness_mode, settings.solver, settings.integrator,
              settings.iterations)
    if settings.stiffness_mode == "MATERIAL":
        return common + (settings.linear_density, settings.inextensible,
                         settings.stretch_stiffness, settings.use_bend_stiffness,
                         settings.bend_stiffness)
    return common + (settings.compliance, settings.vertex_mass, settings.use_bending,
                     settings.bending_compliance)


def _finite(value: float, low: float, strict: bool) -> bool:
    return math.isfinite(value) and (value > low if strict else value >= low)


def check(settings: Any) -> None:
    """RopeError naming the setting and its unit if a stiffness setting is out of range (the
    properties clamp typed values; NaN from a script, or an unknown enum, still arrives)."""
    if settings.solver not in SOLVERS:
        raise RopeError(f"Unknown solver {settings.solver!r}")
    if settings.integrator not in INTEGRATORS:
        raise RopeError(f"Unknown integrator {settings.integrator!r}")
    if settings.iterations < 1:
        raise RopeError(f"Iterations must be 1 or more (got {settings.iterations})")
    if settings.stiffness_mode == "MATERIAL":
        if not _finite(settings.linear_density, 0.0, True):
            raise RopeError(f"Density must be a number > 0 kg/m (got {settings.linear_density})")
        if not settings.inextensible and not _finite(settings.stretch_stiffness, 0.0, True):
            raise RopeError("Stretch stiffness must be a number > 0 N (got "
                            f"{settings.stretch_stiffness}); tick Inextensible for a rope "
                            "that does not stretch")
        if settings.use_bend_stiffness and not _finite(settings.bend_stiffness, 0.0, True):
            raise RopeError(f"Bend stiffness must be a number > 0 N m^2 (got "
                            f"{settings.bend_stiffness})")
        return
    if settings.stiffness_mode != "POINT":
        raise RopeError(f"Unknown stiffness mode {settings.stiffness_mode!r}")
    if not _finite(settings.compliance, 0.0, False):
        raise RopeError(f"Compliance must be a number >= 0 m/N (got {settings.compliance})")
    if not _finite(settings.vertex_mass, 0.0, True):
        raise RopeError(f"Vertex mass must be a number > 0 kg (got {settings.vertex_mass})")
    if settings.use_bending and not _finite(settings.bending_compliance, 0.0, False):
        raise RopeError("Bending compliance must be a number >= 0 1/(N m) (got "
                        f"{settings.bending_compliance})")


def model_arguments(settings: Any, positions: np.ndarray, edges: np.ndarray,
                    pinned: np.ndarray) -> dict[str, Any]:
    """Keyword arguments of ``core.Model`` besides positions and edges: ``inv_mass``
    [1/kg] (N,), ``compliance`` [m/N], ``bending_compliance`` [1/(N m)] or None, ``solver``,
    ``integrator``, ``iterations``. ``positions``: world rest positions [m] (N, 3), so that
    lengths, and with them a material's masses and compliances, include the object's scale;
    ``pinned``: boolean (N,) mask (inverse mass 0)."""
    common = {"solver": SOLVERS[settings.solver],
              "integrator": INTEGRATORS[settings.integrator],
              "iterations": int(settings.iterations)}
    if settings.stiffness_mode == "MATERIAL":
        try:
            inv_mass, compliance, bending = core_material.rope_parameters(
                positions, edges, material(settings), pinned=pinned)
        except ValueError as exc:
            raise RopeError(f"Bad material: {exc}") from exc
        return {"inv_mass": inv_mass, "compliance": compliance,
                "bending_compliance": bending, **common}
    inv_mass = np.where(pinned, 0.0, 1.0 / settings.vertex_mass)
    bending = float(settings.bending_compliance) if settings.use_bending else None
    return {"inv_mass": inv_mass, "compliance": float(settings.compliance),
            "bending_compliance": bending, **common}
