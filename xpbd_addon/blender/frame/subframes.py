"""Subframes: ``scene.frame_set(f, subframe=s)`` with 0 < s < 1, as motion blur renders ask
for.

A subframe is shown, never kept: it is one step of ``s`` frame lengths from the cached whole
frame ``f`` before it, with the pins, attachments and colliders evaluated at ``f + s``, made
on a State of its own (``engine.Run.step`` with ``dt``), and written into the rope's data
without touching the cache, the run's State or its colliders. So a render with motion blur
leaves every whole frame as playback makes it, bit for bit.

The whole frame ``f`` has to be cached first. Interactively the handler replays the missing
whole frames and then sets the subframe again (handlers.py); while rendering it cannot
change the frame, and a subframe whose whole frame is missing leaves the rope as it is (a
render evaluates the whole frame first, which fills the frames up to it).
"""

from __future__ import annotations

from typing import Any

from . import engine


def show(run: engine.Run, members: engine.Members, depsgraph: Any, frame: int,
         fraction: float, render: bool) -> int | None:
    """Bring the ``members`` of ``run`` to ``frame + fraction`` (0 < fraction < 1). Returns
    None when shown, or the first whole frame to simulate before it can be (as
    ``Run.show``)."""
    if frame < run.frame_start:  # before the start: the rest shape, as the whole frames
        engine.each_member(members, lambda obj, rope: rope.write_rest(obj))
        return None
    whole = min(frame, run.frame_end)
    if not all(whole in rope.track.cache for rope in run.ropes):
        last = run.last_cached()
        return run.frame_start if last is None else min(last + 1, whole)
    matrices = engine.worlds(members, depsgraph)
    previous = [rope.track.cache[whole] for rope in run.ropes]
    if frame < run.frame_end:
        inputs = run.inputs_of(members, depsgraph, render, frame)
        snapshot = run.read_colliders(members, depsgraph, run.colliders)
        # The colliders at the whole frame where they are known (kept for keyed settings,
        # or the newest frame's); else they are taken as still over the fraction.
        start = run.snapshots.get(whole)
        if start is None:
            start = run.colliders if whole == run.last_cached() else snapshot
        shown = run.step(previous, inputs, snapshot, start=start, dt=fraction * run.dt)
    else:
        shown = previous  # past the end: the end frame's state is held
    for (obj, rope), world, state in zip(members, matrices, shown, strict=True):
        try:
            rope.write(obj, world, state)
            rope.show_tears(obj, whole)
        except Exception as exc:  # noqa: BLE001 - this member fails, the others wrote
            raise engine.MemberError(obj, exc) from exc
    return None
