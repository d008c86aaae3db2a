"""What acts anew at every substep's start: the air's drag, a damping map and a rod's frames.

Each depends on the state each substep starts with, so none can be folded into a frame's
constant accelerations:

- the air (``air.Air``): the drag of the substep's start velocities, an acceleration [m/s^2]
  added to the external ones (``kernels_air``), whose work is kept in ``State.air_work``
  (the energy a run's checks count);
- a damping map (``Model.particle_damping``): each particle's damping beyond the Model's
  least, v *= exp(-(d_i - d) h), the rest coming from the solve's velocity update;
- a rod (``rod.RodFrame``): the pull of its frames on the centreline (an acceleration), its
  bending targets (into the lane buffer for the substep's solve), and afterwards its frames
  following the centreline's move.

``SubstepForces`` is their one owner: ``solver._advance_with_contacts`` asks it for each
substep's accelerations before the ropes' solve (``start``) and lets it finish the substep
after the contacts (``finish``), in the stages a frame with contacts runs anyway, one
kernel call per substep.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .air import Air, drag_accelerations


class SubstepForces:
    """The air, the damping map and the rod of one frame (see the module), for substeps of
    ``h`` [s]."""

    __slots__ = ("model", "air", "wind", "extra", "h", "decay", "rod", "lanes", "mass",
                 "total", "drag", "force", "before")

    def __init__(self, model: Any, air: Air | None, wind: np.ndarray | None, extra: np.ndarray,
                 h: float, *, rod: Any = None, lanes: Any = None) -> None:
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
        their target's path), or None: no damping map"""
        if model.particle_damping is not None:
            beyond = np.where(model.particle_inv_mass > 0.0,
                              model.particle_damping - model.damping, 0.0)
            self.decay = np.exp(-beyond * h)[:, None]
        self.rod = rod
        """The rod's frame (``rod.RodFrame``), or None"""
        self.lanes = lanes
        """(lane particle buffer, lane layout) the rod's bending targets go into"""
        count = model.particle_count
        inv_mass = model.particle_inv_mass
        self.mass = np.divide(1.0, inv_mass, out=np.zeros(count), where=inv_mass > 0.0)
        """(N,) [kg] each free particle's mass, 0 for pinned ones"""
        self.total = extra if air is None and rod is None else np.empty((count, 3))
        """(N, 3) [m/s^2] the substep's accelerations besides gravity: ``extra``, the drag and
        the rod's pull"""
        self.drag = np.zeros((count, 3)) if air is not None else None
        self.force = np.empty((count, 3)) if air is not None else None
        self.before = np.empty((count, 3)) if air is not None or rod is not None else None
        """(N, 3) scratch: the drag [m/s^2], its force [N], where the substep starts [m]"""

    @property
    def sleep_air(self) -> tuple[Air, np.ndarray] | None:
        """(air, wind) for the frame's sleeping key (``sleep.balance_key``), or None."""
        return None if self.air is None or self.wind is None else (self.air, self.wind)

    def start(self, x: np.ndarray, v: np.ndarray) -> np.ndarray:
        """A substep starting at x [m], v [m/s] (N, 3): the damping map takes its part of v
        (in place), the rod's bending targets go into the lane buffer, and the substep's
        accelerations [m/s^2] (N, 3) besides gravity are returned: the frame's external ones
        plus the drag of these velocities and the rod's pull."""
        if self.decay is not None:
            v *= self.decay
        if self.before is None:
            return self.total
        np.copyto(self.before, x)
        if self.air is not None:
            model = self.model
            assert self.force is not None and self.drag is not None and self.wind is not None
            drag_accelerations(x, v, self.wind, model.edge_index, model.particle_radius,
                               model.particle_inv_mass, self.air, self.h, self.force,
                               self.drag)
            np.add(self.extra, self.drag, out=self.total)
        else:
            np.copyto(self.total, self.extra)
        if self.rod is not None:
            lane_particles, layout = self.lanes
            self.rod.add_frame_pull(x, self.model.particle_inv_mass, self.total)
            self.rod.targets_into(x, lane_particles, layout)
        return self.total

    def finish(self, state: Any) -> None:
        """The substep done (``state.x`` where it ends): the drag's work on the free
        particles, m a . (x_end - x_start) [J], added to ``state.air_work`` (N,), and the
        rod's frames following the move."""
        if self.rod is not None:
            assert self.before is not None
            self.rod.follow(self.before, state.x, self.h)
        if self.air is None:
            return
        from .solve.kernels_air import add_work

        assert self.drag is not None and self.before is not None
        if state.air_work is None or len(state.air_work) != len(self.mass):
            state.air_work = np.zeros(len(self.mass))
        # (the drag of a pinned particle is 0, and so is its mass here)
        add_work(state.x, self.before, self.drag, self.mass, state.air_work)
