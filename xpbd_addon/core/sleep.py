"""Sleeping: ropes at rest stop being simulated until something moves them.

In frames with contacts, each rope (a chain of the lane layout) is measured at the end of
the frame: it was *quiet* if none of its particles moved farther than ``sleep_speed`` x dt
in the frame. ``Rest.still`` [s] counts how long it has been quiet without a break. At the
start of a frame, a rope quiet for ``SLEEP_TIME`` sleeps for the whole frame: it is not
solved, the contacts do not move it (to an awake rope that meets it, it is a static body),
its velocities are 0 and its positions stay as they are, bit for bit, frame after frame.

It stays awake (or wakes, at a frame's start) when:

* it is within reach of the moving part of a moving rope: the particles that moved faster
  than ``WAKE_SPEED`` x ``sleep_speed`` in the last frame, or every particle of a rope
  whose pin moves, the boxes round runs of particles at the frame's start, the moving
  ones grown by what they can move in the frame
  (``contacts.kernels_wake.wake_near_moving_ropes``). A slower rope rests on a sleeping one
  as on a static body, and a rope that meets a sleeping one within a frame without having
  been within reach at its start finds it static until the next frame's start;
* one of its pinned particles moves (a pin, a bone, an attachment), or it had a moving
  collider's triangle or edge among its contact candidates at the frame's start;
* what its balance depends on changes (``key``: the Model, i.e. any setting, gravity, the
  external accelerations, the colliders' settings): then every rope wakes.

The measure is over a frame, not a substep, and asks for ``SLEEP_TIME`` of quiet frames in a
row: a slow swing is quiet only around its turning points, for less time than that (a swing
of acceleration a is slower than s for 2 s / a seconds: at s = 1 mm/s and 0.5 s, a swing of
amplitude A and period T freezes only if A (2 pi / T)^2 < 4 mm/s^2, e.g. A < 0.4 mm at T =
2 s), whereas a pile whose contacts leave it creeping by a few micrometres a frame comes to
sleep. What a rope carries from frame to frame for this is part of the State (``Rest``,
``State.rest``): a frame computed from a cached state equals the frame played in order.
"""

from __future__ import annotations

import hashlib
import weakref
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

SLEEP_TIME = 0.5
"""[s] how long a rope must stay quiet (every particle slower than ``sleep_speed`` over each
frame) before it sleeps"""

STILL = 0.01
"""A frame in which every particle of a rope moved less than this times ``sleep_speed`` x dt
(0.4 um at the default and 24 fps: a rope lying on a collider, whose contacts are exact)
counts ``STILL_WEIGHT`` times towards ``SLEEP_TIME``: such a rope sleeps two frames after it
stopped. A swing is that slow for two frames in a row only if its acceleration is below
2 x 0.01 sleep_speed / dt (0.5 mm/s^2: an amplitude of 0.1 mm at a period of 3 s)."""

STILL_WEIGHT = 6.0

WAKE_SPEED = 10.0
"""A rope wakes the sleeping ropes it touches (through any chain of candidate pairs) when it
moved faster than this times ``sleep_speed`` in the last frame, or a pin or a collider
moves it: slower, it rests on them as on static bodies. Piles need the gap between the two
speeds: crossed ropes on the floor keep creeping at 1-7 mm/s while the ropes under them
move, and come to rest once those are still (asleep, static)."""


@dataclass(eq=False)
class Rest:
    """What sleeping carries from frame to frame (``State.rest``); new arrays every frame
    (a cache may keep the last ones)."""

    still: np.ndarray
    """(N,) float64 [s] how long each particle's rope has been quiet (0 outside ropes)"""
    speed: np.ndarray
    """(N,) float64 [m/s] each particle's move over that frame / dt (0 asleep)"""
    asleep: np.ndarray
    """(N,) uint8, 1 where the particle's rope slept through the frame that made this"""
    key: bytes
    """Digest of what the ropes' balance depended on in that frame (``balance_key``)"""

    def copy(self) -> Rest:
        """The same values in new arrays."""
        return Rest(self.still.copy(), self.speed.copy(), self.asleep.copy(), self.key)


def join(rests: list[Rest | None], counts: list[int]) -> Rest | None:
    """The ``Rest`` of states put side by side (``counts`` particles each), None if some
    have none or their keys differ (then every rope starts awake, measured afresh)."""
    if not rests or any(r is None for r in rests):
        return None
    known = [r for r in rests if r is not None]
    if any(r.key != known[0].key or len(r.still) != n
           for r, n in zip(known, counts, strict=True)):
        return None
    return Rest(np.concatenate([r.still for r in known]),
                np.concatenate([r.speed for r in known]),
                np.concatenate([r.asleep for r in known]), known[0].key)


def part(rest: Rest | None, start: int, stop: int) -> Rest | None:
    """The rows start:stop of ``rest`` (copies), for one of the states joined."""
    if rest is None:
        return None
    return Rest(rest.still[start:stop].copy(), rest.speed[start:stop].copy(),
                rest.asleep[start:stop].copy(), rest.key)


_MODEL_DIGESTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
"""Each Model's digest, made once (a Model never changes)"""


def _model_digest(model: Any) -> bytes:
    known = _MODEL_DIGESTS.get(model)
    if known is not None:
        return known
    h = hashlib.blake2b(digest_size=16)
    for array in (model.particle_inv_mass, model.edge_index, model.edge_compliance,
                  model.edge_rest_length, model.particle_radius, model.particle_damping,
                  model.particle_bend_compliance):
        h.update(b"-" if array is None else np.ascontiguousarray(array).tobytes())
    h.update(repr((model.damping, model.solver, model.iterations, model.strain_limit,
                   model.self_collision, model.self_friction, model.contact_push_speed,
                   model.contact_margin, model.integrator, model.sleep_speed)).encode())
    digest = h.digest()
    _MODEL_DIGESTS[model] = digest
    return digest


def balance_key(model: Any, gravity: np.ndarray, extra: np.ndarray | None, meshes: list,
                planes: list, *, air: tuple[Any, np.ndarray] | None = None) -> bytes:
    """A digest of what a resting rope's balance depends on besides its own state and the
    colliders' motion within the frame: the Model (every setting), gravity [m/s^2], the
    external accelerations (N, 3) [m/s^2] (None: none), the air and the wind (``air``: the
    ``core.Air`` and the (N, 3) wind [m/s], or None: no air; the air's drag, which follows
    the ropes' own velocities, is not part of it) and the colliders' settings. The frame
    length is not part of it (a subframe of a sleeping rope keeps it asleep)."""
    h = hashlib.blake2b(_model_digest(model), digest_size=16)
    h.update(np.ascontiguousarray(gravity, dtype=np.float64).tobytes())
    if extra is not None:
        h.update(np.ascontiguousarray(extra).tobytes())
    if air is not None:
        h.update(repr(tuple(air[0])).encode())
        h.update(np.ascontiguousarray(air[1], dtype=np.float64).tobytes())
    for mesh in meshes:
        h.update(repr(("mesh", mesh.vertices.shape, mesh.thickness, mesh.static_friction,
                       mesh.dynamic_friction)).encode())
    for plane in planes:
        h.update(repr(("plane", plane.point.tolist(), plane.normal.tolist(), plane.thickness,
                       plane.static_friction, plane.dynamic_friction)).encode())
    return h.digest()


class FrameSleep:
    """Sleeping in one frame with contacts: which ropes sleep (``start``), then the measure
    that decides the next frames (``finish``)."""

    __slots__ = ("lanes", "speed", "dt", "fall", "key", "still", "last_speed", "awake_ropes",
                 "moving", "whole", "x_start")

    def __init__(self, model: Any, lanes: Any, dt: float, fall: float, key: bytes) -> None:
        self.lanes = lanes
        self.speed = model.sleep_speed
        """[m/s]"""
        self.dt = dt
        """[s] the frame"""
        self.fall = fall
        """[m] the most gravity and the external accelerations move a particle in the frame
        from rest"""
        self.key = key
        self.still = np.zeros(model.particle_count)
        """(N,) [s] the quiet time the frame starts with"""
        self.last_speed = self.still
        """(N,) [m/s] each particle's speed over the last frame (``Rest.speed``)"""
        self.awake_ropes = np.ones(len(lanes.rope_block), dtype=np.uint8)
        """(R,) flags of the ropes awake in this frame"""
        self.moving = np.ones(len(lanes.rope_block), dtype=np.uint8)
        """(R,) flags of the ropes that wake the sleeping ones they touch: with their
        particles that moved (``Rest.speed``), or with all of them where ``whole``"""
        self.whole = np.zeros(len(lanes.rope_block), dtype=np.uint8)
        """(R,) flags of the ropes a pin or a collider moves this frame (every particle of
        them counts as moving)"""
        self.x_start = np.empty((0, 3))
        """(N, 3) [m] the positions at the frame's start"""

    def start(self, rest: Rest | None, x: np.ndarray, v: np.ndarray, pinned: np.ndarray,
              targets: np.ndarray) -> int:
        """The ropes quiet for ``SLEEP_TIME`` under the same ``key`` sleep, but those whose
        pinned particles move to ``targets`` this frame. Returns how many may sleep (the
        contacts then wake those linked to awake ropes, ``FrameContacts.fall_asleep``)."""
        from .solve.kernels_sleep import ready_ropes, wake_pinned
        lanes = self.lanes
        self.x_start = x.copy()
        if rest is None or rest.key != self.key or len(rest.still) != len(x):
            return 0
        self.still, self.last_speed = rest.still, rest.speed
        ready = ready_ropes(self.still, SLEEP_TIME, rest.speed, WAKE_SPEED * self.speed,
                            lanes.particle_rope, self.awake_ropes, self.moving)
        self.whole[:] = 0
        if ready and len(pinned):
            ready -= wake_pinned(pinned, x, targets, lanes.particle_rope, self.awake_ropes,
                                 self.whole)
            np.bitwise_or(self.moving, self.whole, out=self.moving)
        return int(ready)

    def wake(self, particles: np.ndarray) -> int:
        """Wake the ropes of ``particles`` (indices) as a moving pin does (all of them
        moves: ``whole``), e.g. a rod whose held end turns. Returns how many of the ropes
        ready to sleep woke."""
        ropes = self.lanes.particle_rope[particles]
        ropes = ropes[ropes >= 0]
        woke = int(np.count_nonzero(self.awake_ropes[ropes] == 0)) if len(ropes) else 0
        self.awake_ropes[ropes] = 1
        self.whole[ropes] = 1
        self.moving[ropes] = 1
        return woke

    def asleep_particles(self) -> np.ndarray:
        """(N,) bool: the particles of the ropes sleeping through this frame."""
        rope = self.lanes.particle_rope
        return (rope >= 0) & (self.awake_ropes[np.maximum(rope, 0)] == 0)

    def stop(self, v: np.ndarray) -> None:
        """The sleeping ropes' velocities to 0 (after the contacts' wake)."""
        from .solve.kernels_sleep import stop
        stop(v, self.lanes.particle_rope, self.awake_ropes)

    def finish(self, x: np.ndarray, turning: np.ndarray | None = None) -> Rest:
        """The frame's measure: each awake rope quiet or not (its particles' moves from the
        frame's start against ``sleep_speed`` x dt), as the next frame's ``Rest``.
        ``turning`` (N,) [m/s], optional: how fast each particle's surface turns about the
        rope (a rod's twist rate times its radius): a rope turning faster than
        ``sleep_speed`` is not quiet, though its centreline rests."""
        from .solve.kernels_sleep import measure_still
        still = np.empty(len(x))
        speed = np.empty(len(x))
        asleep = np.empty(len(x), dtype=np.uint8)
        measure_still(x, self.x_start, self.speed * self.dt, STILL * self.speed * self.dt,
                      STILL_WEIGHT, self.dt, self.lanes.particle_rope, self.awake_ropes,
                      self.still, still, speed, asleep)
        if turning is not None:
            rope = self.lanes.particle_rope
            fast = (turning > self.speed) & (rope >= 0) & (asleep == 0)
            if fast.any():
                # (the whole rope's quiet time starts again, as for a move)
                restart = np.zeros(len(self.awake_ropes), dtype=bool)
                restart[rope[fast]] = True
                again = (rope >= 0) & restart[np.maximum(rope, 0)]
                still[again] = 0.0
            np.maximum(speed, np.where(asleep == 0, turning, 0.0), out=speed)
        return Rest(still, speed, asleep, self.key)


def hold_rods(rod: Any, asleep: np.ndarray) -> tuple | None:
    """A rod's frames of the sleeping ropes' particles (``asleep`` (N,) bool) kept as they
    are through the frame: their twist rate to 0 (as their velocities), then their rows of
    every field of ``rod`` (``rod.RodState``) copied, for ``release_rods`` to put back after
    the substeps (which carry every rope's frames along). None when no particle sleeps."""
    rows = np.flatnonzero(asleep)
    if not len(rows):
        return None
    rod.twist_rate[rows] = 0.0
    return rows, {f.name: getattr(rod, f.name)[rows].copy() for f in fields(rod)}


def release_rods(rod: Any, kept: tuple | None) -> None:
    """Put back what ``hold_rods`` kept: a sleeping rod's frames stay bit for bit."""
    if kept is None:
        return
    rows, values = kept
    for name, value in values.items():
        getattr(rod, name)[rows] = value
