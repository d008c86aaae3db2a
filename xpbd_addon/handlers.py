"""The frame-change handler: simulate, show cached frames, replay jumps (a per-frame cache).

``frame_change_post`` is used because its depsgraph already holds the new frame: object,
parent and bone matrices and modifiers are evaluated there, so the
pins read this frame's targets.

A jump forward past the cache is replayed frame by frame: the handler calls
``scene.frame_set(k)`` for every missing frame k, and the nested handler calls simulate one
frame each with the pins evaluated at k, exactly as playback would. The result of any frame
reached in any order is therefore bit-identical to playing from the start. While rendering
(``depsgraph.mode == 'RENDER'``, where changing the frame from the render thread is not safe)
the missing frames are simulated with pin targets interpolated linearly instead; bake
(``xpbd.bake``, docs/bake.md) for render farms that start at an arbitrary frame. Baked
objects, and objects a running bake drives, are left alone here.

Every rope is brought to a frame by the frame engine (``blender.frame.engine.Run``): rope objects
that collide with each other (Self Collision on, matching solver settings) together, every
other object alone.

The handler never raises into Blender: a problem with one object disables that object (its
geometry is left untouched) and its message is shown in the panel.
"""

from __future__ import annotations

import sys
import traceback
from collections.abc import Callable
from typing import Any

import bpy
from bpy.app.handlers import persistent

from . import dependencies, preparation

# blender.sim and blender.bake (numpy) are imported when there is a rope to simulate, not at
# registration: Blender 4.2 does not load numpy at start (its start-up budget), and a
# file without ropes never needs them. RopeError comes from a numpy-free module.
from .blender.errors import RetryError, RopeError

_SIM = f"{__package__}.blender.frame.sim"
"""Module name of blender.frame.sim: until it is imported there is no simulation to prune or
clear."""

_RUNS = f"{__package__}.blender.frame.runs"
"""Module name of blender.frame.runs (the runs of the frame engine)."""
_COLLIDERS = f"{__package__}.blender.read.collision_objects"
"""Module name of blender.read.collision_objects (the kept tessellations of colliders)."""
_READOUTS = f"{__package__}.blender.frame.readouts"
"""Module name of blender.frame.readouts (what the frame engine last showed of each rope)."""

_replaying = False
"""True while the handler replays missing frames through nested frame_set calls."""


def simulated_objects(scene: Any) -> list[Any]:
    """Objects of ``scene`` with simulation enabled, except baked ones (they play their
    animation) and those a running bake is driving itself."""
    objects = [obj for obj in scene.objects if obj.xpbd.enabled and not obj.xpbd.bake.baked]
    if not objects:
        return objects
    from .blender.bake import job as bake

    return [obj for obj in objects if obj.session_uid not in bake.BAKING]


def update_scene(scene: Any, depsgraph: Any = None) -> None:
    """Bring every simulated object of ``scene`` to the current frame (the handler's work)."""
    global _replaying
    if depsgraph is None:
        depsgraph = bpy.context.evaluated_depsgraph_get()
    render = depsgraph.mode == "RENDER"
    frame = scene.frame_current
    objects = simulated_objects(scene)
    if not objects and _SIM not in sys.modules:
        return  # no rope ever simulated in this process: nothing to prune
    from .blender.frame import runs, sim, subframes
    from .blender.read import collision_objects as colliders
    from .blender.read import fields

    sim.prune(scene, {obj.session_uid for obj in objects})
    if not objects:
        runs.prune(scene)
        return
    # numba's absence is known without importing it: every rope says why, no traceback.
    reason = dependencies.numba_problem()
    if reason is not None:
        for obj in objects:
            sim.fail(obj, reason)
        return
    entries: list[tuple[Any, sim.RopeSim]] = []
    owners: dict[int, str] = {}
    with fields.one_scan():  # (the scene's field objects found once for every rope)
        for obj in objects:
            data = obj.data
            if data is not None:
                # Two simulated objects writing one mesh/curve would overwrite each other.
                owner = owners.setdefault(data.as_pointer(), obj.name)
                if owner != obj.name:
                    sim.fail(obj, f"Shares its data with '{owner}', which is simulated too: "
                                  "make it single user (Object > Relations > Make Single "
                                  "User)")
                    continue
            try:
                entry = sim.ensure(obj, scene)
            except Exception as exc:  # noqa: BLE001 - one broken object must not stop others
                _fail(obj, exc)
                continue
            if entry is not None:
                entries.append((obj, entry))
    if entries and not _solver_ready(scene, entries, render):
        return
    # A subframe (motion blur) is shown from the whole frame before it, never cached
    # (blender/frame/subframes.py): whole frames stay what playback makes them.
    subframe = float(scene.frame_subframe)

    def show(run: Any, members: Any) -> int | None:
        if subframe > 0.0:
            return subframes.show(run, members, depsgraph, frame, subframe, render)
        return run.show(members, depsgraph, frame, render, keep_cache=_replaying)

    # The runs of the frame engine (blender/frame/runs.py): ropes that collide with each other,
    # batches of plain ropes, ropes alone. They all read the scene's colliders once.
    with colliders.shared_reads():
        jumps = _within_replay(frame, _each_run(scene, entries, show))
        if not jumps or (subframe > 0.0 and (render or _replaying)):
            return  # (a subframe never fills whole frames with its own inputs)
        if render or _replaying:
            # (no replay: the missing frames are simulated with inputs moving linearly)
            late = {obj.session_uid for _run, members, _need in jumps for obj, _r in members}

            def fill(run: Any, members: Any) -> None:
                if members[0][0].session_uid in late:
                    run.fill_interpolated(members, depsgraph, frame, render)
                    run.show(members, depsgraph, frame, render)

            _each_run(scene, entries, fill)
            return
    first = min(need for _run, _members, need in jumps)
    _replaying = True
    try:
        for k in range(first, frame + 1):
            scene.frame_set(k)
        if subframe > 0.0:
            scene.frame_set(frame, subframe=subframe)
    finally:
        _replaying = False


MAX_REPLAY = 10_000
"""The most frames a frame change simulates to reach a frame past a rope's cache (a jump ahead
replays the missing frames one by one). A rope farther from the frame asked for, as from a
Simulation Start far before it, stops with a message instead: Blender would not come back for
minutes (hours from the lowest Start). Playing on, or a bake, goes frame by frame."""


def _within_replay(frame: int, jumps: list[tuple[Any, Any, int]]) -> list[tuple[Any, Any, int]]:
    """``jumps`` (``_each_run``'s) whose missing frames number at most ``MAX_REPLAY``; the
    ropes of the others stop with a message, retried at the next frame change."""
    kept = []
    for run, members, need in jumps:
        if frame - need < MAX_REPLAY:
            kept.append((run, members, need))
            continue
        for obj, _rope in members:
            _fail(obj, RetryError(
                f"Frame {frame} needs {frame - need + 1:,} frames simulated before it: a frame "
                f"change simulates at most {MAX_REPLAY:,}. Play on from an earlier frame, "
                "bring the Simulation Start closer, or bake"))
    return kept


def _each_run(scene: Any, entries: list[tuple[Any, Any]],
              action: Callable[[Any, Any], int | None]) -> list[tuple[Any, Any, int]]:
    """``action(run, members)`` for every run of ``entries`` (``runs.plan``); returns (run,
    members, what it returned) where that is not None (``Run.show``: the first frame to
    simulate before this one can be shown). A batch that fails is split (its ropes go alone
    from now on, ``runs.unbatch``) and the action runs again for each of its ropes alone, so
    the one that failed stops and the others go on; any other run that fails stops."""
    from .blender.frame import runs

    found: list[tuple[Any, Any, int]] = []
    planned = runs.plan(scene, entries)
    while planned:
        split: set[int] = set()
        for run, members in planned:
            try:
                result = action(run, members)
            except Exception as exc:  # noqa: BLE001
                if run.batch:
                    runs.unbatch(members)
                    split.update(obj.session_uid for obj, _rope in members)
                else:
                    _fail_run(members, exc)
                continue
            if result is not None:
                found.append((run, members, result))
        planned = [(run, members) for run, members in runs.plan(scene, entries)
                   if members[0][0].session_uid in split] if split else []
    return found


def _solver_ready(scene: Any, entries: list[tuple[Any, Any]], render: bool) -> bool:
    """Whether the kernels of these ropes are ready (``preparation``). Interactively the
    handler waits at most ``preparation.WAIT_S`` for them; if they are still compiling, the
    ropes stay as they are, the panel and status bar show the progress, and the frame is
    played again once ready. Renders and background scripts wait as long as it takes.
    numba is imported on the preparation thread, so a numba that fails to load is reported
    here, by every rope, once the preparation is over."""
    from .blender.frame import sim
    from .blender.read import collision_objects as colliders

    # Renders and scripts wait for every kernel (no compile beside their frames); in a
    # window a rope plays once its first frame's are compiled
    whole = render or bpy.app.background and preparation.WAIT_IN_BACKGROUND
    if preparation.ready_models([entry.model for _obj, entry in entries], whole=whole):
        return True  # every frame after the first: no scan of the scene's colliders
    meshes = None
    requests = []
    for obj, entry in entries:
        s = obj.xpbd
        if s.use_collision and meshes is None:
            meshes = any(colliders.is_collider(other, render) for other in scene.objects)
        requests.append(preparation.Request(entry.model, entry.substeps,
                                            meshes=bool(s.use_collision and meshes),
                                            ground=bool(s.use_ground),
                                            air=entry.air is not None))
    wait = (None if render or (bpy.app.background and preparation.WAIT_IN_BACKGROUND)
            else preparation.WAIT_S)
    if not preparation.wait(requests, wait, whole=whole):
        preparation.defer(scene.name)
        return False
    reason = dependencies.load_numba()  # imported by the preparation: instant here
    if reason is not None:
        for obj, _entry in entries:
            sim.fail(obj, reason)
        return False
    return True


def _fail_run(members: list[tuple[Any, Any]], exc: Exception) -> None:
    """A problem while bringing a run's ``members`` to a frame: a member's own problem
    (engine.MemberError) stops that member; anything else stops every rope of the run."""
    from .blender.frame import engine

    if isinstance(exc, engine.MemberError):
        _fail(exc.obj, exc.error)
        return
    for obj, _rope in members:
        _fail(obj, exc)


def _fail(obj: Any, exc: Exception) -> None:
    """Stop simulating ``obj``: a RopeError is the user's message; anything else is a bug,
    reported once with its traceback and shown in the panel."""
    from .blender.frame import sim

    if isinstance(exc, RetryError):
        sim.fail(obj, exc)  # retried on the next frame change
        return
    if isinstance(exc, RopeError):
        sim.fail(obj, str(exc))
        return
    print(f"XPBD Rope: unexpected error while simulating '{obj.name}' (skipped):")
    traceback.print_exception(exc)
    sim.fail(obj, sim.internal_error(exc))


@persistent
def on_frame_change_post(scene: Any, depsgraph: Any = None) -> None:
    """frame_change_post handler. Never raises: Blender must keep playing."""
    try:
        update_scene(scene, depsgraph)
    except Exception:  # noqa: BLE001 - a bug here must not stop playback or rendering
        print("XPBD Rope: unexpected error in the frame handler (simulation skipped):")
        traceback.print_exc()


@persistent
def on_load_pre(*_args: Any) -> None:
    """A new file is loading: forget all simulations (they rebuild from the stored rest)."""
    _clear_simulations()


@persistent
def on_load_post(*_args: Any) -> None:
    """A file was loaded: if it has ropes, start preparing the solver now (a thread), so
    that it is ready, or nearly, when playback starts."""
    try:
        objects: Any = bpy.data.objects
        if any(obj.xpbd.enabled for obj in objects):
            preparation.start_default()
    except Exception:  # noqa: BLE001 - never stop a file from loading
        traceback.print_exc()


def _clear_simulations() -> None:
    sim = sys.modules.get(_SIM)
    if sim is not None:  # else none was ever made, and importing it would load numpy
        sim.clear()
    runs = sys.modules.get(_RUNS)
    if runs is not None:
        runs.clear()
    readouts = sys.modules.get(_READOUTS)
    if readouts is not None:
        readouts.clear()
    colliders = sys.modules.get(_COLLIDERS)
    if colliders is not None:
        colliders.forget()


HANDLERS = (
    (bpy.app.handlers.frame_change_post, on_frame_change_post),
    (bpy.app.handlers.load_pre, on_load_pre),
    (bpy.app.handlers.load_post, on_load_post),
)


def _ours(function: Any, reference: Any) -> bool:
    # Matching by module and name also removes a handler left by an earlier import of this
    # module (a reloaded add-on), whose function object differs.
    return function is reference or (
        getattr(function, "__module__", None) == reference.__module__
        and getattr(function, "__name__", None) == reference.__name__)


def register() -> None:
    for handler_list, function in HANDLERS:
        for existing in [f for f in handler_list if _ours(f, function)]:
            handler_list.remove(existing)
        handler_list.append(function)


def unregister() -> None:
    for handler_list, function in HANDLERS:
        for existing in [f for f in handler_list if _ours(f, function)]:
            handler_list.remove(existing)
    _clear_simulations()
