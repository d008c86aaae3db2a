"""A frame's inputs: every per-frame source of a rope read by a reader of its own
(``read_*``), gathered in one place (``read``), joined for a run's joint Model
(``Handoff.join``) and handed to the core in one call (``handoff.step``).

A reader takes a ``Reading`` (the rope, its object evaluated at the frame, the depsgraph) and
returns what the frame is made with; it reads Blender's data and nothing else. ``read`` is
the only place that calls readers, so every source a frame uses is listed there; the result
(``Inputs``) is frozen and kept with the frame it made (``sim.Frame``), so a frame reached in
any order is made with the same inputs as in playback.

A new per-particle force that does not depend on the rope's motion is one reader returning
accelerations [m/s^2] and one line in ``ACCELERATIONS``: ``read`` sums them into
``Inputs.accelerations``, ``Handoff.join`` places them in the joint Model's rows, and
``core.step`` adds them to gravity in every substep's predict (docs/development.md shows it
with a constant field). Blender's force fields depend on where the rope is and how it moves
(falloff, flow, drag): ``read_fields`` reads the fields of the frame (``Fields``, plain
values) and ``Handoff.join`` evaluates them at the frame's start state, the one place where
they become accelerations and wind.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from ..errors import RetryError
from ..read import animated
from ..read import attachments as attach
from ..read import fields as field_reader
from ..read.maps import SoftMap
from .changes import Changes


class ReadRope(Protocol):
    """What readers read of a rope's simulation (``sim.RopeSim``; declared here so that this
    module does not import the module that keeps ``Inputs`` with its frames)."""

    @property
    def changes(self) -> Changes: ...
    @property
    def pinned_ids(self) -> np.ndarray: ...
    @property
    def rest_xyz(self) -> np.ndarray: ...
    @property
    def soft_map(self) -> SoftMap | None: ...
    def pinned_at(self, values: tuple) -> np.ndarray: ...
    def turn(self, matrix_world: Any) -> np.ndarray | None: ...
    def targets(self, obj: Any, depsgraph: Any, render: bool,
                pinned_ids: np.ndarray | None = None) -> np.ndarray: ...


@dataclass(frozen=True, slots=True)
class Reading:
    """Where a reader reads one rope's frame from (this handler call's objects: a bpy
    reference is never kept between calls, it may dangle after an undo)."""

    rope: ReadRope
    """The rope's simulation (``sim.RopeSim``): its rest shape, pins, what can change"""
    obj: Any
    """The rope object (original)"""
    evaluated: Any
    """``obj`` evaluated at the depsgraph's (sub)frame: keyed and driven values"""
    depsgraph: Any
    """The evaluated scene at the (sub)frame read"""
    render: bool
    """Whether a render asks (curve pins read the render resolution's points)"""
    frame: int
    """The whole frame read (a subframe's whole frame)"""


@dataclass(frozen=True, slots=True)
class Inputs:
    """What one frame of one rope is made with, read at that frame (``read``)."""

    values: tuple
    """The animated settings' values (``Changes.names``)"""
    pinned_ids: np.ndarray
    """The pinned particles of the settings (kept at their modelled place in the output)"""
    targets: np.ndarray
    """Their targets [m] (world), shape [len(pinned_ids), 3]"""
    enabled: tuple[bool, ...]
    """Each attachment on or off"""
    matrices: tuple[np.ndarray | None, ...]
    """Each attachment's target matrix [4, 4] (world), None if its target is gone"""
    channels: np.ndarray | None
    """The stamp of the animated channels (``animated.stamp``), None if there are none"""
    accelerations: np.ndarray | None = None
    """External accelerations [m/s^2] (world) besides gravity, the sum of every source of
    ``ACCELERATIONS``, shape [N, 3]; None: no source acts on this rope"""
    fields: Fields | None = None
    """The force fields acting on the rope at this frame (``read_fields``); None: none"""
    soft_targets: np.ndarray | None = None
    """Where the object puts the points a Pin Map holds by springs [m] (world), shape
    [len(rope.soft_map.ids), 3] (``read_soft_targets``); None: no such points"""
    turn: np.ndarray | None = None
    """For a rod: the rotation [3, 3] of its object since its rest shape was placed
    (``read_turn``), which turns its pinned ends' frames; None: the rope is no rod"""


@dataclass(frozen=True, slots=True)
class Fields:
    """The force fields acting on one rope at one frame, as plain values: evaluated at the
    frame's start state by ``Handoff.join`` (``fields.evaluate``), so a frame depends only on
    its start state and its frame number, however it is reached."""

    sources: tuple[field_reader.FieldSource, ...]
    """The field objects' settings and world matrices at this frame (sorted by name)"""
    weight: float
    """The rope's Field Weight [-] at this frame: forces and wind speeds are scaled by it"""
    frame: int
    """The whole frame read: the seed of the fields' noise"""


# --- readers --------------------------------------------------------------------------------

def read_settings(reading: Reading) -> tuple:
    """The animated settings' values at this frame (``Changes.names``; keyed, driven)."""
    found = reading.rope.changes
    return found.values(reading.evaluated) if found.names else ()


def read_stamp(reading: Reading) -> np.ndarray | None:
    """The stamp of the animated channels at this frame (``animated.stamp``), or None."""
    channels = reading.rope.changes.channels
    return (animated.stamp(reading.obj, reading.evaluated, channels, reading.frame)
            if channels else None)


def read_pins(reading: Reading, values: tuple) -> tuple[np.ndarray, np.ndarray]:
    """The particles the settings pin with the animated ``values`` and their targets [m]
    (world) at this frame, shapes [P] and [P, 3]; RetryError if a target is not finite."""
    rope = reading.rope
    pinned_ids = np.flatnonzero(rope.pinned_at(values)) if values else rope.pinned_ids
    return pinned_ids, rope.targets(reading.obj, reading.depsgraph, reading.render,
                                    pinned_ids)


def read_soft_targets(reading: Reading) -> np.ndarray | None:
    """The targets [m] (world) of the points a Pin Map holds by springs at this frame: where
    the object (its animation, parent, deformation) puts them, as it puts pinned points."""
    soft = reading.rope.soft_map
    if soft is None:
        return None
    return reading.rope.targets(reading.obj, reading.depsgraph, reading.render, soft.ids)


def read_turn(reading: Reading) -> np.ndarray | None:
    """For a rod (``core.rod``): the rotation [3, 3] of the object at this frame (by its
    parent, a bone it hangs from) from where it was when the rod's rest shape was placed;
    the hand-off turns the pinned ends' frames with it. None for a rope."""
    return reading.rope.turn(np.array(reading.evaluated.matrix_world))


def read_attachments(reading: Reading) -> tuple[tuple[bool, ...],
                                                 tuple[np.ndarray | None, ...]]:
    """Whether each attachment is on at this frame, and its target's world matrix [4, 4]
    (None if the target is gone)."""
    found = reading.rope.changes
    enabled = tuple(found.enabled(reading.evaluated))
    matrices = tuple(attach.target_matrix(spec, reading.depsgraph, on)
                     for spec, on in zip(found.attachments, enabled, strict=True))
    return enabled, matrices


def read_fields(reading: Reading) -> Fields | None:
    """The force fields acting on the rope at this frame (``fields.acting_on``: the visible
    field objects, those of ``effector_collection`` if set), or None when there are none or
    the Field Weight is 0 (then nothing is evaluated: the frame is the one without fields,
    bit for bit). RetryError if the weight is not a finite number >= 0."""
    # keyed or driven: this frame's value; else the setting as it is (part of the key)
    animated = "field_weight" in reading.rope.changes.names
    weight = float((reading.evaluated if animated else reading.obj).xpbd.field_weight)
    if not (weight >= 0.0 and np.isfinite(weight)):
        raise RetryError(f"Field Weight must be a number >= 0 (got {weight})")
    if weight == 0.0:
        return None
    sources = field_reader.acting_on(reading.depsgraph, reading.obj,
                                     reading.obj.xpbd.effector_collection)
    return Fields(tuple(sources), weight, reading.frame) if sources else None


AccelerationSource = Callable[[Reading], "np.ndarray | None"]
"""A reader of a per-particle force: the rope's external accelerations [m/s^2] (world) at
the frame read, shape [N, 3] (a force F [N] on a particle of mass m [kg] is F / m), or None
where it does not act on this rope."""

ACCELERATIONS: tuple[AccelerationSource, ...] = ()
"""Every per-particle force source, summed by ``read`` into ``Inputs.accelerations``. A new
one is its reader and one entry here (docs/development.md)."""


def read_accelerations(reading: Reading,
                       sources: tuple[AccelerationSource, ...]) -> np.ndarray | None:
    """The sum [m/s^2] of the ``sources`` that act on the rope, shape [N, 3]; None if none
    does (the core then steps gravity alone, bit for bit as without sources)."""
    total: np.ndarray | None = None
    for source in sources:
        found = source(reading)
        if found is None:
            continue
        found = np.asarray(found, dtype=np.float64)
        total = found.copy() if total is None else total + found
    if total is not None and not np.all(np.isfinite(total)):
        raise RetryError("An external force is NaN or infinite at this frame")
    return total


# --- the one place where a frame's sources are gathered ---------------------------------------

def read(rope: ReadRope, obj: Any, depsgraph: Any, render: bool, frame: int) -> Inputs:
    """Everything one frame of ``rope`` is made with, read from the evaluated scene."""
    reading = Reading(rope, obj, obj.evaluated_get(depsgraph), depsgraph, render, frame)
    values = read_settings(reading)
    pinned_ids, targets = read_pins(reading, values)
    enabled, matrices = read_attachments(reading)
    return Inputs(values, pinned_ids, targets, enabled, matrices, read_stamp(reading),
                  read_accelerations(reading, ACCELERATIONS), read_fields(reading),
                  read_soft_targets(reading), read_turn(reading))
