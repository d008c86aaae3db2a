"""What acts anew at every substep's start: the air's drag and a damping map.

Both depend on the velocities each substep starts with, so neither can be folded into a
frame's constant accelerations:

- the air (``air.Air``): the drag of the substep's start velocities, an acceleration [m/s^2]
  added to the external ones (``kernels_air``), whose work is kept in ``State.air_work``
  (the energy a run's checks count);
- a damping map (``Model.particle_damping``): each particle's damping beyond the Model's
  least, v *= exp(-(d_i - d) h), the rest coming from the solve's velocity update.

``SubstepForces`` is their one owner. ``solver`` asks it for each substep's accelerations
in the stages of a frame (``solver._advance_with_contacts``, one kernel call per substep,
which the contacts need anyway) or, for a rod, before each one-substep call.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .air import Air, drag_accelerations


class SubstepForces:
    """The air and the damping map of one frame (see the module), for substeps of ``h``."""

    __slots__ = ("model", "air", "wind", "extra", "h", "decay", "mass", "total", "drag",
                 "force", "before")

    def __init__(self, model: Any, air: Air | None, wind: np.ndarray | None, extra: np.ndarray,
                 h: float, *, damping_map: bool) -> None:
        self.model = model
        self.air = air
        """The air (checked, ``air.as_air``), or None: no drag"""
        self.wind = wind
        """(N, 3) [m/s] the air's velocity (None without air)"""
        self.extra = extra
        """(N, 3) [m/s^2] the frame's external accelerations besides gravity (without drag)"""
        self.h = h
        """[s] the substep"""
        self.decay: np.ndarray | None = None
        """(N, 1) exp(-(d_i - d) h) per free particle, 1 for pinned ones (their velocity is
        their target's path), or None: no damping map applied here"""
        if damping_map and model.particle_damping is not None:
            beyond = np.where(model.particle_inv_mass > 0.0,
                              model.particle_damping - model.damping, 0.0)
            self.decay = np.exp(-beyond * h)[:, None]
        count = model.particle_count
        inv_mass = model.particle_inv_mass
        self.mass = np.divide(1.0, inv_mass, out=np.zeros(count), where=inv_mass > 0.0)
        """(N,) [kg] each free particle's mass, 0 for pinned ones"""
        self.total = extra if air is None else np.empty((count, 3))
        """(N, 3) [m/s^2] the substep's accelerations besides gravity: ``extra`` + drag"""
        self.drag = np.zeros((count, 3)) if air is not None else None
        self.force = np.empty((count, 3)) if air is not None else None
        self.before = np.empty((count, 3)) if air is not None else None
        """(N, 3) scratch: the drag [m/s^2], its force [N], where the substep starts [m]"""

    @property
    def sleep_air(self) -> tuple[Air, np.ndarray] | None:
        """(air, wind) for the frame's sleeping key (``sleep.balance_key``), or None."""
        return None if self.air is None or self.wind is None else (self.air, self.wind)

    def start(self, x: np.ndarray, v: np.ndarray) -> np.ndarray:
        """A substep starting at x [m], v [m/s] (N, 3): the damping map takes its part of v
        (in place), and the substep's accelerations [m/s^2] (N, 3) besides gravity are
        returned: the frame's external ones plus the drag of these velocities."""
        if self.decay is not None:
            v *= self.decay
        if self.air is None:
            return self.total
        model = self.model
        assert self.force is not None and self.drag is not None and self.before is not None
        assert self.wind is not None
        drag_accelerations(x, v, self.wind, model.edge_index, model.particle_radius,
                           model.particle_inv_mass, self.air, self.h, self.force, self.drag)
        np.add(self.extra, self.drag, out=self.total)
        np.copyto(self.before, x)
        return self.total

    def finish(self, state: Any) -> None:
        """The substep done (``state.x`` where it ends): the drag's work on the free
        particles, m a . (x_end - x_start) [J], added to ``state.air_work`` (N,)."""
        if self.air is None:
            return
        from .solve.kernels_air import add_work

        assert self.drag is not None and self.before is not None
        if state.air_work is None or len(state.air_work) != len(self.mass):
            state.air_work = np.zeros(len(self.mass))
        # (the drag of a pinned particle is 0, and so is its mass here)
        add_work(state.x, self.before, self.drag, self.mass, state.air_work)
