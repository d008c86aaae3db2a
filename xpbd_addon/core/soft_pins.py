"""Soft pins: particles held near moving targets by springs of compliance alpha [m/N].

A spring of stiffness k = 1 / alpha from particle i (mass m) to a target p, taken implicitly
in a substep of length h as the rope's constraints are, is

    m (x - x~) / h^2 = k (p - x) + f_constraints,     x~ = x0 + h v0 + h^2 (g + a)

(the implicit-Euler step of XPBD's projective form; Macklin, Mueller & Chentanez 2016,
"XPBD", eq. 18, and Andrews, Teichmann & Kry 2017 on its implicit reading), which is the same
equation as

    m' (x - x~') / h^2 = f_constraints,   m' = m + h^2 / alpha,
                                           x~' = x~ + (h^2 / (alpha m')) (p - x~).

So a soft pin is the rope's own solve with the particle a little heavier and its prediction
moved towards the target: ``step_with_soft_pins`` runs the frame substep by substep
(``step`` with one substep each), with a Model whose held particles have the inverse masses
1 / m' (``Model.with_changes``) and with the prediction's shift passed as an external
acceleration. Being implicit, a spring of any stiffness is stable and takes energy out, never
in; the spring pulls with k |p - x| [N] (``spring_forces``).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from .air import Air
from .collision import as_colliders, colliders_over
from .model import Model, State
from .solver import step
from .validation import as_float_array, as_positive_float, as_substeps


class SoftPins(NamedTuple):
    """Particles held by springs (``step_with_soft_pins``)."""

    particles: Any
    """(P,) int: the held particles, each once (pinned ones are left alone)"""
    targets: Any
    """(P, 3) [m]: where the targets are at the end of the frame"""
    compliance: Any
    """(P,) or a scalar [m/N], > 0: each spring's compliance alpha (0 would be a pin)"""
    start: Any = None
    """(P, 3) [m]: where the targets are at the start of the frame (default: ``targets``);
    they move in a straight line over the frame"""


def _checked(pins: SoftPins, model: Model) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                    np.ndarray]:
    particles = np.asarray(pins.particles)
    n = model.particle_count
    if (particles.ndim != 1 or (len(particles) and (
            particles.dtype.kind not in "iu" or particles.min() < 0 or particles.max() >= n))
            or len(np.unique(particles)) != len(particles)):
        raise ValueError(f"soft_pins.particles: expected distinct particle indices in "
                         f"0..{n - 1}")
    count = len(particles)
    end = as_float_array(pins.targets, "soft_pins.targets", (count, 3))
    start = end if pins.start is None else as_float_array(pins.start, "soft_pins.start",
                                                          (count, 3))
    alpha = np.broadcast_to(np.asarray(pins.compliance, dtype=np.float64), (count,)).copy()
    if not (np.isfinite(alpha).all() and (alpha > 0.0).all()):
        raise ValueError("soft_pins.compliance: expected finite values > 0 m/N (a compliance "
                         "of 0 is a pin: inverse mass 0)")
    return particles.astype(np.int64), start, end, alpha


def step_with_soft_pins(model: Model, state: State, dt: float, substeps: int,
                        soft_pins: SoftPins, *, gravity: Any = (0.0, 0.0, -9.81),
                        pin_targets: Any = None, colliders: Any = (),
                        accelerations: Any = None, air: Air | None = None,
                        wind: Any = None, pin_turns: Any = None) -> Model:
    """``step`` with ``soft_pins`` (see the module): one frame of ``dt`` [s] in ``substeps``
    substeps, each a ``step`` of one substep of a Model whose held particles are heavier by
    h^2 / alpha, their predictions moved towards the targets. The other arguments are
    ``step``'s (the pins and colliders move over the frame as there). Returns the Model the
    substeps were stepped with (``edge_tension`` reads the state with it). ValueError naming
    the argument; the frame runs with implicit Euler (``integrator`` "bdf2" needs whole
    frames). ``air`` and ``wind`` are ``step``'s too: each substep's ``step`` drags the
    held particles with the force over their heavier mass m', which is exactly the shift a
    force F moves the spring's prediction by (x~' moves by h^2 F / m'). ``pin_turns``
    (a rod's turned ends) are ``step``'s, shared out over the substeps' ``step``."""
    dt = as_positive_float(dt, "dt")
    substeps = as_substeps(substeps)
    particles, start, end, alpha = _checked(soft_pins, model)
    h = dt / substeps
    g = as_float_array(gravity, "gravity", (3,))
    base = (np.zeros((model.particle_count, 3)) if accelerations is None else
            as_float_array(accelerations, "accelerations", (model.particle_count, 3)).copy())
    w = model.particle_inv_mass[particles]
    free = w > 0.0
    particles, start, end, alpha, w = (particles[free], start[free], end[free], alpha[free],
                                       w[free])
    heavier = 1.0 / (1.0 / w + h * h / alpha)  # 1 / m'
    inv_mass = model.particle_inv_mass.copy()
    inv_mass[particles] = heavier
    held = model.with_changes(inv_mass=inv_mass)
    share = h * h * heavier / alpha  # how far the prediction moves to the target
    meshes, planes = as_colliders(colliders)
    pinned = np.flatnonzero(model.particle_inv_mass == 0.0)
    pin_start = state.x[pinned].copy()
    pin_end = (pin_start if pin_targets is None
               else as_float_array(pin_targets, "pin_targets", (model.particle_count, 3))[pinned])
    targets = state.x.copy()
    acceleration = base.copy()
    moving = not np.array_equal(start, end)
    for substep in range(substeps):
        s0, s1 = substep / substeps, (substep + 1) / substeps
        p = start + s1 * (end - start)
        x0, v0 = state.x[particles], state.v[particles]
        if moving:
            _add_spring_work(state, particles, alpha, start + s0 * (end - start), p, x0)
        predicted = x0 + h * v0 + h * h * (g + base[particles])
        acceleration[particles] = base[particles] + share[:, None] * (p - predicted) / (h * h)
        targets[pinned] = pin_start + s1 * (pin_end - pin_start)
        step(held, state, h, 1, gravity=g, pin_targets=targets,
             colliders=[*colliders_over(meshes, s0, s1), *planes], accelerations=acceleration,
             air=air, wind=wind,
             pin_turns=None if pin_turns is None else np.asarray(pin_turns) / substeps)
    return held


def _add_spring_work(state: State, particles: np.ndarray, alpha: np.ndarray,
                     before: np.ndarray, after: np.ndarray, x: np.ndarray) -> None:
    """Add to ``state.spring_work`` what the targets' move from ``before`` to ``after`` [m]
    puts into the springs (compliance ``alpha`` [m/N]) of ``particles`` at ``x`` [m]:
    1/2 (|after - x|^2 - |before - x|^2) / alpha [J] (``State.spring_work``)."""
    stretched, was = after - x, before - x
    work = 0.5 * ((stretched * stretched).sum(axis=1) - (was * was).sum(axis=1)) / alpha
    if state.spring_work is None or len(state.spring_work) != len(state.x):
        state.spring_work = np.zeros(len(state.x))
    np.add.at(state.spring_work, particles, work)


def from_weights(weights: Any, targets: Any, stiffness: float, *, start: Any = None
                 ) -> tuple[SoftPins, np.ndarray]:
    """Soft pins from a weight per particle (a vertex group, a curve point's weight), as
    Blender's Soft Body goal: weight 1 holds the particle rigidly (a pin), 0 leaves it free,
    and a weight w in between holds it to its target by a spring of stiffness

        k(w) = stiffness * w / (1 - w)     [N/m],   alpha = 1 / k(w)   [m/N],

    so ``stiffness`` [N/m] is the spring of weight 0.5 (Soft Body's goal spring law,
    1 / (1 - w) - 1, with ``stiffness`` giving it a physical scale). ``weights`` (N,),
    ``targets`` (N, 3) [m] where the targets are at the frame's end (``start``: at its
    start). Returns (the soft pins of the weights strictly between 0 and 1, the (N,) mask of
    the particles to pin: inverse mass 0 in the Model). ValueError naming the argument."""
    w = as_float_array(weights, "weights", (None,))
    if w.size and (w.min() < 0.0 or w.max() > 1.0):
        raise ValueError("weights: expected values in 0..1")
    if not (math.isfinite(stiffness) and stiffness > 0.0):
        raise ValueError(f"stiffness: expected a finite value > 0 N/m, got {stiffness!r}")
    end = as_float_array(targets, "targets", (len(w), 3))
    held = np.flatnonzero((w > 0.0) & (w < 1.0))
    compliance = (1.0 - w[held]) / (w[held] * stiffness)
    begin = None if start is None else as_float_array(start, "start", (len(w), 3))[held]
    return SoftPins(held, end[held], compliance, begin), w >= 1.0


def spring_forces(state: State, soft_pins: SoftPins) -> np.ndarray:
    """The force [N] each spring of ``soft_pins`` pulls with at the state's positions:
    |p - x| / alpha, p the target at the end of the frame."""
    particles = np.asarray(soft_pins.particles, dtype=np.int64)
    end = np.asarray(soft_pins.targets, dtype=np.float64).reshape(-1, 3)
    alpha = np.broadcast_to(np.asarray(soft_pins.compliance, dtype=np.float64),
                            (len(particles),))
    return np.linalg.norm(end - state.x[particles], axis=1) / alpha
