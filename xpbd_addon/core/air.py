"""Air: the drag of the air on a rope, a chain of cylinders, and the wind that moves the air.

``step(..., air=Air(), wind=w)`` makes the air act on every segment as on a cylinder of the
rope's diameter d = 2 r (``Model.radius``): per length, with u the air's velocity relative to
the rope (wind minus the rope's velocity) split into its part normal to the segment, u_n, and
along it, u_t,

    f = 0.5 rho d (C_n |u_n| u_n + pi C_t |u_t| u_t)      [N/m]

(Morison's equation for a slender cylinder: the normal term on the projected area d per
length, the tangential term as skin friction on the wetted surface pi d per length). Each
segment's force goes half to each of its particles (``solve.kernels_air``). So a rope lying
along the wind feels only the small skin friction, a rope across it the full push, and a rope
moving through still air is slowed by the same law.

The drag is taken at the start of every substep from that substep's velocities, explicitly
but bounded so that it never carries a particle past the air's velocity (stable at any
strength; it never raises the kinetic energy relative to the air). It is a stage of each
substep (``substep_forces``), so the frame runs one kernel call per substep, as with contacts,
and the frames with air take implicit Euler steps even with ``integrator="bdf2"``. Without
air (``air=None``, a density of 0, both coefficients 0, or radius 0 everywhere) nothing of it
runs and the frame is the same, bit for bit, as before air existed.

Why a velocity field and not a force: Blender's Wind field on cloth and hair, Houdini's Vellum
wind and Obi's aerodynamics all mean the air's velocity; a force would push a rope lying along
the wind and would not slow a rope swinging through still air.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from .validation import as_float_array


class Air(NamedTuple):
    """The air a rope moves through (``step(..., air=...)``); the defaults are air at sea
    level, 20 degrees C, on a smooth round rope."""

    density: float = 1.2
    """rho [kg/m^3]: 1.2 for air, about 1000 for water; 0 = no air (nothing of it runs)"""
    normal_drag: float = 1.2
    """C_n, the drag coefficient across the rope (dimensionless): about 1.2 for a circular
    cylinder at Reynolds numbers 1e3..2e5 (a rope of 1 cm in wind of 0.15..30 m/s)"""
    tangential_drag: float = 0.01
    """C_t, the skin-friction coefficient along the rope on its wetted surface pi d per length
    (dimensionless): 0.008..0.01 for smooth cables, more for hairy ropes"""

    @property
    def acts(self) -> bool:
        """Whether this air drags at all (a density and some coefficient above 0)."""
        return self.density > 0.0 and (self.normal_drag > 0.0 or self.tangential_drag > 0.0)


def as_air(air: Any) -> Air | None:
    """``air`` checked: None or an ``Air`` of finite values >= 0; returns None when it does
    not drag (so the frame runs without it). ValueError naming ``air.<field>``."""
    if air is None:
        return None
    if not isinstance(air, Air):
        raise ValueError(f"air: expected None or core.Air(density, normal_drag, "
                         f"tangential_drag), got {type(air).__name__}")
    values = []
    for name in Air._fields:
        value = getattr(air, name)
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise ValueError(f"air.{name}: expected a number, got {value!r}") from None
        if not (math.isfinite(number) and number >= 0.0):
            raise ValueError(f"air.{name}: expected a finite value >= 0, got {value!r}")
        values.append(number)
    checked = Air(*values)
    return checked if checked.acts else None


def as_wind(wind: Any, particle_count: int) -> np.ndarray:
    """``wind`` as a (N, 3) float64 array [m/s]: None is still air, a 3-vector a uniform
    wind, (N, 3) one velocity per particle. ValueError naming ``wind``."""
    if wind is None:
        return np.zeros((particle_count, 3))
    array = np.asarray(wind)
    if array.shape == (3,):
        return np.tile(as_float_array(array, "wind", (3,)), (particle_count, 1))
    return as_float_array(wind, "wind", (particle_count, 3))


def drag_accelerations(x: np.ndarray, v: np.ndarray, wind: np.ndarray, edges: np.ndarray,
                       radius: np.ndarray, inv_mass: np.ndarray, air: Air, h: float,
                       force: np.ndarray, out: np.ndarray) -> np.ndarray:
    """The accelerations [m/s^2] (N, 3) the air gives the particles over a substep of h [s]
    (``solve.kernels_air.drag_accelerations``: the forces above over the masses, bounded so
    that no particle is carried past the air), written into and returned as ``out``;
    ``force`` (N, 3) is scratch."""
    from .solve.kernels_air import drag_accelerations as kernel

    kernel(x, v, wind, edges, radius, inv_mass, air.density, air.normal_drag,
           air.tangential_drag, h, force, out)
    return out


def drag_forces(x: Any, v: Any, wind: Any, edges: Any, radius: Any, air: Air) -> np.ndarray:
    """The drag forces [N] (N, 3) on each particle at these positions and velocities,
    unbounded (for readouts and tests): the sum over its segments of the formula above."""
    x = np.asarray(x, dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)
    n = len(x)
    force = np.zeros((n, 3))
    out = np.zeros((n, 3))
    # (the kernel leaves the unbounded forces in its scratch, ``force``)
    drag_accelerations(x, v, np.asarray(wind, dtype=np.float64).reshape(n, 3),
                       np.asarray(edges, dtype=np.int64).reshape(-1, 2),
                       np.broadcast_to(np.asarray(radius, dtype=np.float64), (n,)).copy(),
                       np.ones(n), air, 1.0, force, out)
    return force
