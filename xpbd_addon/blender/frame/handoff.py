"""The hand-off of one frame to the core: the members' ``Inputs`` (inputs.py) joined into the
per-particle arrays of a run's joint Model (``Handoff.join``), and the one call that steps
them (``step``: ``core.step``, or ``core.soft_pins.step_with_soft_pins`` when springs hold
points, then the safety net). The force fields of a frame (``inputs.Fields``) are evaluated
here, at the frame's start state (``_fields``): their forces join the accelerations, their
wind the air's velocity.

Every per-particle input the core takes is a field of ``Handoff`` and reaches the core only
through ``step``, so a source read per frame cannot be left out on the way:
``tests/blender/test_frame_inputs.py`` checks that the fields are the core's keywords and
that a force source moves the rope as the core moves it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ... import core
from ...core.soft_pins import SoftPins, step_with_soft_pins
from ..errors import RopeError
from ..read import attachments as attach
from ..read import fields as field_reader
from .checks import MAX_ACCELERATION, check_energy
from .inputs import Inputs
from .stiffness import end_turns

if TYPE_CHECKING:
    from .sim import RopeSim


@dataclass(frozen=True, slots=True)
class Handoff:
    """What the core takes for one frame of a run's joint Model, per particle of it."""

    pin_targets: np.ndarray
    """Pin targets [m] (world), shape [N, 3]: the settings' pins and the rigidly held
    points of attachments; the rows of free particles are ignored by the core"""
    accelerations: np.ndarray | None
    """External accelerations [m/s^2] (world) besides gravity, shape [N, 3]; None: none"""
    air: core.Air | None
    """The air the joint Model moves through (the members share it, ``schema.SHARED``)"""
    wind: np.ndarray | None
    """The air's velocity [m/s] (world) from Wind fields, shape [N, 3]; None: still air"""
    soft_pins: SoftPins | None
    """Points pulled by springs (attachments with a compliance); None: none"""
    holds: tuple[tuple[attach.Hold, ...], ...]
    """Each member's attachment states for this frame, the springs' targets set"""
    held: tuple[int, ...]
    """How many particles each member's attachments hold rigidly at this frame"""
    notes: tuple[tuple[str, ...], ...] = ()
    """Each member's notes on its fields at this frame (fields skipped, wind without air)"""
    pin_turns: np.ndarray | None = None
    """How far a rod's ends turn over the frame [rad] (nan: not an end), shape [N]; None:
    no rod"""

    @classmethod
    def join(cls, ropes: list[RopeSim], offsets: np.ndarray, inputs: list[Inputs],
             holds: list[tuple[attach.Hold, ...]], pin_buffer: np.ndarray,
             previous: list[Any]) -> Handoff:
        """The members' ``inputs`` and attachment ``holds`` placed in the joint Model's rows
        (member k starts at particle ``offsets[k]``), their fields evaluated at the
        ``previous`` frames (``sim.Frame``: x [m], v [m/s], the frame's start state).
        ``pin_buffer`` [N, 3] is written and kept as ``pin_targets``: a run reuses one
        buffer, as the core ignores free rows."""
        springs = []
        new_holds = []
        held = []
        for o, rope, i, h in zip(offsets, ropes, inputs, holds, strict=False):
            found = rope.changes.attachments
            h, pulls = attach.springs(found, h, i.matrices)
            new_holds.append(h)
            springs += [(o + ids, begin, end, np.full(len(ids), alpha))
                        for ids, begin, end, alpha in pulls]
            pin_buffer[o + i.pinned_ids] = i.targets
            held_ids, held_targets = attach.held(found, h, i.matrices)
            pin_buffer[o + held_ids] = held_targets
            held.append(len(held_ids))
            if i.soft_targets is not None and rope.soft_map is not None:
                # a Pin Map's springs, towards where the object puts their points now (an
                # attachment holding a point too takes it: listed first, kept below)
                springs.append((o + rope.soft_map.ids, i.soft_targets, i.soft_targets,
                                rope.soft_map.compliance))
        soft = None
        if springs:
            particles, begins, ends, alphas = (np.concatenate(part)
                                               for part in zip(*springs, strict=True))
            first = np.sort(np.unique(particles, return_index=True)[1])
            if len(first) < len(particles):
                particles, begins, ends, alphas = (part[first] for part in
                                                   (particles, begins, ends, alphas))
            soft = SoftPins(particles, ends, alphas, start=begins)
        accelerations = None
        if any(i.accelerations is not None for i in inputs):
            accelerations = np.zeros_like(pin_buffer)
            for o, i in zip(offsets, inputs, strict=False):
                if i.accelerations is not None:
                    accelerations[o:o + len(i.accelerations)] = i.accelerations
        accelerations, wind, notes = _fields(ropes, offsets, inputs, previous, accelerations,
                                             len(pin_buffer))
        turns = None
        if any(i.turn is not None for i in inputs):  # rods: ends turned by what holds them
            turns = np.full(len(pin_buffer), np.nan)
            for o, rope, i, before in zip(offsets, ropes, inputs, previous, strict=False):
                if i.turn is not None:
                    turns[o:o + len(before.x)] = end_turns(rope.track.start_model,
                                                           before.turn, i.turn, before.x)
        return cls(pin_buffer, accelerations, ropes[0].air, wind, soft, tuple(new_holds),
                   tuple(held), notes, turns)


MAX_WIND_SPEED = 1e5
"""[m/s] The fastest wind a force field may blow (``checks.MAX_ACCELERATION``'s reason, for
the air's drag)"""


def _fields(ropes: list[RopeSim], offsets: np.ndarray, inputs: list[Inputs],
            previous: list[Any], accelerations: np.ndarray | None, count: int
            ) -> tuple[np.ndarray | None, np.ndarray | None, tuple[tuple[str, ...], ...]]:
    """The members' fields evaluated at their ``previous`` frames' x [m] and v [m/s]: their
    forces over the masses added to ``accelerations`` [m/s^2] and their wind [m/s], both
    [``count``, 3] and scaled by each rope's Field Weight, and each member's notes. A field
    that gives nothing (strength 0, out of reach) adds no array at all: the frame is then
    the one without it, bit for bit. RopeError if a field gives NaN or infinity."""
    wind = None
    notes: list[tuple[str, ...]] = []
    for o, rope, i, before in zip(offsets, ropes, inputs, previous, strict=False):
        if i.fields is None:
            notes.append(())
            continue
        sample = field_reader.evaluate(i.fields.sources, before.x, before.v, i.fields.frame)
        pushed = field_reader.accelerations(sample, rope.track.model.particle_inv_mass,
                                            i.fields.weight)
        blown = sample.wind * i.fields.weight
        if not (np.all(np.isfinite(pushed)) and np.all(np.isfinite(blown))):
            raise RopeError("A force field gives NaN or infinite forces here (check its "
                            "strength and falloff); nothing was written")
        if (np.abs(pushed).max(initial=0.0) > MAX_ACCELERATION
                or np.abs(blown).max(initial=0.0) > MAX_WIND_SPEED):
            raise RopeError(f"A force field pushes a point with more than "
                            f"{MAX_ACCELERATION:.0e} m/s^2, or blows faster than "
                            f"{MAX_WIND_SPEED:.0e} m/s, here (check its strength, falloff and "
                            "size); nothing was written")
        found = list(sample.skipped)
        if pushed.any():
            if accelerations is None:
                accelerations = np.zeros((count, 3))
            accelerations[o:o + len(pushed)] += pushed
        if blown.any():
            if rope.air is None:
                found.append("Wind acts through air drag: turn Air on (Fields & Air)")
            elif not rope.track.model.particle_radius.any():
                found.append("Wind needs a Radius > 0 (the air drags a cylinder of it)")
            else:
                if wind is None:
                    wind = np.zeros((count, 3))
                wind[o:o + len(blown)] = blown
        notes.append(tuple(found))
    return accelerations, wind, tuple(notes)


def step(model: core.Model, state: core.State, dt: float, substeps: int, handoff: Handoff,
         *, gravity: Any, contacts: list[Any], what: str) -> core.Model:
    """One frame of ``dt`` [s] in ``substeps`` on ``state`` in place, with everything of
    ``handoff`` and the ``contacts``; the core's refusals and any NaN it produced become a
    RopeError (``what`` names the simulation): nothing gets written then, as for positions
    beyond anything possible (``checks.check_energy``'s geometric test; its energy test is
    the caller's, ``engine.Run.step``). Returns the Model the state was stepped with
    (``core.edge_tension`` reads the state with it)."""
    stepped = model
    try:
        if handoff.soft_pins is None:
            core.step(model, state, dt, substeps, gravity=gravity,
                      pin_targets=handoff.pin_targets, colliders=contacts,
                      accelerations=handoff.accelerations, air=handoff.air,
                      wind=handoff.wind, pin_turns=handoff.pin_turns)
        else:
            stepped = step_with_soft_pins(model, state, dt, substeps, handoff.soft_pins,
                                          gravity=gravity, pin_targets=handoff.pin_targets,
                                          colliders=contacts,
                                          accelerations=handoff.accelerations,
                                          air=handoff.air, wind=handoff.wind,
                                          pin_turns=handoff.pin_turns)
    except ValueError as exc:
        raise RopeError(f"The solver refused the input: {exc}") from exc
    from ..write import io_kernels  # numba: loaded before any frame is simulated

    if not io_kernels.all_finite(state.x.reshape(-1), state.v.reshape(-1)):
        raise RopeError(f"{what} produced NaN; nothing was written")
    check_energy(model, state.x, what)
    return stepped
