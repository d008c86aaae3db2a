"""``step``: advance a State by one frame of XPBD substeps."""

from __future__ import annotations

import hashlib
import math
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from .model import Model, State, _Plan
from .validation import as_float_array, as_positive_float, as_substeps

PARALLEL_MIN_WORK = 1_000_000
"""Particle-substeps per frame from which the lane kernel spreads its blocks over threads.
Below it a parallel region's start-up (about 1 ms here) costs more than it saves."""

_kernels: tuple[ModuleType, ModuleType] | None = None


def kernels() -> tuple[ModuleType, ModuleType]:
    """The numba kernels (sweep, direct), imported (compiled or loaded from cache) on first use,
    so that importing the core, or registering the add-on, stays cheap."""
    global _kernels
    if _kernels is None:
        from . import kernels as sweep
        from . import kernels_direct as direct

        _drop_stale_cache((sweep, direct))
        _kernels = (sweep, direct)
    return _kernels


def _drop_stale_cache(modules: tuple[ModuleType, ...]) -> None:
    """Forget cached machine code compiled from other versions of the kernel sources.

    numba keys its on-disk cache on each kernel's own file only, but the kernels inline the
    layout constants of ``topology`` and helpers of the other kernel module: a change there
    would silently run stale code. A stamp with the hash of all of them sits beside the cache;
    when it differs, every kernel's cache index is flushed once. numba internals are used
    defensively: at worst this does nothing and numba behaves as usual.
    """
    here = Path(__file__).parent
    digest = hashlib.sha256(b"".join(
        (here / name).read_bytes() for name in ("topology.py", "kernels.py", "kernels_direct.py")
    )).hexdigest()
    try:
        from numba.core.registry import CPUDispatcher

        found = (getattr(obj, "_cache", None) for module in modules
                 for obj in vars(module).values() if isinstance(obj, CPUDispatcher))
        caches: list[Any] = [cache for cache in found if cache is not None]
        folders = {Path(cache._cache_path) for cache in caches}
        stale = any((folder / _STAMP).read_text() != digest if (folder / _STAMP).exists()
                    else True for folder in folders)
        if stale:
            for cache in caches:
                cache.flush()
            for folder in folders:
                folder.mkdir(parents=True, exist_ok=True)
                (folder / _STAMP).write_text(digest)
    except (AttributeError, ImportError, OSError):
        pass


_STAMP = "xpbd-kernels.sha256"


def _check_state(model: Model, state: Any) -> None:
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
        if not np.all(np.isfinite(array)):
            raise ValueError(f"state.{name}: contains NaN or inf")


def step(
    model: Model,
    state: State,
    dt: float,
    substeps: int,
    *,
    gravity: Any = (0.0, 0.0, -9.81),
    pin_targets: Any = None,
) -> None:
    """Advance ``state`` in place by one frame of ``dt`` [s] split into ``substeps`` XPBD substeps.

    Each substep of h = dt / substeps predicts x + h v + h^2 g for the free particles, projects
    every distance constraint once (Gauss-Seidel, lambda reset, see ``kernels``), and sets
    v = (x - x_prev) / h, scaled by exp(-damping h). ``gravity`` [m/s^2] is a 3-vector.
    ``pin_targets`` (N, 3) [m], optional: where the pinned particles are at the end of the
    frame; they move there in a straight line over the substeps (rows of free particles are
    ignored). Without it the pinned particles stay put.

    Raises ValueError naming the argument for dt <= 0, substeps < 1, NaN or inf anywhere, or
    arrays of the wrong shape; ``state`` is left untouched then.
    """
    _advance(model, state, dt, substeps, gravity, pin_targets, model._plan)


def step_sequential(
    model: Model,
    state: State,
    dt: float,
    substeps: int,
    *,
    gravity: Any = (0.0, 0.0, -9.81),
    pin_targets: Any = None,
) -> None:
    """``step`` done by the plain sequential sweep alone (no lanes, no threads): the reference
    that the fast path matches bit for bit, kept for tests and benchmarks."""
    _advance(model, state, dt, substeps, gravity, pin_targets, model._reference_plan)


def _advance(model: Model, state: State, dt: Any, substeps: Any, gravity: Any,
             pin_targets: Any, plan: _Plan, *, parallel: bool | None = None) -> None:
    dt = as_positive_float(dt, "dt")
    substeps = as_substeps(substeps)
    gravity_vector = as_float_array(gravity, "gravity", (3,))
    _check_state(model, state)
    pinned = model.pinned
    if pin_targets is None:
        targets = state.x[pinned]
    else:
        targets = as_float_array(pin_targets, "pin_targets", (model.particle_count, 3))[pinned]
    k, k_direct = kernels()
    h = dt / substeps
    velocity_scale = math.exp(-model.damping * h) / h
    # Pinned particles are kinematic: constant velocity to the target over the frame.
    pin_velocity = (targets - state.x[pinned]) / dt
    state.v[pinned] = pin_velocity

    if plan.lanes is not None:
        lanes = plan.lanes
        layout = lanes.layout
        k.lane_gather(lanes.particles, layout.particle_base, layout.particles, state.x, state.v)
        work = len(layout.particles) * substeps
        use_threads = parallel if parallel is not None else work >= PARALLEL_MIN_WORK
        if plan.lane_solver == "direct":
            run_direct = (k_direct.direct_substeps_parallel if use_threads
                          else k_direct.direct_substeps)
            run_direct(lanes.particles, lanes.edges, layout.block_particle_offset,
                       layout.block_edge_offset, layout.block_length, lanes.block_leading,
                       lanes.block_bending,
                       gravity_vector, h, substeps, model.iterations,
                       -1.0 if model.strain_limit is None else model.strain_limit,
                       velocity_scale)
        else:
            run = k.lane_substeps_parallel if use_threads else k.lane_substeps
            run(lanes.particles, lanes.edges, layout.block_particle_offset,
                layout.block_edge_offset, layout.block_length, gravity_vector, h, substeps,
                velocity_scale)
        k.lane_scatter(lanes.particles, layout.particle_base, layout.particles, state.x, state.v)
    if len(plan.sweep_particles):
        scratch = np.empty_like(state.x)
        multipliers = np.empty(len(plan.sweep_edges))
        k.sweep_substeps(state.x, state.v, model.particle_inv_mass, plan.sweep_particles,
                         plan.sweep_edges, plan.sweep_rest_length, plan.sweep_compliance,
                         gravity_vector, h, substeps, model.iterations, velocity_scale,
                         scratch, multipliers)
    # The straight-line pin path lands on the target up to rounding; make it exact.
    state.x[pinned] = targets
    state.v[pinned] = pin_velocity
