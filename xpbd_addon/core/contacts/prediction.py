"""The motion both broad phases predict for each particle over a frame with contacts.

Each particle keeps its velocity and an acceleration, pinned ones move linearly to their
targets. At the frame's start the acceleration is gravity for what moves faster than one
frame of gravity would make it (in flight) and zero for the rest (resting, hanging or held);
later it is measured over the last substep (``measure``). External accelerations besides
gravity are not predicted: a particle they push off its prediction is searched again, as
one pushed by a collider is (``FrameContacts.refresh``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .constants import RESIDUE_SINKS, STILL
from .kernels_segments import measure_motion, start_prediction


class MotionPrediction:
    """The predicted motion of every particle in one frame (fields in ``__init__``)."""

    __slots__ = ("dt", "substeps", "h", "velocity_scale", "free", "pin_velocity", "velocity",
                 "acceleration", "acceleration_limit", "v_last", "held", "x_from",
                 "every_particle", "push")

    def __init__(self, model: Any, x: np.ndarray, v: np.ndarray, pin_end: np.ndarray,
                 dt: float, substeps: int, gravity: np.ndarray, velocity_scale: float, *,
                 accelerations: np.ndarray | None = None) -> None:
        self.dt, self.substeps = dt, substeps
        """The frame [s] and its substep count"""
        self.h = dt / substeps
        """The substep [s]"""
        self.velocity_scale = velocity_scale
        """exp(-damping h) / h [1/s]"""
        self.free = model.particle_inv_mass > 0.0
        """(N,) bool: the particles that are not pinned"""
        self.pin_velocity = np.zeros_like(x)
        """(N, 3) [m/s] each pinned particle's velocity to its target (read for those only)"""
        pinned = model.pinned
        self.pin_velocity[pinned] = (pin_end[pinned] - x[pinned]) / dt
        self.held = np.zeros(model.particle_count, dtype=np.uint8)
        """(N,) flags of the particles the last substep's contacts moved"""
        self.acceleration_limit = 2.0 * math.sqrt(float(gravity @ gravity))
        """The most acceleration [m/s^2] a measured prediction keeps (``measure``)"""
        self.velocity = np.empty_like(v)
        """(N, 3) [m/s] the predicted velocity"""
        self.acceleration = np.empty_like(v)
        """(N, 3) [m/s^2] the predicted acceleration"""
        start_prediction(v, self.pin_velocity, self.free, gravity, dt, STILL, self.velocity,
                         self.acceleration)
        self.v_last = v.copy()
        """(N, 3) [m/s] velocities at the end of the last substep (or the frame's start)"""
        self.x_from = np.empty_like(x)
        """(N, 3) [m] where the particles began the substep under way (rows ``measure`` set)"""
        self.every_particle = model.contact_topology.every_particle
        """int64 (N,) every particle's id"""
        # the residue scales with the strongest pull: gravity, or a field added to it
        pull = (math.sqrt(float(gravity @ gravity)) if accelerations is None
                else float(np.sqrt(((accelerations + gravity) ** 2).sum(axis=1)).max(initial=0.0)))
        self.push = (model.contact_push_speed * self.h, RESIDUE_SINKS * pull * self.h * self.h)
        """What every contact kernel's ``push`` reads (``kernels_collider.push_out``): the
        most a contact pushes out per substep beyond the approach [m], and the overlap at
        the substep's start that it undoes with velocity [m]"""

    def measure(self, x: np.ndarray, v: np.ndarray, ids: np.ndarray | None) -> None:
        """Prediction velocity and acceleration from the substep under way, its rope solve
        done (``kernels_segments.measure_motion``: a = (v - v_last) / h, zero where the last
        contacts moved the particle, at most 2 |g|; still below ``STILL``), and where the
        substep began (``x_from`` = x - v / s), for the particles ``ids`` (all: None). Only
        the broad phases use them, for the particles they search again."""
        rows = self.every_particle if ids is None else ids
        measure_motion(rows, x, v, self.v_last, self.held, self.free, self.pin_velocity, self.h,
                       self.acceleration_limit, STILL, self.dt, 1.0 / self.velocity_scale,
                       self.velocity, self.acceleration, self.x_from)

    def end_substep(self, v: np.ndarray, moved: np.ndarray) -> None:
        """The substep's contacts are done: its end velocities and the particles they moved
        (``moved`` (N,) flags) are what the next one's prediction is measured against."""
        np.copyto(self.v_last, v)
        np.copyto(self.held, moved)
