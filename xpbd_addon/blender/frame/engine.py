"""The frame engine: the one path by which ropes reach a frame (live playback from a per-frame
cache, and every way of reaching a frame going through it).

Every simulation is a ``Run``: one rope object alone, the rope objects that collide with
each other (``group.partition``), or plain ropes stepped together for speed (a batch,
``group.batches``), each stepped as one core Model (``runs.py`` says which). Playback
(``Run.show``), the render fill-in (``Run.fill_interpolated``), the handler's replay of a
jump (``show`` frame by frame) and the bake (``Run.start`` / ``Run.next``, bake.py) all go
through it, so a change to resets, pins, colliders or stepping is made here once. A subframe
(motion blur) is one shorter ``Run.step`` from the cached whole frame before it, shown and
never cached (subframes.py).

Each frame of a run is made the same way:

    start frame:  inputs (RopeSim.inputs: animated settings, pin targets, attachments)
                  -> colliders (collision_objects.py) -> RopeSim.reset_frame -> pre-roll
    later frames: inputs -> colliders, moving from the last frame's -> Run.step: each
                  rope's holds (attachments.py) and Model for the frame (RopeSim.model_for),
                  the inputs joined for the joint Model (handoff.Handoff) -> handoff.step
                  (core.step on the joint State, then the safety net)

The frames are kept per object in ``RopeSim.cache`` (the panel's frame count, cached frames
shown again on a jump back); the run keeps the joint Model and the colliders of the newest
frame, which the next frame's collider motion starts from.

A run is kept while its members' ``RopeSim`` objects are the very ones it was made of
(``runs.plan``). A new one clears its members' caches when they collide with each other or
did in their last run (their frames hold those contacts); a rope alone or in a batch moves
as it would alone, so its frames stand, and a batch fills in the frames its newcomers miss.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

import numpy as np

from ... import core
from ...core import rod as core_rod
from ...core import sleep as core_sleep
from ..read import animated
from ..read import attachments as attach
from ..read import collision_objects as colliders
from ..read.geometry import RopeError
from . import group, readouts, sim
from .checks import check_budget, energy_anchor, energy_at_start, energy_budgets, energy_margin
from .handoff import Handoff
from .handoff import step as handoff_step
from .inputs import Inputs, read
from .members import MemberError, Members, each_member, worlds  # noqa: F401 - (re-exported)


def _joint_model(ropes: list[sim.RopeSim], collide: bool) -> core.Model:
    """The Model a run steps: a rope's own, or the members' side by side (group.py),
    colliding with each other or a batch."""
    if len(ropes) == 1:
        return ropes[0].model
    return group.build_model([r.track.model for r in ropes], collide=collide)


class Run:
    """Rope objects brought to each frame together: their joint Model, step and frames."""

    def __init__(self, members: Members, scene_name: str, *, collide: bool = True) -> None:
        ropes = [rope for _obj, rope in members]
        self.scene_name = scene_name
        """The scene the run belongs to (``prune``)"""
        self.ropes = ropes
        """The members' simulations, in member order (the run is only valid for these)"""
        self.batch = len(ropes) > 1 and not collide
        """Ropes that do not collide, stepped together for speed (``group.batches``): each
        moves as alone, and has its own energy check"""
        self.model = _joint_model(ropes, collide)
        """The Model stepped: the single rope's own, or the members' side by side"""
        self.member_models = [rope.track.model for rope in ropes]
        """The members' Models ``model`` was made of: a member rebuilds its Model at its start
        frame (``RopeSim.reset_frame``), and the run follows in ``step``"""
        self.margin = energy_margin(self.model, ropes[0].gravity)
        """The safety net's allowed energy rise [J] for ``model`` (``checks.energy_margin``)"""
        self.member_margins: list[tuple[core.Model, float] | None] = [None] * len(ropes)
        """(Model, its energy margin [J]) of each member of a batch (``_margin_of``)"""
        counts = [rope.track.model.particle_count for rope in ropes]
        self.offsets = np.cumsum([0] + counts)
        """Index of each member's first particle in ``model``; the last is N"""
        first = ropes[0]
        self.substeps, self.dt, self.gravity = first.substeps, first.dt, first.gravity
        self.frame_start, self.frame_end = first.frame_start, first.frame_end
        self.preroll = first.preroll
        """Frames settled before the start frame (shared by the members, group.SHARED)"""
        self.prerolled: tuple[bytes, list[sim.Frame]] | None = None
        """The last pre-rolled start frames and what they were rolled from, so going back to
        the start frame does not roll again"""
        self.snapshots: dict[int, colliders.Snapshot] = {}
        """The colliders of each cached frame, kept only when a member has animated
        settings: an edit of them cuts the cache, and the next frame's collider motion
        starts from the frame before the cut"""
        self.keeps_snapshots = any(rope.changes.channels for rope in ropes)
        self.pin_targets = self.model.particle_rest_x.copy()
        """Pin targets [m] handed to the core, shape [N, 3]: only the pinned rows are set
        (the core ignores the others), so one buffer serves every frame"""
        self.colliders: colliders.Snapshot | None = None
        """The colliders at the newest cached frame (the next step's start)"""
        self.state: core.State | None = None
        """The State the run steps (``_state_from``): its workspace lives from frame to
        frame, its x and v are each frame's own"""
        self.what = ("The simulation" if len(ropes) == 1 or self.batch
                     else "The simulation of the ropes colliding with each other")
        """How error messages name this simulation"""
        for rope in ropes:
            # Frames of ropes that collided with others hold those contacts: restart. A
            # rope alone or in a batch moves the same either way: its frames stand (a batch
            # fills in the frames its newcomers miss, ``_reset``).
            before = rope.track.run
            if not (_independent(self) and (before is None or _independent(before))):
                rope.track.cache = {}
            rope.track.run = self

    # --- one frame -------------------------------------------------------------------------
    def read_colliders(self, members: Members, depsgraph: Any,
                       previous: colliders.Snapshot | None) -> colliders.Snapshot:
        """This frame's colliders for all members (none of them is a collider of another:
        they collide as ropes). ``previous``: the last frame's, whose analysis is reused."""
        names = [obj.name for obj, _rope in members]
        snapshot = colliders.read(depsgraph, members[0][0].xpbd, names, previous)
        for _obj, rope in members:
            rope.track.collider_notes = snapshot.problems
        return snapshot

    def inputs_of(self, members: Members, depsgraph: Any, render: bool, frame: int
                  ) -> list[Inputs]:
        """Each member's inputs at the depsgraph's (sub)frame (``RopeSim.inputs``)."""
        return each_member(members, lambda obj, rope: read(rope, obj, depsgraph, render, frame))

    def _read(self, members: Members, depsgraph: Any, frame: int) -> colliders.Snapshot:
        """This frame's colliders (``read_colliders``), kept as ``colliders``."""
        snapshot = self.read_colliders(members, depsgraph, self.colliders)
        self.colliders = snapshot
        if self.keeps_snapshots:
            self.snapshots[frame] = snapshot
        return snapshot

    def start(self, members: Members, depsgraph: Any, render: bool,
              matrices: list[np.ndarray], frame: int | None = None) -> list[sim.Frame]:
        """The start frame of every member: rest shape placed by ``matrices`` (``worlds``),
        pins on this frame's targets, the colliders read afresh; then the pre-roll."""
        frame = self.frame_start if frame is None else frame
        inputs = self.inputs_of(members, depsgraph, render, frame)
        self.colliders = None
        self.snapshots = {}
        snapshot = self._read(members, depsgraph, frame)
        frames = [rope.reset_frame(world, i)
                  for (_obj, rope), world, i in zip(members, matrices, inputs, strict=True)]
        return self._preroll(frames, inputs, snapshot) if self.preroll > 0 else frames

    def _preroll(self, frames: list[sim.Frame], inputs: list[Inputs],
                 snapshot: colliders.Snapshot) -> list[sim.Frame]:
        """``preroll`` frames from ``frames`` with the pins and colliders held as they are
        (the shot starts with the rope settled); the result is the start frame."""
        rolled_from = b"".join(f.x.tobytes() + f.targets.tobytes() for f in frames)
        if self.prerolled is not None and self.prerolled[0] == rolled_from:
            return self.prerolled[1]
        for _ in range(self.preroll):
            frames = self.step(frames, inputs, snapshot, start=snapshot)
        for rope, frame in zip(self.ropes, frames, strict=True):  # the start: a new budget
            frame.budget = energy_at_start(rope.track.model, frame, self.gravity)
        self.prerolled = (rolled_from, frames)
        return frames

    def next(self, members: Members, depsgraph: Any, render: bool,
             previous: list[sim.Frame], frame: int) -> list[sim.Frame]:
        """The frame ``frame`` after ``previous`` (one per member), with that frame's inputs
        and colliders (moving from the last frame's)."""
        inputs = self.inputs_of(members, depsgraph, render, frame)
        start = self.colliders
        snapshot = self._read(members, depsgraph, frame)
        return self.step(previous, inputs, snapshot, start=start)

    def step(self, previous: list[sim.Frame], inputs: list[Inputs],
             snapshot: colliders.Snapshot, *, start: colliders.Snapshot | None,
             part: tuple[float, float] = (0.0, 1.0), dt: float | None = None
             ) -> list[sim.Frame]:
        """One frame of all members from their ``previous`` frames with their ``inputs``
        (pins ending on their targets, attachments), colliders moving from ``start`` to
        ``snapshot`` (or the fraction ``part`` of that motion). Returns each member's new
        Frame. ``dt`` [s]: a shorter step (a subframe, subframes.py), made on a State of
        its own so that the run's (its workspace carried to the next frame) is untouched."""
        holds = []
        for rope, before, i in zip(self.ropes, previous, inputs, strict=True):
            found = rope.changes.attachments
            holds.append(attach.step_holds(found, before.holds or (attach.FREE,) * len(found),
                                           i.enabled, i.matrices, before.x))
            rope.track.model = rope.model_for(i, holds[-1], before.torn)
        if any(rope.track.model is not m for rope, m in zip(self.ropes, self.member_models,
                                                      strict=True)):
            self.model = _joint_model(self.ropes, not self.batch)
            self.member_models = [rope.track.model for rope in self.ropes]
            self.margin = energy_margin(self.model, self.gravity)
        state = self._state_from(previous) if dt is None else core.State(
            np.concatenate([f.x for f in previous]), np.concatenate([f.v for f in previous]),
            core_rod.joined_states(self.model.rod_layout, [f.rod for f in previous],
                                   self.offsets), rest=self._rest_from(previous),
            tension=self._tension_from(previous))
        dt = self.dt if dt is None else dt
        handoff = Handoff.join(self.ropes, self.offsets, inputs, holds, self.pin_targets,
                               previous)
        holds = list(handoff.holds)
        for rope, notes in zip(self.ropes, handoff.notes, strict=True):
            rope.track.field_notes = notes
        contacts = colliders.for_step(start, snapshot, *part)
        stepped = handoff_step(self.model, state, dt, self.substeps, handoff,
                               gravity=self.gravity, contacts=contacts, what=self.what)
        o = self.offsets
        if len(previous) == 1:
            x, v, rests = [state.x], [state.v], [state.rest]
        else:
            x = [state.x[o[k]:o[k + 1]].copy() for k in range(len(previous))]
            v = [state.v[o[k]:o[k + 1]].copy() for k in range(len(previous))]
            rests = [core_sleep.part(state.rest, o[k], o[k + 1]) for k in range(len(previous))]
        moving = any(getattr(c, "moving", False) for c in contacts)
        budgets, springs = energy_budgets(self.ropes, inputs, previous, handoff, moving, x,
                                          air_work=state.air_work,
                                          spring_work=state.spring_work)
        joint = [b for b in budgets if b is not None]
        # (the geometric check ran in handoff_step)
        if not self.batch and len(joint) == len(budgets):  # the run's joint Model: one system
            check_budget(self.model, state.x, state.v, self.what, gravity=self.gravity,
                         budget=sum(joint), margin=self.margin)
        for k, budget in enumerate(budgets if self.batch else ()):
            # each rope of a batch against its own budget (a sum would let one rope's loss
            # hide another's gain)
            if budget is not None:
                check_budget(self.ropes[k].track.model, x[k], v[k], self.what,
                             gravity=self.gravity, budget=budget, margin=self._margin_of(k))
        torn = [f.torn for f in previous]
        tensions = self._tensions(stepped, state, list(torn), dt)  # None: the sweep keeps none
        if any(_loaded(rope) for rope in self.ropes):
            if tensions is None:
                raise RopeError("Tear Force and attachments' Break Force need the Direct "
                                "solver (the Gauss-Seidel sweep keeps no segment tension)")
            for k, rope in enumerate(self.ropes):
                if not _loaded(rope):
                    continue
                if rope.tear_force > 0.0:
                    over = tensions[k] > rope.tear_force
                    so_far = torn[k]
                    if over.any():
                        torn[k] = over if so_far is None else so_far | over
                holds[k] = attach.break_holds(rope.changes.attachments, holds[k], x[k],
                                              rope.layout.edges, tensions[k])
        rods = [None if state.rod is None else state.rod.part(o[k], o[k + 1])
                for k in range(len(previous))]
        frames = [sim.Frame(x[k], v[k], i.targets, i.pinned_ids, h, i.channels, t,
                            None if tensions is None else tensions[k], rod=rods[k],
                            turn=i.turn, rest=rests[k], budget=budgets[k],
                            springs=springs[k], model=rope.track.model)
                  for k, (i, h, t, rope) in enumerate(zip(inputs, holds, torn, self.ropes,
                                                          strict=True))]
        for frame in frames:  # what acted uncounted: the budget starts again from here
            if frame.budget is None:
                frame.budget = energy_anchor(frame.model, frame, self.gravity)
        return frames

    def _margin_of(self, k: int) -> float:
        """``checks.energy_margin`` of member ``k``'s Model, kept while it is the same."""
        model = self.ropes[k].model
        kept = self.member_margins[k]
        if kept is None or kept[0] is not model:
            kept = self.member_margins[k] = (model, energy_margin(model, self.gravity))
        return kept[1]

    def _state_from(self, previous: list[sim.Frame]) -> core.State:
        """The run's State holding copies of ``previous`` (the members' frames side by
        side). One State is stepped frame after frame, so its workspace (the solver's
        buffers, the collider candidates a frame ended with) is made once and carried; the
        core uses what is carried only when a frame starts where the last one ended. Its x
        and v are new arrays every frame: a single rope's new frame keeps them."""
        if len(previous) == 1:
            x, v = previous[0].x.copy(), previous[0].v.copy()
        else:
            x = np.concatenate([f.x for f in previous])
            v = np.concatenate([f.v for f in previous])
        if self.state is None:
            self.state = core.State(x, v)
        else:
            self.state.x, self.state.v = x, v
        self.state.rod = core_rod.joined_states(self.model.rod_layout,
                                                [f.rod for f in previous], self.offsets)
        self.state.rest = self._rest_from(previous)
        self.state.tension = self._tension_from(previous)
        # the air's and the moving springs' work of this frame alone (the budget's)
        self.state.air_work = self.state.spring_work = None
        return self.state

    @staticmethod
    def _tension_from(previous: list[sim.Frame]) -> np.ndarray | None:
        """The members' segment tensions [N] side by side, as the joint Model orders its
        edges (a member's torn segments are not among them), or None if some member has
        none (the start frame, the sweep): what the next frame's solve starts from
        (``core.tension``), part of a frame's state as x and v."""
        parts = []
        for f in previous:
            if f.tension is None:
                return None
            parts.append(f.tension if f.torn is None else f.tension[~f.torn])
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    @staticmethod
    def _rest_from(previous: list[sim.Frame]) -> Any:
        """The members' ``core.sleep.Rest`` side by side (the ropes at rest, asleep), or None:
        part of a frame's state, as x and v."""
        if len(previous) == 1:
            return previous[0].rest
        return core_sleep.join([f.rest for f in previous], [len(f.x) for f in previous])

    def _tensions(self, stepped: core.Model, state: core.State,
                  torn: list[np.ndarray | None],
                  dt: float) -> list[np.ndarray] | None:
        """Each member's segment tensions [N] at the end of the step of ``dt`` [s] just
        made, per segment of its layout (0 for torn ones); None where the solver keeps none
        (the sweep's lanes)."""
        joint = core.edge_tension(stepped, state, dt, self.substeps)
        if np.isnan(joint).any():
            return None
        out = []
        start = 0
        for rope, gone in zip(self.ropes, torn, strict=True):
            count = rope.track.model.edge_count
            if gone is None:  # a view: the members' tensions share the frame's one array
                tension = joint[start:start + count]
            else:
                tension = np.zeros(len(rope.layout.edges))
                tension[np.flatnonzero(~gone)] = joint[start:start + count]
            start += count
            out.append(tension)
        return out

    # --- edits of animated settings --------------------------------------------------------
    def drop_stale(self, members: Members, depsgraph: Any, frame: int) -> None:
        """Cut the cached frames an edit of an animated setting made stale: from the first
        frame whose F-Curve values changed, or this frame if a driven value moved."""
        first: int | None = None
        for obj, rope in members:
            found = rope.changes
            if not found.channels:
                continue
            signature = animated.signature(obj, found.channels)
            if signature != rope.track.animation_signature:
                stale = animated.first_stale(obj, found.channels, rope.track.cache,
                                             self.frame_start)
                rope.track.animation_signature = signature
                if stale is not None:
                    first = stale if first is None else min(first, stale)
            cached = rope.track.cache.get(frame)
            if (frame > self.frame_start and cached is not None and any(
                    c.driven for c in found.channels) and animated.driven_changed(
                    obj.evaluated_get(depsgraph), found.channels, cached.channels)):
                first = frame if first is None else min(first, frame)
        if first is None:
            return
        for rope in self.ropes:
            for k in [k for k in rope.track.cache if k >= first]:
                del rope.track.cache[k]
        for k in [k for k in self.snapshots if k >= first]:
            del self.snapshots[k]
        self.colliders = self.snapshots.get(first - 1)
        if self.colliders is None:  # not kept: start again
            for rope in self.ropes:
                rope.track.cache = {}

    # --- frames of playback ------------------------------------------------------------------
    def last_cached(self) -> int | None:
        """The newest frame all members have cached, or None (then they restart; a batch
        restarts those without frames, ``_reset``)."""
        lasts = {max(rope.track.cache) if rope.track.cache else None for rope in self.ropes}
        if self.batch:
            return None if None in lasts else min(k for k in lasts if k is not None)
        if len(lasts) != 1 or None in lasts:
            for rope in self.ropes:  # never expected: members are filled together
                rope.track.cache = {}
            self.colliders = None
            return None
        return lasts.pop()

    def _reset(self, members: Members, depsgraph: Any, render: bool,
               matrices: list[np.ndarray], *, missing: bool = False) -> None:
        """Restart every member's cache at the start frame; with ``missing`` (a batch) only
        the caches of members without that frame."""
        frames = self.start(members, depsgraph, render, matrices, self.frame_start)
        for rope, frame in zip(self.ropes, frames, strict=True):
            if not (missing and self.frame_start in rope.track.cache):
                rope.track.cache = {self.frame_start: frame}

    def show(self, members: Members, depsgraph: Any, frame: int, render: bool, *,
             keep_cache: bool = False) -> int | None:
        """Bring every member to ``frame``. Returns None when done, or the first frame that
        has to be simulated before ``frame`` can be shown (a jump past the cache):
        - before the start frame the rope shows its stored rest shape and the caches
          restart (unless ``keep_cache``), but no start state is made: it is made from
          the start frame's own pins, transform and colliders, only at that frame (a jump
          past it replays from there);
        - at the start frame the caches restart (pin animation edited since is picked up
          by replaying), unless ``keep_cache`` (the handler's replay of another rope's
          missing frames passes through the start frame);
        - a cached frame is written again, nothing simulated;
        - the frame after the newest cached one is simulated;
        - past the end frame, the end frame's state is held."""
        matrices = worlds(members, depsgraph)
        if frame < self.frame_start:
            if not keep_cache:
                self.forget_frames()
            each_member(members, lambda obj, rope: rope.write_rest(obj))
            return None
        if frame == self.frame_start:
            if not (keep_cache and all(self.frame_start in r.track.cache for r in self.ropes)):
                self._reset(members, depsgraph, render, matrices,
                            missing=keep_cache and self.batch)
            self._colliders_of_kept(members, depsgraph, self.frame_start)
            if self.preroll > 0:  # the settled start frame
                self._write(members, matrices, self.frame_start)
            else:  # the stored rest shape, exactly
                each_member(members, lambda obj, rope: rope.write_rest(obj))
            if all(self.frame_start in rope.track.cache for rope in self.ropes):
                readouts.note(members, [rope.track.cache[self.frame_start] for rope in self.ropes],
                              self.frame_start, False)
            return None
        self.drop_stale(members, depsgraph, frame)
        frame = min(frame, self.frame_end)
        if not all(frame in rope.track.cache for rope in self.ropes):
            last = self.last_cached()
            if last is None:
                return self.frame_start
            if self.colliders is None and last > self.frame_start:
                return last  # a new run on kept frames: their colliders first
            if frame != last + 1:
                return last + 1
            began = time.perf_counter()
            frames = self.next(members, depsgraph, render,
                               [rope.track.cache[last] for rope in self.ropes], frame)
            for rope, new in zip(self.ropes, frames, strict=True):
                new.ms = 1e3 * (time.perf_counter() - began)
                rope.track.cache.setdefault(frame, new)  # (a batch member's own frame stands)
            cached = False
        else:
            self._colliders_of_kept(members, depsgraph, frame)
            cached = True
        self._write(members, matrices, frame)
        readouts.note(members, [rope.track.cache[frame] for rope in self.ropes], frame, cached)
        return None

    def forget_frames(self) -> None:
        """Drop every member's cached frames and the colliders kept with them."""
        for rope in self.ropes:
            rope.track.cache = {}
        self.colliders = None
        self.snapshots = {}

    def _colliders_of_kept(self, members: Members, depsgraph: Any, frame: int) -> None:
        """A new run on frames its ropes kept (alone or in a batch, ``__init__``) reads the
        colliders when it shows the newest of them, where its next step starts."""
        if self.colliders is None and frame == self.last_cached():
            self._read(members, depsgraph, frame)

    def _write(self, members: Members, matrices: list[np.ndarray], frame: int) -> None:
        for (obj, rope), world in zip(members, matrices, strict=True):
            try:
                rope.write(obj, world, rope.track.cache[frame])
                rope.show_tears(obj, frame)
            except Exception as exc:  # noqa: BLE001 - this member fails, the others wrote
                raise MemberError(obj, exc) from exc

    def fill_interpolated(self, members: Members, depsgraph: Any, frame: int,
                          render: bool) -> None:
        """Simulate the missing frames up to ``frame`` with pin targets and colliders moving
        linearly from the newest cached frame to this one. Only where the handler cannot
        replay the frames (while rendering); exact unless pins move non-linearly between."""
        frame = min(frame, self.frame_end)
        end = self.inputs_of(members, depsgraph, render, frame)
        last = self.last_cached()
        if last is None:
            matrices = worlds(members, depsgraph)
            self._reset(members, depsgraph, render, matrices)
            last = self.frame_start
        if frame <= last:
            return
        begin = self.colliders
        snapshot = self._read(members, depsgraph, frame)
        start_targets = [rope.track.cache[last].targets for rope in self.ropes]
        for k in range(last + 1, frame + 1):
            s = (k - last) / (frame - last)
            s_before = (k - 1 - last) / (frame - last)
            inputs = [replace(i, targets=(1.0 - s) * a + s * i.targets)
                      if a.shape == i.targets.shape else i
                      for a, i in zip(start_targets, end, strict=True)]
            frames = self.step([rope.track.cache[k - 1] for rope in self.ropes], inputs, snapshot,
                               start=begin, part=(s_before, s))
            for rope, new in zip(self.ropes, frames, strict=True):
                rope.track.cache.setdefault(k, new)


def _independent(run: Run) -> bool:
    """Whether a run's ropes move as each alone would (a single rope or a batch)."""
    return len(run.ropes) == 1 or run.batch


def _loaded(rope: sim.RopeSim) -> bool:
    """Whether a rope's segments can tear or its attachments break (its tensions are read)."""
    return rope.tear_force > 0.0 or any(s.break_force > 0.0 for s in rope.changes.attachments)
