"""``step``: advance a State by one frame of XPBD substeps."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from . import collision
from .air import Air, as_air, as_wind
from .model import Model, SolvePlan, State
from .rod import RodFrame, as_pin_turns, fresh_state, least_substeps
from .sleep import FrameSleep, balance_key, hold_rods, release_rods
from .substep_forces import SubstepForces
from .tension import after_step, carries, carry_into
from .validation import as_float_array, as_positive_float, as_substeps
from .workspace import RodSubsteps, Workspace

if TYPE_CHECKING:  # (imported where used: they load numba)
    from .contacts.frame import FrameContacts
    from .solve.substeps import RopeSubsteps

MAX_DAMPING_PER_SUBSTEP = 50.0
"""The most damping d [1/s] times the substep h [s] a step takes: each substep keeps
exp(-d h) of the velocity, 2e-22 at 50, so nothing moves any more beyond it, while past
d h = 745 exp(-d h) / h (``velocity_scale``) is 0 in float64 and the contacts divide by it."""

PARALLEL_MIN_WORK = 1_000_000
"""Particle-substeps per frame from which the lane kernel spreads its blocks over threads.
Below it a parallel region's start-up (about 1 ms here) costs more than it saves."""

RESOLVE_CONTACT_PASSES = 2
"""Frictionless passes over all contacts after the rope's re-solve in a substep."""

class StepKernels(NamedTuple):
    """The kernels ``step`` calls itself, by name (``kernels``)."""

    first_nonfinite: Any
    """``kernels_frame.first_nonfinite``: the first NaN or inf of a flat array, or -1"""
    pin_start: Any
    """``kernels_frame.pin_start``: pinned particles' velocity to their targets"""
    pin_finish: Any
    """``kernels_frame.pin_finish``: pinned particles exactly on their targets"""
    solve_frame: Any
    """``solve.frame.solve_frame``: a frame without contacts"""


_kernels: StepKernels | None = None


def kernels() -> StepKernels:
    """The kernels ``step`` calls, imported on first use (importing them loads numba; they
    compile or load from the cache when first called), so that importing the core, or
    registering the add-on, stays cheap (``kernel_cache`` drops stale cached kernels when
    ``jit`` is imported)."""
    global _kernels
    if _kernels is None:
        from .solve import kernels_frame as frame
        from .solve.frame import solve_frame

        _kernels = StepKernels(frame.first_nonfinite, frame.pin_start, frame.pin_finish,
                               solve_frame)
    return _kernels


def _check_state(model: Model, state: Any, first_nonfinite: Any) -> None:
    for name in ("x", "v"):
        array = getattr(state, name, None)
        if not isinstance(array, np.ndarray) or array.shape != (model.particle_count, 3) or (
            array.dtype != np.float64
        ):
            raise ValueError(
                f"state.{name}: expected a float64 array of shape ({model.particle_count}, 3)"
            )
        if not array.flags.c_contiguous or not array.flags.writeable:
            raise ValueError(f"state.{name}: must be a writeable C-contiguous array")
        if first_nonfinite(array.reshape(-1)) >= 0:
            raise ValueError(f"state.{name}: contains NaN or inf")


def _as_gravity(gravity: Any) -> np.ndarray:
    """``as_float_array(gravity, "gravity", (3,))``, with a short cut for what nearly every
    call passes, a tuple of three finite floats (the full check costs 4 us, a fifth of a
    12-point frame)."""
    if (type(gravity) is tuple and len(gravity) == 3
            and all(type(c) is float and math.isfinite(c) for c in gravity)):
        return np.array(gravity)
    return as_float_array(gravity, "gravity", (3,))


def _pin_targets(pin_targets: Any, model: Model, pinned: np.ndarray,
                 first_nonfinite: Any) -> np.ndarray:
    """The pinned rows of ``pin_targets`` (N, 3), checked as ``as_float_array`` checks them
    (NaN or inf in any row is an error), without its copy of all N rows when the argument is
    already a float64 (N, 3) C-contiguous array (what the Blender side passes each frame)."""
    shape = (model.particle_count, 3)
    if (isinstance(pin_targets, np.ndarray) and pin_targets.dtype == np.float64
            and pin_targets.shape == shape and pin_targets.flags.c_contiguous):
        bad = first_nonfinite(pin_targets.reshape(-1))
        if bad >= 0:
            raise ValueError(f"pin_targets: contains NaN or inf (first at flat index {bad})")
        return pin_targets[pinned]
    return as_float_array(pin_targets, "pin_targets", shape)[pinned]


def step(
    model: Model,
    state: State,
    dt: float,
    substeps: int,
    *,
    gravity: Any = (0.0, 0.0, -9.81),
    pin_targets: Any = None,
    colliders: Any = (),
    accelerations: Any = None,
    air: Air | None = None,
    wind: Any = None,
    pin_turns: Any = None,
) -> None:
    """Advance ``state`` in place by one frame of ``dt`` [s] split into ``substeps`` XPBD substeps.

    Each substep of h = dt / substeps predicts x + h v + h^2 g for the free particles, projects
    the constraints with the Model's solver (``Model(..., solver=)``: by default the direct
    solve of each rope's distance constraints together, ``kernels_direct``; on request, or
    for what is not a chain, one Gauss-Seidel sweep with lambda reset, ``kernels``), and sets
    v = (x - x_prev) / h, scaled by exp(-damping h). ``gravity`` [m/s^2] is a 3-vector.
    ``accelerations`` (N, 3) [m/s^2], optional: each particle's external acceleration
    besides gravity (wind, force fields: a force F on a particle of mass m is F / m), added
    to gravity in the predict of every substep, x + h v + h^2 (g + a_i); rows of pinned
    particles are ignored. Without it the frame is gravity's alone, bit for bit.
    ``pin_targets`` (N, 3) [m], optional: where the pinned particles are at the end of the
    frame; they move there in a straight line over the substeps (rows of free particles are
    ignored). Without it the pinned particles stay put.

    ``colliders``: a sequence of ``collision.Collider`` (triangle meshes, moving linearly
    from their ``vertices`` to ``vertices_end`` over the frame) and ``collision.Plane``
    (grounds), or a single one; colliders without usable triangles are ignored. With
    colliders, or ``model.self_collision`` and a radius > 0, each substep ends with the
    contact projection of ``kernels_contact`` (rope-rope, then meshes, then planes; see
    ``contacts.FrameContacts``) on particles of radius ``model.particle_radius``, and the
    substeps run one at a time. Without either, nothing of that runs (the frame is computed
    as before collisions existed). The contacts' candidate lists found at the end of a frame
    are kept in ``state.workspace`` and used by the next frame only when it starts where this
    one ended; any other start searches afresh, with the same result: the state's x, v,
    ``rest`` (ropes at rest sleep, ``core.sleep``: how long each has been still),
    ``tension`` (each edge's tension, which the next frame's solve starts from,
    ``core.tension``) and ``rod`` are all a cache needs (``State.copy``).

    ``air`` (``air.Air``: density [kg/m^3], normal and tangential drag coefficients),
    optional: the air drags every segment as a cylinder of diameter 2 * ``model.particle_radius``
    (0.5 rho d (C_n |u_n| u_n + pi C_t |u_t| u_t) per length, u the air's velocity relative
    to the rope; see ``air``), taken at every substep's start, bounded so that it never
    carries a particle past the air. ``wind`` [m/s]: the air's velocity, a 3-vector or
    (N, 3) per particle (default: still air); it acts only through ``air``. With air the
    frame runs as stages, one kernel call per substep, as with contacts
    (``core.substep_forces``; implicit Euler, also with ``integrator="bdf2"``); without it
    (None, density 0, both coefficients 0, radius 0) nothing of it runs.

    A Model with a ``rod`` (``rod.Rod``) runs as stages too, and its frames follow each
    substep (``state.rod``). ``pin_turns`` (N,) [rad], optional: for a pinned rope end,
    how far what holds it turns its end segment's frame about the segment over the frame
    (0: it holds the end's roll; the turn travels down the rod as twist); nan, and the rows
    of other particles, are ignored. Without it the rod's ends turn freely.

    Raises ValueError naming the argument for dt <= 0, substeps < 1, NaN or inf anywhere,
    arrays of the wrong shape, or a damping above ``MAX_DAMPING_PER_SUBSTEP`` / h; ``state``
    is left untouched then.
    """
    _advance(model, state, dt, substeps, gravity, pin_targets, model.plan, colliders=colliders,
             accelerations=accelerations, air=air, wind=wind, pin_turns=pin_turns)


def step_sequential(
    model: Model,
    state: State,
    dt: float,
    substeps: int,
    *,
    gravity: Any = (0.0, 0.0, -9.81),
    pin_targets: Any = None,
    colliders: Any = (),
    accelerations: Any = None,
    air: Air | None = None,
    wind: Any = None,
) -> None:
    """``step`` done by the plain sequential sweep alone (no lanes, no threads): the reference
    that the fast path matches bit for bit, kept for tests and benchmarks."""
    _advance(model, state, dt, substeps, gravity, pin_targets, model.reference_plan,
             colliders=colliders, accelerations=accelerations, air=air, wind=wind)


def _advance(model: Model, state: State, dt: Any, substeps: Any, gravity: Any,
             pin_targets: Any, plan: SolvePlan, *, parallel: bool | None = None,
             colliders: Any = (), accelerations: Any = None, air: Any = None,
             wind: Any = None, pin_turns: Any = None) -> None:
    dt = as_positive_float(dt, "dt")
    substeps = as_substeps(substeps)
    most = (model.damping if model.particle_damping is None
            else float(model.particle_damping.max()))
    if not most * (dt / substeps) <= MAX_DAMPING_PER_SUBSTEP:
        raise ValueError(f"damping {most:g} 1/s is more than a substep of "
                         f"{dt / substeps:g} s can hold (at most "
                         f"{MAX_DAMPING_PER_SUBSTEP * substeps / dt:g} 1/s)")
    gravity_vector = _as_gravity(gravity)
    k = kernels()
    _check_state(model, state, k.first_nonfinite)
    workspace = state.workspace
    if workspace is None or workspace.model is not model:
        workspace = state.workspace = Workspace.for_model(model)
    if accelerations is None:
        extra = workspace.no_accelerations
        if workspace.lane_accelerations:
            workspace.put_accelerations(plan, None)
    else:
        extra = as_float_array(accelerations, "accelerations", (model.particle_count, 3))
        workspace.put_accelerations(plan, extra)
    meshes, planes = collision.as_colliders(colliders)
    pinned = plan.pinned
    if pin_targets is None:
        targets = state.x[pinned]
    else:
        targets = _pin_targets(pin_targets, model, pinned, k.first_nonfinite)
    checked_air = as_air(air)
    # (a wind is checked with air or without; still air is made only for the air)
    air_velocity = None if wind is None else as_wind(wind, model.particle_count)
    if checked_air is None or not (model.edge_count and model.particle_radius.any()):
        checked_air = None
    elif air_velocity is None:
        air_velocity = as_wind(None, model.particle_count)
    rod_frame = None
    if model.rod_layout is not None and plan.lanes is not None:
        # (rods act in the lanes' direct solve; ``step_sequential`` sweeps plain ropes)
        turns = as_pin_turns(pin_turns, model.particle_count)
        if state.rod is None:
            state.rod = fresh_state(model.rod_layout, model.particle_rest_x, state.x)
        # more substeps where the pull through the frames of a tight, stiff curl needs them
        substeps = max(substeps, _least_rod_substeps(model, workspace, state, dt))
        rod_frame = RodFrame(model.rod_layout, state.rod, model.particle_inv_mass == 0.0,
                             turns, substeps, math.exp(-model.damping * dt / substeps))
    h = dt / substeps
    # the air, a damping map and a rod act anew at every substep's start
    # (``substep_forces``)
    forces = (SubstepForces(model, checked_air, air_velocity, extra, h, rod=rod_frame,
                            lanes=(workspace.lane_particles,
                                   None if plan.lanes is None else plan.lanes.layout))
              if checked_air is not None or rod_frame is not None
              or (model.particle_damping is not None and substeps > 1) else None)
    if model.particle_damping is not None and forces is None:
        # this one substep's damping beyond the least
        _damp_more(state.v, model.particle_damping - model.damping, dt)
    velocity_scale = math.exp(-model.damping * h) / h
    # Pinned particles are kinematic: constant velocity to the target over the frame.
    pin_velocity = np.empty((len(pinned), 3))
    k.pin_start(state.x, state.v, pinned, targets, dt, pin_velocity)
    # the direct solve starts from the tension the last frame ended with, if carried
    fresh = not carry_into(model, plan, workspace, state.tension, h,
                           may_sleep=state.rest is not None)
    if meshes or planes or plan.self_contacts or forces is not None:
        _advance_with_contacts(model, state, workspace, dt, substeps, gravity_vector, extra,
                               targets, plan, parallel, meshes, planes, velocity_scale,
                               forces=forces, fresh=fresh)
        k.pin_finish(state.x, state.v, pinned, targets, pin_velocity)
        state.tension = after_step(model, plan, workspace, h) if carries(plan) else None
        return
    lanes = plan.lanes
    threads = lanes is not None and (
        parallel if parallel is not None
        else len(lanes.layout.particles) * substeps >= PARALLEL_MIN_WORK)
    state.rest = None  # (ropes sleep only in frames with contacts)
    k.solve_frame(model, plan, workspace, state.x, state.v, gravity_vector, extra, h, substeps,
                  velocity_scale, threads, fresh=fresh)
    # The straight-line pin path lands on the target up to rounding; make it exact.
    k.pin_finish(state.x, state.v, pinned, targets, pin_velocity)
    # (BDF2's substeps after the first solve with 2 h / 3)
    state.tension = after_step(model, plan, workspace, h, lane_step=(
        h * (2.0 / 3.0) if model.integrator == "bdf2" and substeps > 1 else None)
    ) if carries(plan) else None


def _least_rod_substeps(model: Model, workspace: Workspace, state: State, dt: float) -> int:
    """``rod.least_substeps`` of the state's rod for a frame of ``dt`` [s], kept in the
    workspace: a frame that starts where the last asked (a sleeping rod, a still one) takes
    the last answer (0.5 ms a frame at 1,200 particles)."""
    assert model.rod_layout is not None and state.rod is not None
    kept, bend_rest = workspace.rod_substeps, state.rod.bend_rest
    if (kept is not None and kept.dt == dt and np.array_equal(kept.x, state.x)
            and np.array_equal(kept.bend_rest, bend_rest)):
        return kept.substeps
    substeps = least_substeps(model.rod_layout, state.x, model.particle_inv_mass, dt,
                              bend_rest=bend_rest)
    workspace.rod_substeps = RodSubsteps(state.x.copy(), bend_rest.copy(), dt, substeps)
    return substeps


def _damp_more(v: np.ndarray, beyond: np.ndarray, h: float) -> None:
    """A substep of ``h`` [s] of the damping each particle has beyond the Model's least
    (``beyond`` (N,) [1/s]: a damping map), on the velocities v (N, 3) [m/s] in place:
    v *= exp(-beyond h), the decay the substep's velocity update gives the least rate. It
    only takes speed away (no energy in), at any rate; a pinned particle's velocity is set
    from its target's path after it."""
    v *= np.exp(-beyond * h)[:, None]


def _hold(ropes: RopeSubsteps, frame: FrameContacts, x: np.ndarray, v: np.ndarray) -> None:
    """The rope-rope contacts that touch at x, v held in the ropes' next solves
    (``RopeSubsteps.hold``), where their solve holds any (two ropes or more with
    self-collision): else the frame's pairs are not even chosen (``hold_pairs``: a few per
    cent of a single rope's frame with a ground)."""
    if ropes.holds is not None:
        ropes.hold(*frame.hold_pairs(x, v), frame.hold_reach)


def _advance_with_contacts(model: Model, state: State, workspace: Workspace, dt: float,
                           substeps: int, gravity: np.ndarray, extra: np.ndarray,
                           targets: np.ndarray, plan: SolvePlan, parallel: bool | None,
                           meshes: list, planes: list, velocity_scale: float, *,
                           forces: SubstepForces | None = None, fresh: bool = True) -> None:
    """The frame as a pipeline of stages per substep (``solve.substeps``), for contacts and
    for what acts anew at every substep (``forces``: the air, a damping map, a rod): the
    ropes' kernels run one substep per call (the contacts need the positions at every
    substep end), then ``contacts.FrameContacts.project`` moves the particles (x += dx,
    v += dx velocity_scale, see ``kernels_contact``), the ropes the contacts stretched are
    solved again, and only the moved particles go back to the lane buffer. Without any
    contact or ``forces`` this is bit-identical to the frame-at-once path (each kernel call
    continues exactly where the last one stopped). The contacts held between ropes carry
    from substep to substep and are let go at the frame's end (a frame depends on the state
    alone). ``fresh``: the first substep estimates the ropes' tension from x, v; False: the
    state's carried tension is in the lane buffer (``tension.carry_into``)."""
    kernels()
    from .contacts.frame import FrameContacts
    from .solve.substeps import RopeSubsteps
    h = dt / substeps
    x, v = state.x, state.v
    pin_end = x.copy()
    pin_end[plan.pinned] = targets
    lanes = plan.lanes
    external = None if extra is workspace.no_accelerations else extra
    # ropes (chains, in the lanes) at rest on something sleep through whole frames
    # (``core.sleep``)
    rest = None
    rod = None if forces is None else forces.rod
    if (lanes is not None and substeps > 1 and model.sleep_speed > 0.0
            and (meshes or planes or plan.self_contacts)):
        most = (0.0 if external is None
                else float(np.sqrt((external * external).sum(axis=1).max())))
        # [m] the most gravity and the external accelerations move a particle from rest in
        # the frame (how far a moving rope can reach a sleeping one)
        fall = 0.5 * (float(np.linalg.norm(gravity)) + most) * dt * dt
        rest = FrameSleep(model, lanes, dt, fall,
                          balance_key(model, gravity, external, meshes, planes,
                                      air=None if forces is None else forces.sleep_air))
        ready = rest.start(state.rest, x, v, plan.pinned, targets)
        if ready and rod is not None:
            # a rod whose held end turns wakes, as one whose pin moves
            ready -= rest.wake(np.flatnonzero(rod.held & (rod.turn != 0.0)))
    state.rest = None
    frame = FrameContacts(model, workspace, x, v, pin_end, dt, substeps, gravity, meshes,
                          planes, velocity_scale, accelerations=external)
    # one substep per call: a parallel region's start-up is paid every substep
    threads = lanes is not None and (parallel if parallel is not None
                                     else len(lanes.layout.particles) >= PARALLEL_MIN_WORK)
    ropes = RopeSubsteps(model, plan, workspace, x, v, gravity, extra, h, velocity_scale,
                         threads, fresh=fresh)
    ropes.release()  # (none are left but by a call that stopped short)
    everything_asleep = False
    kept_rods = None
    if rest is not None and ready:
        assert lanes is not None
        # the contacts wake the ropes near moving ones or a moving collider
        if frame.fall_asleep(rest, x, v, ropes.awake, ropes.awake_blocks):
            rest.stop(v)
            if rod is not None:  # (a sleeping rod's frames stay as they are too)
                kept_rods = hold_rods(rod.state, rest.asleep_particles())
            # nothing to move: the substeps would leave every bit of x, v as it is
            everything_asleep = (frame.sleeping == len(lanes.rope_block)
                                 and not len(plan.sweep_particles))
    for substep in range(0 if everything_asleep else substeps):
        if forces is not None:
            # the air's drag and the damping map from the velocities the substep starts with
            ropes.accelerate(forces.start(x, v), frame.moved,
                             velocities_changed=forces.decay is not None)
        ropes.solve(substep, frame.moved)
        moved = frame.project(x, v, substep)
        if ropes.stretched(moved):
            # the ropes the contacts stretched, solved again (the contacts between ropes
            # held in it: ``kernels_held``), then the colliders again without friction. See
            # ``kernels_resolve``.
            _hold(ropes, frame, x, v)
            resolve_moves = ropes.resolve(moved, threads)
            frame.refresh(x, v, substep)  # the re-solve may take particles off their chords
            for _ in range(RESOLVE_CONTACT_PASSES):
                moved = frame.project_again(x, v, substep, resolve_moves)
        frame.end_substep(v)
        _hold(ropes, frame, x, v)  # (for the next substep's solve)
        ropes.take_moved(moved)
        if forces is not None:
            forces.finish(state)
    ropes.release()
    frame.finish(x)
    if rest is not None:
        turning = None
        if rod is not None:
            release_rods(rod.state, kept_rods)
            turning = np.abs(rod.state.twist_rate) * model.particle_radius
        state.rest = rest.finish(x, turning)
