"""The frame engine: the one path by which ropes reach a frame (decisions 3 and 8).

Every simulation is a ``Run``: one rope object alone, or the rope objects that collide with
each other (``group.partition``), stepped as one core Model. Playback (``Run.show``), the
render fill-in (``Run.fill_interpolated``), the handler's replay of a jump (``show`` frame by
frame) and the bake (``Run.start`` / ``Run.next``, bake.py) all go through it, so a change to
resets, pins, colliders or stepping is made here once.

Each frame of a run is made the same way:

    start frame:  targets (pins.py) -> colliders (colliders.py) -> RopeSim.reset_frame
    later frames: targets -> colliders, moving from the last frame's -> Run.step
                  (sim.checked_step: core.step on the joint State, then the safety net)

The frames are kept per object in ``RopeSim.cache`` (the panel's frame count, cached frames
shown again on a jump back); the run keeps the joint Model and the colliders of the newest
frame, which the next frame's collider motion starts from.

A run is kept while its members' ``RopeSim`` objects are the very ones it was made of
(``plan``); a new one clears its members' caches (their frames were simulated with other
ropes, or with other settings).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import core
from . import colliders, group, sim
from .checks import energy_margin
from .geometry import RopeError

Members = list[tuple[Any, sim.RopeSim]]
"""(object, its simulation) pairs of a run, in the run's order; the objects are this
handler call's (a bpy reference is never kept between calls: it may dangle after an undo)."""


class MemberError(Exception):
    """A problem of one member (its pins, transform, geometry): that object fails alone."""

    def __init__(self, obj: Any, error: Exception) -> None:
        super().__init__(str(error))
        self.obj = obj
        self.error = error


def _each(members: Members, function: Any) -> list[Any]:
    """``function(obj, rope)`` for every member; an exception becomes a MemberError."""
    results = []
    for obj, rope in members:
        try:
            results.append(function(obj, rope))
        except Exception as exc:  # noqa: BLE001 - handed on, naming the object
            raise MemberError(obj, exc) from exc
    return results


def worlds(members: Members, depsgraph: Any) -> list[np.ndarray]:
    """Each member's evaluated world matrix [4, 4] at the depsgraph's frame, checked."""
    def world(obj: Any, _rope: sim.RopeSim) -> np.ndarray:
        matrix = np.array(obj.evaluated_get(depsgraph).matrix_world, dtype=np.float64)
        sim.check_matrix(matrix, obj.name)
        return matrix
    return _each(members, world)


def _joint_model(ropes: list[sim.RopeSim]) -> core.Model:
    """The Model a run steps: a rope's own, or the members' side by side (group.py)."""
    return ropes[0].model if len(ropes) == 1 else group.build_model([r.model for r in ropes])


class Run:
    """Rope objects brought to each frame together: their joint Model, step and frames."""

    def __init__(self, members: Members, scene_name: str) -> None:
        ropes = [rope for _obj, rope in members]
        self.scene_name = scene_name
        """The scene the run belongs to (``prune``)"""
        self.ropes = ropes
        """The members' simulations, in member order (the run is only valid for these)"""
        self.model = _joint_model(ropes)
        """The Model stepped: the single rope's own, or the members' side by side"""
        self.member_models = [rope.model for rope in ropes]
        """The members' Models ``model`` was made of: a member rebuilds its Model at its start
        frame (``RopeSim.reset_frame``), and the run follows in ``step``"""
        self.margin = energy_margin(self.model, ropes[0].gravity)
        """The safety net's allowed energy rise [J] for ``model`` (``checks.energy_margin``)"""
        counts = [rope.model.particle_count for rope in ropes]
        self.offsets = np.cumsum([0] + counts)
        """Index of each member's first particle in ``model``; the last is N"""
        first = ropes[0]
        self.substeps, self.dt, self.gravity = first.substeps, first.dt, first.gravity
        self.frame_start, self.frame_end = first.frame_start, first.frame_end
        self.pinned_ids = [o + rope.pinned_ids for o, rope in zip(self.offsets, ropes,
                                                                 strict=False)]
        """Each member's pinned particles, as indices into ``model``"""
        self.pin_targets = self.model.particle_rest_x.copy()
        """Pin targets [m] handed to the core, shape [N, 3]: only the pinned rows are set
        (the core ignores the others), so one buffer serves every frame"""
        self.colliders: colliders.Snapshot | None = None
        """The colliders at the newest cached frame (the next step's start)"""
        self.what = ("The simulation" if len(ropes) == 1
                     else "The simulation of the ropes colliding with each other")
        """How error messages name this simulation"""
        for rope in ropes:  # their frames were not simulated with each other: restart
            rope.run = self
            rope.cache = {}

    # --- one frame -------------------------------------------------------------------------
    def read_colliders(self, members: Members, depsgraph: Any,
                       previous: colliders.Snapshot | None) -> colliders.Snapshot:
        """This frame's colliders for all members (none of them is a collider of another:
        they collide as ropes). ``previous``: the last frame's, whose analysis is reused."""
        names = [obj.name for obj, _rope in members]
        snapshot = colliders.read(depsgraph, members[0][0].xpbd, names, previous)
        for _obj, rope in members:
            rope.snapshot_problems = snapshot.problems
        return snapshot

    def start(self, members: Members, depsgraph: Any, render: bool,
              matrices: list[np.ndarray]) -> list[sim.Frame]:
        """The start frame of every member: rest shape placed by ``matrices`` (``worlds``),
        pins on this frame's targets; the colliders read afresh."""
        targets = _each(members, lambda obj, rope: rope.targets(obj, depsgraph, render))
        self.colliders = self.read_colliders(members, depsgraph, None)
        return [rope.reset_frame(world, t)
                for (_obj, rope), world, t in zip(members, matrices, targets, strict=True)]

    def next(self, members: Members, depsgraph: Any, render: bool,
             previous: list[sim.Frame]) -> list[sim.Frame]:
        """The frame after ``previous`` (one per member), with this frame's pin targets and
        colliders (moving from the last frame's)."""
        targets = _each(members, lambda obj, rope: rope.targets(obj, depsgraph, render))
        snapshot = self.read_colliders(members, depsgraph, self.colliders)
        frames = self.step(previous, targets, snapshot, start=self.colliders)
        self.colliders = snapshot
        return frames

    def step(self, previous: list[sim.Frame], targets: list[np.ndarray],
             snapshot: colliders.Snapshot, *, start: colliders.Snapshot | None,
             part: tuple[float, float] = (0.0, 1.0)) -> list[sim.Frame]:
        """One frame of all members from their ``previous`` frames, pins ending on
        ``targets`` (per member), colliders moving from ``start`` to ``snapshot`` (or the
        fraction ``part`` of that motion). Returns each member's new Frame."""
        if any(rope.model is not m for rope, m in zip(self.ropes, self.member_models,
                                                      strict=True)):
            self.model = _joint_model(self.ropes)
            self.member_models = [rope.model for rope in self.ropes]
            self.margin = energy_margin(self.model, self.gravity)
        if len(previous) == 1:
            state = core.State(previous[0].x.copy(), previous[0].v.copy())
        else:
            state = core.State(np.concatenate([f.x for f in previous]),
                               np.concatenate([f.v for f in previous]))
        for ids, t in zip(self.pinned_ids, targets, strict=True):
            self.pin_targets[ids] = t
        contacts = colliders.for_step(start, snapshot, *part)
        # The safety net's energy test holds while no member's pins moved since the start.
        still = all(rope.start_targets is not None and rope.start_energy is not None
                    and np.array_equal(t, rope.start_targets)
                    for rope, t in zip(self.ropes, targets, strict=True))
        start_energy = sum(rope.start_energy or 0.0 for rope in self.ropes) if still else None
        sim.checked_step(self.model, state, self.dt, self.substeps, self.gravity,
                         self.pin_targets, contacts, self.what, start_energy=start_energy,
                         margin=self.margin)
        if len(previous) == 1:
            return [sim.Frame(state.x, state.v, targets[0])]
        o = self.offsets
        return [sim.Frame(state.x[o[k]:o[k + 1]].copy(), state.v[o[k]:o[k + 1]].copy(), t)
                for k, t in enumerate(targets)]

    # --- frames of playback ------------------------------------------------------------------
    def _last(self) -> int | None:
        """The newest frame all members have cached, or None (then they restart)."""
        lasts = {max(rope.cache) if rope.cache else None for rope in self.ropes}
        if len(lasts) != 1 or None in lasts:
            for rope in self.ropes:  # never expected: members are filled together
                rope.cache = {}
            self.colliders = None
            return None
        return lasts.pop()

    def _reset(self, members: Members, depsgraph: Any, render: bool,
               matrices: list[np.ndarray]) -> None:
        """Restart every member's cache at the start frame."""
        frames = self.start(members, depsgraph, render, matrices)
        for rope, frame in zip(self.ropes, frames, strict=True):
            rope.cache = {self.frame_start: frame}

    def show(self, members: Members, depsgraph: Any, frame: int, render: bool, *,
             keep_cache: bool = False) -> int | None:
        """Bring every member to ``frame``. Returns None when done, or the first frame that
        has to be simulated before ``frame`` can be shown (a jump past the cache):
        - at or before the start frame the caches restart (pin animation edited since is
          picked up by replaying), unless ``keep_cache`` (the handler's replay of another
          rope's missing frames passes through the start frame);
        - a cached frame is written again, nothing simulated;
        - the frame after the newest cached one is simulated;
        - past the end frame, the end frame's state is held."""
        matrices = worlds(members, depsgraph)
        if frame <= self.frame_start:
            if not (keep_cache and all(self.frame_start in r.cache for r in self.ropes)):
                self._reset(members, depsgraph, render, matrices)
            _each(members, lambda obj, rope: rope.write_rest(obj))
            return None
        frame = min(frame, self.frame_end)
        if not all(frame in rope.cache for rope in self.ropes):
            last = self._last()
            if last is None or frame != last + 1:
                return self.frame_start if last is None else last + 1
            frames = self.next(members, depsgraph, render,
                               [rope.cache[last] for rope in self.ropes])
            for rope, new in zip(self.ropes, frames, strict=True):
                rope.cache[frame] = new
        for (obj, rope), world in zip(members, matrices, strict=True):
            try:
                rope.write(obj, world, rope.cache[frame].x)
            except Exception as exc:  # noqa: BLE001 - this member fails, the others wrote
                raise MemberError(obj, exc) from exc
        return None

    def fill_interpolated(self, members: Members, depsgraph: Any, frame: int,
                          render: bool) -> None:
        """Simulate the missing frames up to ``frame`` with pin targets and colliders moving
        linearly from the newest cached frame to this one. Only where the handler cannot
        replay the frames (while rendering); exact unless pins move non-linearly between."""
        frame = min(frame, self.frame_end)
        end_targets = _each(members, lambda obj, rope: rope.targets(obj, depsgraph, render))
        last = self._last()
        if last is None:
            matrices = worlds(members, depsgraph)
            self.colliders = self.read_colliders(members, depsgraph, None)
            for (_obj, rope), world, t in zip(members, matrices, end_targets, strict=True):
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


# --- the runs of the scene ------------------------------------------------------------------

RUNS: dict[tuple[int, ...], Run] = {}
"""Live runs by their members' session_uids (in member order)."""


def make_runs(entries: Members, scene_name: str,
              kept: dict[tuple[int, ...], Run] | None = None
              ) -> tuple[list[tuple[Run, Members]], dict[int, tuple[str, ...]]]:
    """The runs of ``entries``: the groups of ropes colliding with each other
    (``group.partition``, ordered by object name) and every other rope alone. A run of
    ``kept`` is reused while its members' simulations are the same. Also returns the
    Collision panel's notes by session_uid (ropes passed through, and why)."""
    groups, notes = group.partition(entries)
    grouped: set[int] = set()
    runs: list[tuple[Run, Members]] = []
    singles: Members = []
    for members in groups:
        try:
            runs.append((_kept_or_new(members, scene_name, kept), members))
        except RopeError as exc:  # not expected: each member's Model was accepted
            for obj, _rope in members:
                notes[obj.session_uid] = (str(exc),)
            continue
        grouped.update(obj.session_uid for obj, _rope in members)
    singles = [(obj, rope) for obj, rope in entries if obj.session_uid not in grouped]
    runs += [(_kept_or_new([member], scene_name, kept), [member]) for member in singles]
    return runs, notes


def _kept_or_new(members: Members, scene_name: str,
                 kept: dict[tuple[int, ...], Run] | None) -> Run:
    uids = tuple(obj.session_uid for obj, _rope in members)
    run = kept.get(uids) if kept is not None else None
    if (run is None or run.scene_name != scene_name
            or any(a is not b for a, (_o, b) in zip(run.ropes, members, strict=True))):
        run = Run(members, scene_name)
    return run


def plan(scene: Any, entries: Members) -> list[tuple[Run, Members]]:
    """The runs that bring the simulated objects of ``scene`` (with their simulations) to a
    frame, kept from the last call while their members' simulations are the same."""
    runs, notes = make_runs(entries, scene.name, RUNS)
    prune(scene)
    for run, members in runs:
        RUNS[tuple(obj.session_uid for obj, _rope in members)] = run
    for obj, rope in entries:
        rope.group_notes = notes.get(obj.session_uid, ())
    return runs


def prune(scene: Any) -> None:
    """Forget the runs of ``scene`` (``plan`` puts back the live ones)."""
    for uids in [u for u, r in RUNS.items() if r.scene_name == scene.name]:
        del RUNS[uids]


def clear() -> None:
    """Forget every run (new file loaded, add-on unregistered)."""
    RUNS.clear()
