"""Ropes of several objects that collide with each other (issue 7).

The core collides every segment of one ``core.Model`` with every other (within a rope and
between ropes), but each simulated object has its own ``sim.RopeSim`` and Model. So the
objects that have Self Collision on (and a radius > 0) and share everything the core holds
once per Model (``SHARED``: substeps, simulated frame range, damping, solver, integrator,
iterations,
self-collision friction, the sleep speed, and the collider settings, which act on every
particle of a Model)
form a ``Group``: one Model built by concatenating the members' Models (world rest positions,
edges, inverse masses, compliances, rest lengths, bending compliances, radii), stepped once
per frame. The result is split back into each member's own ``RopeSim.cache``, so showing a
cached frame, writing the geometry, the panel's frame count and the Collision notes work per
object as before; the group only holds the Model and the colliders of its newest frame.

Two-way: both ropes move (neither is a kinematic obstacle of the other). Members are ordered
by object name, so a file simulates the same after reopening. A rope whose settings differ
from the others' in one of ``SHARED`` is simulated alone and its Collision panel names the
ropes it passes through and why (``RopeSim.group_notes``).

A group restarts from its start frame (the handler replays up to the current frame) when its
membership changes (a member added, removed, disabled, deleted, failed, renamed out of order)
or any member's simulation is rebuilt (a setting changed, Reset): ``plan`` makes a new
``Group`` whenever the members' ``RopeSim`` objects are not the very ones it was made of, and
that clears every member's cache. A rope leaving a group clears its cache too (its frames were
simulated with the others). Members write themselves; a single rope takes the old path
(``RopeSim.show``) untouched, bit for bit.

Bake (``bake.BakeJob``) bakes a member together with the ropes it collides with and steps
them through the same ``Group``, so the baked frames are the played ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import core
from . import colliders, schema, sim
from .geometry import RopeError

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


def build_model(models: list[core.Model]) -> core.Model:
    """One Model of all ``models`` side by side (particles and edges renumbered), with the
    Model-wide settings of the first (``SHARED`` makes them equal)."""
    first = models[0]
    offsets = np.cumsum([0] + [m.particle_count for m in models[:-1]])
    bending = None
    if any(m.particle_bend_compliance is not None for m in models):
        bending = np.concatenate([
            m.particle_bend_compliance if m.particle_bend_compliance is not None
            else np.full(m.particle_count, NO_BENDING) for m in models])
    try:
        return core.Model(
            np.concatenate([m.particle_rest_x for m in models]),
            np.concatenate([m.edge_index + o for m, o in zip(models, offsets, strict=True)]),
            np.concatenate([m.particle_inv_mass for m in models]),
            np.concatenate([m.edge_compliance for m in models]),
            rest_length=np.concatenate([m.edge_rest_length for m in models]),
            strain_limit=first.strain_limit, bending_compliance=bending,
            radius=np.concatenate([m.particle_radius for m in models]), self_collision=True,
            contact_push_speed=first.contact_push_speed, contact_margin=first.contact_margin,
            **{keyword: getattr(first, keyword) for keyword in schema.MODEL_WIDE})
    except ValueError as exc:
        raise RopeError(f"Cannot simulate the colliding ropes together: {exc}") from exc


class MemberError(Exception):
    """A problem of one member (its pins, transform, geometry): that object fails alone."""

    def __init__(self, obj: Any, error: Exception) -> None:
        super().__init__(str(error))
        self.obj = obj
        self.error = error


def _each(members: list[tuple[Any, sim.RopeSim]], function: Any) -> list[Any]:
    """``function(obj, rope)`` for every member; an exception becomes a MemberError."""
    results = []
    for obj, rope in members:
        try:
            results.append(function(obj, rope))
        except Exception as exc:  # noqa: BLE001 - handed on, naming the object
            raise MemberError(obj, exc) from exc
    return results


def _world(depsgraph: Any) -> Any:
    def world(obj: Any, _rope: sim.RopeSim) -> np.ndarray:
        matrix = np.array(obj.evaluated_get(depsgraph).matrix_world, dtype=np.float64)
        sim.check_matrix(matrix, obj.name)
        return matrix
    return world


class Group:
    """Rope objects simulated as one core Model: their joint step, frames and colliders."""

    def __init__(self, members: list[tuple[Any, sim.RopeSim]], scene_name: str) -> None:
        ropes = [rope for _obj, rope in members]
        self.scene_name = scene_name
        self.uids = tuple(obj.session_uid for obj, _rope in members)
        self.ropes = ropes
        """The members' simulations, in member order (the group is only valid for these)"""
        self.model = build_model([rope.model for rope in ropes])
        self.member_models = [rope.model for rope in ropes]
        """The members' Models the group Model was built from: a member rebuilds its Model
        at its start frame (``RopeSim.reset_frame``), and the group follows in ``step``"""
        counts = [rope.model.particle_count for rope in ropes]
        self.offsets = np.cumsum([0] + counts)
        """Index of each member's first particle in the group Model; the last is N"""
        first = ropes[0]
        self.substeps, self.dt, self.gravity = first.substeps, first.dt, first.gravity
        self.frame_start, self.frame_end = first.frame_start, first.frame_end
        self.pinned_ids = [o + rope.pinned_ids for o, rope in zip(self.offsets, ropes,
                                                                 strict=False)]
        self._pin_targets = self.model.particle_rest_x.copy()  # free rows are ignored
        self.colliders: colliders.Snapshot | None = None
        """The colliders at the newest cached frame (the next step's start)"""
        for rope in ropes:  # their frames were not simulated with each other: restart
            rope.group = self
            rope.cache = {}

    # --- the joint step ------------------------------------------------------------------
    def read_colliders(self, members: list[tuple[Any, sim.RopeSim]], depsgraph: Any,
                       previous: colliders.Snapshot | None) -> colliders.Snapshot:
        """This frame's colliders for all members (none of them is a collider of another:
        they collide as ropes)."""
        names = [obj.name for obj, _rope in members]
        snapshot = colliders.read(depsgraph, members[0][0].xpbd, names, previous)
        for _obj, rope in members:
            rope.snapshot_problems = snapshot.problems
        return snapshot

    def step(self, previous: list[sim.Frame], targets: list[np.ndarray],
             snapshot: colliders.Snapshot, *, start: colliders.Snapshot | None,
             part: tuple[float, float] = (0.0, 1.0)) -> list[sim.Frame]:
        """One frame of all members from their ``previous`` frames, pins ending on
        ``targets`` (per member), colliders moving from ``start`` to ``snapshot`` (or the
        fraction ``part`` of that motion). Returns each member's new Frame."""
        if any(rope.model is not m for rope, m in zip(self.ropes, self.member_models,
                                                      strict=True)):
            self.model = build_model([rope.model for rope in self.ropes])
            self.member_models = [rope.model for rope in self.ropes]
        state = core.State(np.concatenate([f.x for f in previous]),
                           np.concatenate([f.v for f in previous]))
        pin_targets = self._pin_targets
        for ids, t in zip(self.pinned_ids, targets, strict=True):
            pin_targets[ids] = t
        contacts = colliders.for_step(start, snapshot, *part)
        # The safety net's energy test holds while no member's pins moved since the start.
        still = all(rope.start_targets is not None and rope.start_energy is not None
                    and np.array_equal(t, rope.start_targets)
                    for rope, t in zip(self.ropes, targets, strict=True))
        start_energy = sum(rope.start_energy or 0.0 for rope in self.ropes) if still else None
        sim.checked_step(self.model, state, self.dt, self.substeps, self.gravity, pin_targets,
                         contacts, "The simulation of the ropes colliding with each other",
                         start_energy=start_energy)
        o = self.offsets
        return [sim.Frame(state.x[o[k]:o[k + 1]].copy(), state.v[o[k]:o[k + 1]].copy(), t)
                for k, t in enumerate(targets)]

    # --- frames (as RopeSim.show and fill_interpolated, for all members at once) ---------
    def _last(self) -> int | None:
        """The newest frame all members have cached, or None (then they restart)."""
        lasts = {max(rope.cache) if rope.cache else None for rope in self.ropes}
        if len(lasts) != 1 or None in lasts:
            for rope in self.ropes:  # never expected: members are filled together
                rope.cache = {}
            self.colliders = None
            return None
        return lasts.pop()

    def _reset(self, members: list[tuple[Any, sim.RopeSim]], depsgraph: Any, render: bool,
               worlds: list[np.ndarray]) -> None:
        targets = _each(members, lambda obj, rope: rope.targets(obj, depsgraph, render))
        self.colliders = self.read_colliders(members, depsgraph, None)
        for (_obj, rope), world, t in zip(members, worlds, targets, strict=True):
            rope.cache = {self.frame_start: rope.reset_frame(world, t)}

    def show(self, members: list[tuple[Any, sim.RopeSim]], depsgraph: Any, frame: int,
             render: bool, *, keep_cache: bool = False) -> int | None:
        """Bring every member to ``frame``; as ``RopeSim.show`` (returns the first frame to
        simulate first on a jump past the cache)."""
        worlds = _each(members, _world(depsgraph))
        if frame <= self.frame_start:
            if not (keep_cache and all(self.frame_start in r.cache for r in self.ropes)):
                self._reset(members, depsgraph, render, worlds)
            _each(members, lambda obj, rope: rope.write_rest(obj))
            return None
        frame = min(frame, self.frame_end)
        if not all(frame in rope.cache for rope in self.ropes):
            last = self._last()
            if last is None or frame != last + 1:
                return self.frame_start if last is None else last + 1
            targets = _each(members, lambda obj, rope: rope.targets(obj, depsgraph, render))
            snapshot = self.read_colliders(members, depsgraph, self.colliders)
            frames = self.step([rope.cache[last] for rope in self.ropes], targets, snapshot,
                               start=self.colliders)
            self.colliders = snapshot
            for rope, new in zip(self.ropes, frames, strict=True):
                rope.cache[frame] = new
        for (obj, rope), world in zip(members, worlds, strict=True):
            try:
                rope.write(obj, world, rope.cache[frame].x)
            except Exception as exc:  # noqa: BLE001 - this member fails, the others wrote
                raise MemberError(obj, exc) from exc
        return None

    def fill_interpolated(self, members: list[tuple[Any, sim.RopeSim]], depsgraph: Any,
                          frame: int, render: bool) -> None:
        """As ``RopeSim.fill_interpolated``: the missing frames up to ``frame`` with pin
        targets and colliders interpolated linearly (while rendering)."""
        frame = min(frame, self.frame_end)
        end_targets = _each(members, lambda obj, rope: rope.targets(obj, depsgraph, render))
        last = self._last()
        if last is None:
            worlds = _each(members, _world(depsgraph))
            self.colliders = self.read_colliders(members, depsgraph, None)
            for (_obj, rope), world, t in zip(members, worlds, end_targets, strict=True):
                rope.cache = {self.frame_start: rope.reset_frame(world, t)}
            last = self.frame_start
        if frame <= last:
            return
        start_targets = [rope.cache[last].targets for rope in self.ropes]
        start = self.colliders
        end = self.read_colliders(members, depsgraph, self.colliders)
        for k in range(last + 1, frame + 1):
            s = (k - last) / (frame - last)
            s_before = (k - 1 - last) / (frame - last)
            targets = [(1.0 - s) * a + s * b
                       for a, b in zip(start_targets, end_targets, strict=True)]
            frames = self.step([rope.cache[k - 1] for rope in self.ropes], targets, end,
                               start=start, part=(s_before, s))
            for rope, new in zip(self.ropes, frames, strict=True):
                rope.cache[k] = new
        self.colliders = end


@dataclass
class Unit:
    """What the handler brings to a frame: one rope alone (``group`` None, the old path) or
    a group of colliding ropes."""

    members: list[tuple[Any, sim.RopeSim]]
    group: Group | None = None

    @property
    def objects(self) -> list[Any]:
        return [obj for obj, _rope in self.members]

    def show(self, depsgraph: Any, frame: int, render: bool, *,
             keep_cache: bool = False) -> int | None:
        if self.group is None:
            obj, rope = self.members[0]
            return rope.show(obj, depsgraph, frame, render, keep_cache=keep_cache)
        return self.group.show(self.members, depsgraph, frame, render, keep_cache=keep_cache)

    def fill_interpolated(self, depsgraph: Any, frame: int, render: bool) -> None:
        if self.group is None:
            obj, rope = self.members[0]
            rope.fill_interpolated(obj, depsgraph, frame, render)
        else:
            self.group.fill_interpolated(self.members, depsgraph, frame, render)


GROUPS: dict[tuple[int, ...], Group] = {}
"""Live groups by their members' session_uids (in member order)."""


def plan(scene: Any, entries: list[tuple[Any, sim.RopeSim]]) -> list[Unit]:
    """Split the simulated objects of ``scene`` (with their simulations) into groups of
    colliding ropes and single ropes, keeping a group while its members' simulations are
    the same, restarting it otherwise."""
    groups, notes = partition(entries)
    units: list[Unit] = []
    grouped: set[int] = set()
    live: set[tuple[int, ...]] = set()
    for members in groups:
        uids = tuple(obj.session_uid for obj, _rope in members)
        group = GROUPS.get(uids)
        if (group is None or group.scene_name != scene.name
                or any(a is not b for a, (_o, b) in zip(group.ropes, members, strict=True))):
            try:
                group = Group(members, scene.name)
            except RopeError as exc:  # not expected: each member's Model was accepted
                for obj, _rope in members:
                    notes[obj.session_uid] = (str(exc),)
                continue
            GROUPS[uids] = group
        live.add(uids)
        grouped.update(uids)
        units.append(Unit(members, group))
    for obj, rope in entries:
        rope.group_notes = notes.get(obj.session_uid, ())
        if obj.session_uid in grouped:
            continue
        if rope.group is not None:  # left its group: its frames include the others
            rope.group = None
            rope.cache = {}
        units.append(Unit([(obj, rope)]))
    prune(scene, live)
    return units


def prune(scene: Any, live: set[tuple[int, ...]] | frozenset[tuple[int, ...]] = frozenset()
          ) -> None:
    """Forget the groups of ``scene`` that are not in ``live``."""
    for uids in [u for u, g in GROUPS.items() if g.scene_name == scene.name and u not in live]:
        del GROUPS[uids]


def clear() -> None:
    """Forget every group (new file loaded, add-on unregistered)."""
    GROUPS.clear()
