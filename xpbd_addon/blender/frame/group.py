"""Ropes of several objects that collide with each other: who is simulated with whom.

The core collides every segment of one ``core.Model`` with every other (within a rope and
between ropes), but each simulated object has its own ``sim.RopeSim`` and Model. So the
objects that have Self Collision on (and a radius > 0) and share everything the core holds
once per Model (``SHARED``: substeps, simulated frame range, damping, solver, integrator,
iterations, self-collision friction, the sleep speed, and the collider settings, which act on
every particle of a Model) form a group (``partition``), simulated as one Model made by
concatenating the members' Models (``build_model``: world rest positions, edges, inverse
masses, compliances, rest lengths, bending compliances, radii). The frame engine
(engine.py) steps a group as one ``Run`` and splits the result back into each member's own
``RopeSim.cache``, so cached frames, writing, the panel's frame count and the Collision notes
work per object.

Two-way: both ropes move (neither is a kinematic obstacle of the other). Members are ordered
by object name, so a file simulates the same after reopening. A rope whose settings differ
from the others' in one of ``SHARED`` is simulated alone and its Collision panel names the
ropes it passes through and why (``Track.group_notes``).

Bake (``bake.BakeJob``) bakes a member together with the ropes it collides with, through the
same engine, so the baked frames are the played ones.

Ropes that do not collide with each other are stepped together too when they agree on
``SHARED`` (``batches``): a scene of a hundred tails or cables, each its own object, then costs
one ``core.step`` a frame instead of a hundred (each call has a fixed cost: about 0.5 ms
with colliders, mostly the contacts' Python between the substeps). The core moves every
rope of such a Model exactly as it moves it alone (no particle of one touches another's:
the same bits, tested), so this changes nothing but the cost. Only plain ropes are batched:
no self-collision, no animated settings, no attachments, no tearing, and bending on all or
none (a rope without bending would get ``NO_BENDING`` in a batch, which is not nothing to
the bit).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ... import core
from .. import schema
from ..read.geometry import RopeError

SHARED: tuple[tuple[str, str], ...] = schema.SHARED
"""(``Object.xpbd`` field, panel label): what ropes simulated together must have equal
(declared with each setting in ``schema``). The core holds these once per Model (the
colliders, ground included, act on all its particles)."""

NO_BENDING = 1e20
"""Bending compliance [1/(N m)] given to the points of a member without bending when another
member has bending (the core takes bending for all points of a Model or none): its
corrections are ~1e-25 of the constraint error, nothing at all in practice."""

MAX_NOTES = 3
"""Other ropes named at most in one rope's "passes through" notes."""


def collides_with_others(obj: Any) -> bool:
    """Whether ``obj``'s rope collides with other rope objects: Self Collision on, radius > 0
    (the panel says radius 0 means no self-collision)."""
    s = obj.xpbd
    return bool(s.use_self_collision) and s.radius > 0.0


def shared_settings(obj: Any) -> tuple:
    """The values of ``SHARED`` for ``obj`` (ground height and friction only with a ground)."""
    return schema.shared_values(obj.xpbd)


def partition(members: list[tuple[Any, Any]]) -> tuple[list[list[tuple[Any, Any]]],
                                                         dict[int, tuple[str, ...]]]:
    """The groups (two or more members each, ordered by object name) among ``members``
    ((object, anything) pairs), and the notes for the colliding ropes that were left out of
    another's group, by session_uid."""
    buckets: dict[tuple, list[tuple[Any, Any]]] = {}
    for member in members:
        if collides_with_others(member[0]):
            buckets.setdefault(shared_settings(member[0]), []).append(member)
    groups = [sorted(b, key=lambda m: m[0].name) for b in buckets.values() if len(b) >= 2]
    notes: dict[int, tuple[str, ...]] = {}
    if len(buckets) > 1:
        for key, bucket in buckets.items():
            others = [(k, m) for k, b in buckets.items() if k != key for m in b]
            for obj, _ in bucket:
                lines = []
                for other_key, (other, _rope) in others[:MAX_NOTES]:
                    labels = [label for (_n, label), a, b in zip(SHARED, key, other_key,
                                                                 strict=True) if a != b]
                    lines.append(f"Passes through '{other.name}': different "
                                 f"{', '.join(labels)} (rope objects collide when these "
                                 "match)")
                if len(others) > MAX_NOTES:
                    lines.append(f"... and {len(others) - MAX_NOTES} more ropes")
                notes[obj.session_uid] = tuple(lines)
    return groups, notes


def batchable(obj: Any, rope: Any) -> bool:
    """Whether ``obj``'s rope (``sim.RopeSim``) can be stepped with other ropes it does not
    collide with (see the module)."""
    return (not collides_with_others(obj) and not rope.model.self_collision
            and not rope.changes.channels and not rope.changes.attachments
            and not rope.tear_force > 0.0)


def batches(members: list[tuple[Any, Any]]) -> list[list[tuple[Any, Any]]]:
    """The batches (two or more members each, ordered by object name) among ``members``
    ((object, ``sim.RopeSim``) pairs that collide with no other rope): the ``batchable``
    ones with equal ``SHARED`` settings, bending on all or none and the same rod settings
    (or none)."""
    buckets: dict[tuple, list[tuple[Any, Any]]] = {}
    for obj, rope in members:
        if batchable(obj, rope):
            rod = rope.model.rod  # its roll (a curve's tilt, per point) is each rope's own
            key = (shared_settings(obj), rope.model.particle_bend_compliance is None,
                   None if rod is None else dataclasses.replace(rod, roll=0.0))
            buckets.setdefault(key, []).append((obj, rope))
    return [sorted(b, key=lambda m: m[0].name) for b in buckets.values() if len(b) >= 2]


def build_model(models: list[core.Model], *, collide: bool = True) -> core.Model:
    """One Model of all ``models`` side by side (particles and edges renumbered), with the
    Model-wide settings of the first (``SHARED`` makes them equal); ``collide``: the ropes
    collide with each other (else a batch: ``batches``)."""
    first = models[0]
    offsets = np.cumsum([0] + [m.particle_count for m in models[:-1]])
    bending = None
    if any(m.particle_bend_compliance is not None for m in models):
        bending = np.concatenate([
            m.particle_bend_compliance if m.particle_bend_compliance is not None
            else np.full(m.particle_count, NO_BENDING) for m in models])
    wide = {keyword: getattr(first, keyword) for keyword in schema.MODEL_WIDE}
    if any(m.particle_damping is not None for m in models):  # damping maps: per particle
        wide["damping"] = np.concatenate([
            m.particle_damping if m.particle_damping is not None
            else np.full(m.particle_count, m.damping) for m in models])
    try:
        return core.Model(
            np.concatenate([m.particle_rest_x for m in models]),
            np.concatenate([m.edge_index + o for m, o in zip(models, offsets, strict=True)]),
            np.concatenate([m.particle_inv_mass for m in models]),
            np.concatenate([m.edge_compliance for m in models]),
            rest_length=np.concatenate([m.edge_rest_length for m in models]),
            strain_limit=first.strain_limit, bending_compliance=bending,
            radius=np.concatenate([m.particle_radius for m in models]), self_collision=collide,
            contact_push_speed=first.contact_push_speed, contact_margin=first.contact_margin,
            rod=joint_rod(models), **wide)
    except ValueError as exc:
        raise RopeError(f"Cannot simulate the colliding ropes together: {exc}") from exc


def joint_rod(models: list[core.Model]) -> core.Rod | None:
    """The ``core.Rod`` of ``models`` side by side, per particle: each rod's settings on its
    own points; a rope among rods keeps its rope behaviour (a straight rest, the twist of its
    bending, no plasticity). None if none is a rod."""
    if all(m.rod is None for m in models):
        return None
    straight = core.Rod(bend_rest="straight")

    def each(name: str, missing: float) -> np.ndarray:
        values = []
        for m in models:
            value = getattr(m.rod or straight, name)
            values.append(np.broadcast_to(
                np.asarray(missing if value is None else value, dtype=np.float64),
                (m.particle_count,)))
        return np.concatenate(values)

    modelled = np.concatenate([
        np.broadcast_to(np.asarray(m.rod is not None and (
            m.rod.bend_rest if not isinstance(m.rod.bend_rest, str)
            else m.rod.bend_rest == "modelled")), (m.particle_count,)) for m in models])
    return core.Rod(roll=each("roll", 0.0), twist_stiffness=each("twist_stiffness", np.nan),
                    plastic_yield=each("plastic_yield", np.inf),
                    plastic_creep=each("plastic_creep", 0.0), bend_rest=modelled)
