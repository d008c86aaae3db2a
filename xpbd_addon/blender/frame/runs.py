"""The runs of a scene: which rope objects the frame engine (``engine.Run``) steps together.

Ropes that collide with each other are one run (``group.partition``); plain ropes that agree
on the Model-wide settings are one run too, for speed (``group.batches``); every other rope is
a run alone. Runs are kept from frame to frame while their members' simulations are the
same (``plan``).
"""

from __future__ import annotations

from typing import Any

from ..read.geometry import RopeError
from . import group
from .engine import Members, Run

RUNS: dict[tuple[int, ...], Run] = {}
"""Live runs by their members' session_uids (in member order)."""


SOLO: dict[int, Any] = {}
"""Ropes taken out of batches after a batch failed (``unbatch``), session_uid -> the
``sim.RopeSim`` that failed: each is then simulated alone, so that one rope's failure does
not stop the others, until its simulation is rebuilt (a changed setting, Reset)."""


def unbatch(members: Members) -> None:
    """The members of a batch that failed are simulated alone from now on."""
    SOLO.update((obj.session_uid, rope) for obj, rope in members)


def make_runs(entries: Members, scene_name: str,
              kept: dict[tuple[int, ...], Run] | None = None, *, batch: bool = True
              ) -> tuple[list[tuple[Run, Members]], dict[int, tuple[str, ...]]]:
    """The runs of ``entries``: the groups of ropes colliding with each other
    (``group.partition``, ordered by object name), with ``batch`` the batches of the other
    ropes (``group.batches``, but those in ``SOLO``), and every other rope alone. A run of
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
    if batch:
        free = [(obj, rope) for obj, rope in singles if SOLO.get(obj.session_uid) is not rope]
        for members in group.batches(free):
            runs.append((_kept_or_new(members, scene_name, kept, collide=False), members))
            grouped.update(obj.session_uid for obj, _rope in members)
        singles = [(obj, rope) for obj, rope in singles if obj.session_uid not in grouped]
    runs += [(_kept_or_new([member], scene_name, kept), [member]) for member in singles]
    return runs, notes


def _kept_or_new(members: Members, scene_name: str,
                 kept: dict[tuple[int, ...], Run] | None, *, collide: bool = True) -> Run:
    uids = tuple(obj.session_uid for obj, _rope in members)
    run = kept.get(uids) if kept is not None else None
    if (run is None or run.scene_name != scene_name or run.batch == collide
            or any(a is not b for a, (_o, b) in zip(run.ropes, members, strict=True))):
        run = Run(members, scene_name, collide=collide)
    return run


def plan(scene: Any, entries: Members) -> list[tuple[Run, Members]]:
    """The runs that bring the simulated objects of ``scene`` (with their simulations) to a
    frame, kept from the last call while their members' simulations are the same."""
    runs, notes = make_runs(entries, scene.name, RUNS)
    prune(scene)
    for run, members in runs:
        RUNS[tuple(obj.session_uid for obj, _rope in members)] = run
    for obj, rope in entries:
        rope.track.group_notes = notes.get(obj.session_uid, ())
    return runs


def prune(scene: Any) -> None:
    """Forget the runs of ``scene`` (``plan`` puts back the live ones)."""
    for uids in [u for u, r in RUNS.items() if r.scene_name == scene.name]:
        del RUNS[uids]


def clear() -> None:
    """Forget every run (new file loaded, add-on unregistered)."""
    RUNS.clear()
    SOLO.clear()
