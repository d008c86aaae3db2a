"""Checks of what a rope is placed by and what a frame produced, before anything is written.

- ``matrix_problem`` / ``check_matrix``: an object matrix that cannot take points back into
  object space (NaN, infinite, scaled to zero along some direction).
- ``check_energy``: the safety net for an unstable solve (a rope gaining energy it cannot
  have): positions beyond anything possible are refused with a message rather than written.
  Two tests: a geometric one always (a segment stretched ``MAX_STRETCH`` times, a point
  beyond Blender's coordinates), and an energy test: the rope's kinetic and gravitational
  energy (``energy``) may not rise above its budget (``sim.Frame.budget``) by more than
  ``ENERGY_MARGIN`` times its weight times its length. The budget is the start frame's total
  (those and the elastic energy its constraints stored there, ``energy_at_start``) plus the
  work that forces and fields did since (``work``, exact: their accelerations are constant
  over a frame), the air's drag and wind (``core.State.air_work``, summed substep by
  substep) and soft pins' springs (``spring_jump``: their targets jump between frames; and
  ``core.State.spring_work``: an attachment's spring pulled along within a frame, summed
  substep by substep).
  A rope only converts, loses and takes in that energy (no solver adds energy,
  docs/physics.md). Colliders that stay where they are do no work (contacts with them only
  push and rub), so they leave the test on. In a frame where anything whose work is not
  counted acts (a pin or an attachment moves, a collider moves, a changed setting),
  the test stands aside, and the budget starts again from the rope's energy at that frame's
  end (``energy_anchor``): a rope is never compared with an energy it no longer has to keep
  (a pin moved away and back used to stop ropes that way), and once the pin or the collider
  is still again the test is back on.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...core.collision import MAX_COORDINATE
from ..errors import RetryError, RopeError

MIN_AXIS_SCALE = 1e-30
"""Below this length [m per object unit] of an axis of the object matrix (3x3 part) the
object is scaled to zero: world positions could not be written back into object space."""

MIN_FLATNESS = 1e-6
"""Below this |det| / (product of the axis lengths) of the object matrix, its axes are
(nearly) in one plane or line: scaled to zero along some direction. A uniform scale of any
size gives 1, so a tiny object (scale 1e-4: |det| 1e-12) is not refused."""

MAX_STRETCH = 100.0
"""Safety net: a segment longer than this many times its rest length (plus ``MAX_SLACK``)
after a frame means the rope gained energy it cannot have (an unstable solve): nothing is
written and the panel says so. Nothing a user sets on purpose stretches a rope this far."""

ENERGY_MARGIN = 1.0
"""Allowed rise of a rope's energy over its start frame [in units of m g L: free mass m [kg],
gravity g [m/s^2], total rest length L [m]] while nothing external moves it. A stable solve
only loses energy; an exploding one gains many times this within a few frames."""

MAX_ACCELERATION = 1e9
"""[m/s^2] (10^8 g) The most the scene's gravity or a force field may accelerate a point:
beyond, one frame throws the rope past the coordinates Blender can hold, which the guard
after the step took for a solve that blew up and asked for more substeps. A value set from a
script to inf arrives as Blender's float maximum, 3.4e38, which is finite."""

MAX_SLACK = 1.0
"""[m] added to the stretch limit, so that very short segments are not flagged for moving
apart by millimetres."""


def _det3(m: np.ndarray) -> float:
    # Closed form: numpy.linalg (LAPACK) costs ~2 ms per call inside Blender here, more than
    # the whole frame budget, when its thread pool competes with Blender's.
    return float(m[0, 0] * (m[1, 1] * m[2, 2] - m[1, 2] * m[2, 1])
                 - m[0, 1] * (m[1, 0] * m[2, 2] - m[1, 2] * m[2, 0])
                 + m[0, 2] * (m[1, 0] * m[2, 1] - m[1, 1] * m[2, 0]))


def matrix_problem(matrix: np.ndarray, name: str) -> str | None:
    """Why an object matrix cannot place a rope (not finite, or scaled to zero along some
    direction), or None."""
    if not np.all(np.isfinite(matrix)):
        return f"'{name}' has a transform with NaN or infinite values"
    axes = matrix[:3, :3]
    lengths = np.sqrt((axes * axes).sum(axis=0))
    scale = float(lengths[0] * lengths[1] * lengths[2])
    if lengths.min() < MIN_AXIS_SCALE or abs(_det3(axes)) < MIN_FLATNESS * scale:
        return (f"'{name}' has a scale of zero (or is flattened along some direction): points "
                "cannot be written back")
    return None


def check_matrix(matrix: np.ndarray, name: str) -> None:
    """RopeError if an object matrix is not finite or scales to zero."""
    problem = matrix_problem(matrix, name)
    if problem is not None:
        raise RopeError(problem)


def energy(model: Any, x: np.ndarray, v: np.ndarray, gravity: Any) -> float:
    """Kinetic + gravitational energy [J] of the free particles: positions ``x`` [m],
    velocities ``v`` [m/s] (world, [N, 3]), ``gravity`` [m/s^2].

    The elastic energy stored now is left out on purpose: it is never negative, so kinetic +
    gravitational energy can only stay at or below the start frame's total (which counts
    it, ``energy_at_start``); and 0.5 C^2 / alpha of an unconverged solve (a sweep,
    few iterations) is far larger than the stretch a user sees."""
    from ..write import io_kernels  # numba: loaded before any frame is simulated

    g = np.asarray(gravity, dtype=np.float64)
    return float(io_kernels.kinetic_potential(x, v, model.particle_inv_mass, g[0], g[1], g[2]))


def energy_margin(model: Any, gravity: Any) -> float:
    """The rise of energy [J] ``check_energy`` allows (``ENERGY_MARGIN``)."""
    inv_mass = model.particle_inv_mass
    free = inv_mass > 0.0
    weight = float((1.0 / inv_mass[free]).sum()) * max(float(np.linalg.norm(gravity)), 1.0)
    return ENERGY_MARGIN * weight * max(float(model.edge_rest_length.sum()), 1.0) + 1e-3


def check_energy(model: Any, x: np.ndarray, what: str, *, v: np.ndarray | None = None,
                 gravity: Any = None, start_energy: float | None = None,
                 margin: float | None = None) -> None:
    """The safety net: RopeError if positions ``x`` [m] (world) are beyond anything the rope
    could reach without gaining energy: a segment stretched past ``MAX_STRETCH`` times its
    rest length (+ ``MAX_SLACK``), or a point beyond the coordinates Blender can hold. An
    unstable solve (a very long rope with too few substeps) then stops with a message
    instead of writing absurd positions. ``start_energy`` [J]: the most ``energy`` the rope
    may have (its budget, ``sim.Frame.budget``; None: no energy test); ``margin``:
    ``energy_margin(model, gravity)`` if the caller keeps it (else computed)."""
    from ..write import io_kernels

    if len(x) and io_kernels.beyond(np.ascontiguousarray(x).reshape(-1), MAX_COORDINATE):
        held = model.particle_inv_mass == 0.0
        if held.any() and np.abs(x[held]).max() > MAX_COORDINATE:
            # (put there by what holds it, not thrown by the solve: retried at every frame
            # change, as it may be moved back)
            raise RetryError(f"A pinned or attached point is held more than "
                            f"{MAX_COORDINATE:g} m from the world origin (by the rope's "
                            "object, a pin's hook or an attachment's target): single-precision "
                            "coordinates have no precision left there; nothing was written")
        raise RopeError(f"{what} blew up: a point is more than "
                        f"{MAX_COORDINATE:g} m away; nothing was written. "
                        + _advice(model))

    edges = model.edge_index
    k = int(io_kernels.first_overstretched(x, edges, model.edge_rest_length, MAX_STRETCH,
                                           MAX_SLACK)) if len(edges) else -1
    if k >= 0:
        d = x[edges[k, 0]] - x[edges[k, 1]]
        length = math.sqrt(float(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]))
        times = length / max(float(model.edge_rest_length[k]), 1e-12)
        raise RopeError(f"{what} gained energy it cannot have (a segment stretched to "
                        f"{length:.3g} m, {times:.0f} times its rest length): stopped, "
                        "nothing was written. " + _advice(model))
    if start_energy is not None and v is not None:
        check_budget(model, x, v, what, gravity=gravity, budget=start_energy, margin=margin)


def check_budget(model: Any, x: np.ndarray, v: np.ndarray, what: str, *, gravity: Any,
                 budget: float, margin: float | None = None) -> None:
    """``check_energy``'s energy test alone (its geometric one done already): RopeError if
    the kinetic and gravitational ``energy`` at ``x`` [m], ``v`` [m/s] rises above
    ``budget`` [J] (``sim.Frame.budget``) by more than ``margin`` (default
    ``energy_margin``)."""
    rise = energy(model, x, v, gravity) - budget
    if rise > (margin if margin is not None else energy_margin(model, gravity)):
        raise RopeError(f"{what} gained energy it cannot have ({rise:.3g} J more than "
                        "its kinetic, gravitational and elastic energy at the start "
                        "frame and the work of forces and fields since, with nothing "
                        "else moving it): stopped, nothing was written. "
                        + _advice(model))


def _advice(model: Any) -> str:
    """What keeps ``model`` stable, for the safety net's messages."""
    advice = "More Substeps (or a stiffer, heavier rope) keeps it stable"
    if getattr(model, "rod_layout", None) is not None:
        advice += (" (it is a rod, Shape & Twist: its twist lags its bending by a substep; "
                   "Rest Shape: Straight without Twist or Plasticity makes it a plain rope)")
    return advice


def work(model: Any, before: np.ndarray, after: np.ndarray,
         accelerations: np.ndarray | None) -> float:
    """The work [J] of ``accelerations`` [m/s^2] (world, [N, 3]; None: none) on the free
    particles of ``model`` moving from ``before`` to ``after`` [m] over a frame: sum of
    m a . (after - before). Exact for a frame's forces and fields, which are evaluated once
    per frame and constant over it (``handoff.Handoff.accelerations``)."""
    if accelerations is None:
        return 0.0
    inv_mass = model.particle_inv_mass
    free = inv_mass > 0.0
    pushed = ((after - before)[free] * accelerations[free]).sum(axis=1)
    return float((pushed / inv_mass[free]).sum())


def energy_budgets(ropes: list[Any], inputs: list[Any], previous: list[Any], handoff: Any,
                   moving_colliders: bool, x: list[np.ndarray], *,
                   air_work: np.ndarray | None = None,
                   spring_work: np.ndarray | None = None
                   ) -> tuple[list[float | None], list[Any]]:
    """Each member's energy budget [J] after a frame (``sim.Frame.budget``) and its soft
    pins (``sim.Frame.springs``). The budget is its ``previous`` frame's plus the work of
    the frame's forces and fields (``work``), of the air's drag and wind (``air_work``: the
    stepped State's, per particle [J], None: no air) and of its soft pins' targets (their
    jump between frames, ``spring_jump``, and their move within the frame, ``spring_work``:
    the stepped State's, per particle [J], None: none moved) while everything else that
    acted is counted: its pins and rod ends where they were (``inputs``: the frame's
    ``frame.inputs.Inputs``), its Model the previous frame's, nothing held by an attachment
    and no collider that moves within the frame (``moving_colliders``; a still one does no
    work). Else None: the caller starts the
    budget again from the frame's end (``energy_anchor``). ``handoff``: the frame's
    ``handoff.Handoff``, its rows the members' side by side; ``x``: each member's new
    positions [m]."""
    budgets: list[float | None] = []
    springs: list[Any] = []
    row = 0
    accelerations = handoff.accelerations
    for rope, i, held, before, after in zip(ropes, inputs, handoff.held, previous, x,
                                            strict=True):
        rows = slice(row, row + len(after))
        mine = _member_springs(handoff.soft_pins, row, len(after))
        row += len(after)
        springs.append(mine)
        counted = (before.budget is not None and not held
                   and not moving_colliders
                   and (i.turn is None or (before.turn is not None
                                           and np.array_equal(i.turn, before.turn)))
                   and rope.track.model is before.model
                   and np.array_equal(i.pinned_ids, before.pinned_ids)
                   and np.array_equal(i.targets, before.targets))
        model = rope.track.model
        air = 0.0 if air_work is None else float(air_work[rows].sum())
        pulled = 0.0 if spring_work is None else float(spring_work[rows].sum())
        budgets.append(before.budget + spring_jump(model, before.x, before.springs, mine)
                       + pulled + work(model, before.x, after,
                                       None if accelerations is None else accelerations[rows])
                       + air if counted else None)
    return budgets, springs


def _member_springs(soft_pins: Any, first: int, count: int) -> Any:
    """The soft pins of the member whose particles are ``first`` .. ``first + count - 1`` of
    the joint ``soft_pins`` (``core.SoftPins``, with ``start``), numbered as the member's own;
    None if it has none."""
    if soft_pins is None:
        return None
    particles = np.asarray(soft_pins.particles)
    mine = (particles >= first) & (particles < first + count)
    if not mine.any():
        return None
    alpha = np.broadcast_to(np.asarray(soft_pins.compliance, dtype=np.float64),
                            particles.shape)
    return type(soft_pins)(particles[mine] - first, np.asarray(soft_pins.targets)[mine],
                           alpha[mine], np.asarray(soft_pins.start)[mine])


def spring_energy(model: Any, x: np.ndarray, targets: np.ndarray, springs: Any) -> float:
    """The energy [J] that the soft pins ``springs`` (``core.SoftPins``) store with their
    free particles at ``x`` and their targets at ``targets`` [m]: sum of |p - x|^2 / (2 alpha)."""
    if springs is None:
        return 0.0
    particles = np.asarray(springs.particles)
    free = model.particle_inv_mass[particles] > 0.0
    gap = (np.asarray(targets) - x[particles])[free]
    return float(((gap * gap).sum(axis=1) / (2.0 * np.asarray(springs.compliance)[free])).sum())


def spring_jump(model: Any, x: np.ndarray, before: Any, now: Any) -> float:
    """The energy [J] the soft pins gained between two frames at the positions ``x`` [m] the
    frames meet at: held by ``now``'s targets at its start instead of ``before``'s at its end
    (a Pin Map's targets follow their object from frame to frame). The first frame with soft
    pins counts all they store (``before`` None), the start frame's springs among them."""
    return (spring_energy(model, x, now.start, now) if now is not None else 0.0) - (
        spring_energy(model, x, before.targets, before) if before is not None else 0.0)


def energy_anchor(model: Any, frame: Any, gravity: Any) -> float:
    """The energy [J] a budget starts again from at ``frame`` (``sim.Frame``, made with
    ``model``): ``energy_at_start``'s, and what its soft pins' springs store there."""
    springs = frame.springs
    stored = 0.0 if springs is None else spring_energy(model, frame.x,
                                                       np.asarray(springs.targets), springs)
    return energy_at_start(model, frame, gravity) + stored


def energy_at_start(model: Any, start: Any, gravity: Any) -> float:
    """The energy [J] of a start frame (``sim.Frame``): kinetic, gravitational (``energy``)
    and what its constraints store there (``core.energy.stored_energy``, a rod's with its
    frames: a rope modelled curled stores bending energy, which it may turn into motion)."""
    from ...core.energy import stored_energy

    return energy(model, start.x, start.v, gravity) + stored_energy(model, start.x, start.rod)
