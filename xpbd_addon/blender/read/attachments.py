"""Attachments in the simulation: which points each one holds, where its target is, and its
state from frame to frame (``Object.xpbd.attachments``; their list and operators are
attachment_ui.py at the package's top).

While an attachment is on, its points are pinned (kinematic) for the frame and move to
``target(frame) @ offset``, or, with a compliance, are pulled there by springs
(``core.soft_pins``). ``offset`` is where the points were, in the target's space, at the
frame the attachment turned on (their positions of the frame before, seen from the target
at this frame), so a hand grabs the rope where it is and the points do not jump. When it
turns off they are free again and keep the velocity they had (the rope is thrown).

The state of every attachment (on, its offsets, broken) is part of each cached frame
(``Hold``), so a frame reached in any order equals playback.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import RetryError
from ..frame.checks import MAX_COORDINATE, matrix_problem
from . import pins
from .geometry import Layout, RopeError


@dataclass(frozen=True)
class Spec:
    """One attachment as the simulation uses it (fixed while the simulation lives)."""

    index: int
    """Its index in ``Object.xpbd.attachments``"""
    particles: np.ndarray
    """The particles it holds, int64"""
    target: str
    """Name of the target object ("" = none: the attachment never holds)"""
    subtarget: str
    """Bone name of an armature target, or ""."""
    break_force: float
    """Force [N] above which it lets go for the rest of the run; 0 = never"""
    compliance: float = 0.0
    """The springs' compliance [m/N]; 0 = the points are pinned"""


@dataclass(frozen=True)
class Hold:
    """An attachment's state at one frame."""

    offsets: np.ndarray | None
    """The held points in the target's space [m], shape [k, 3]; None = not holding"""
    broken: bool = False
    """It broke (force above ``break_force``) and holds nothing for the rest of the run"""
    targets: np.ndarray | None = None
    """Springs: where the held points' targets were at this frame [m] (world), the start of
    the next frame's target motion"""


FREE = Hold(None)
"""The state of an attachment that is off."""


def key(settings: Any) -> tuple:
    """What of the attachments the simulation is built from (part of ``sim.settings_key``:
    changing it restarts the simulation). ``enabled`` is read at every frame instead."""
    return tuple((a.target.name if a.target is not None else "", a.subtarget, a.vertex_group,
                  a.point, a.spline, a.compliance, a.break_force)
                 for a in settings.attachments)


def _curve_particle(layout: Layout, spline: int, point: int, number: int) -> int:
    if not 0 <= spline < len(layout.splines):
        raise RopeError(f"Attachment {number}: spline {spline} does not exist (the curve has "
                        f"{len(layout.splines)})")
    start, n, _bezier = layout.splines[spline]
    index = point if point >= 0 else n + point
    if not 0 <= index < n:
        raise RopeError(f"Attachment {number}: point {point} does not exist (spline {spline} "
                        f"has {n} points)")
    return start + index


def specs(obj: Any, layout: Layout) -> tuple[Spec, ...]:
    """The attachments of ``obj`` with their particles; RopeError naming the attachment if
    its vertex group, spline or point does not exist, or a number is not one."""
    found = []
    for number, item in enumerate(obj.xpbd.attachments, start=1):
        if not np.isfinite(item.compliance) or item.compliance < 0.0:
            raise RopeError(f"Attachment {number}: Compliance must be a number >= 0 m/N (got "
                            f"{item.compliance})")
        if not np.isfinite(item.break_force) or item.break_force < 0.0:
            raise RopeError(f"Attachment {number}: Break Force must be a number >= 0 N (got "
                            f"{item.break_force})")
        if layout.kind == "MESH":
            if not item.vertex_group:
                raise RopeError(f"Attachment {number}: choose the vertex group it holds")
            weights = pins.mesh_group_weights(obj, item.vertex_group)
            particles = np.flatnonzero(weights > 0.0)
        else:
            particles = np.array([_curve_particle(layout, item.spline, item.point, number)])
        found.append(Spec(number - 1, particles.astype(np.int64),
                          item.target.name if item.target is not None else "",
                          item.subtarget, float(item.break_force), float(item.compliance)))
    return tuple(found)


def target_matrix(spec: Spec, depsgraph: Any, on: bool = True) -> np.ndarray | None:
    """The world matrix [4, 4] of the attachment's target (bone: the pose bone's) at the
    depsgraph's frame; None if the target object is gone. RetryError if the attachment is
    ``on`` and the matrix cannot be inverted (a zero scale)."""
    import bpy

    obj = bpy.data.objects.get(spec.target) if spec.target else None
    if obj is None:
        return None
    evaluated = obj.evaluated_get(depsgraph)
    matrix = np.array(evaluated.matrix_world, dtype=np.float64)
    if spec.subtarget and evaluated.type == "ARMATURE" and evaluated.pose is not None:
        bone = evaluated.pose.bones.get(spec.subtarget)
        if bone is not None:
            matrix = matrix @ np.array(bone.matrix, dtype=np.float64)
    if on and matrix_problem(matrix, obj.name) is not None:
        # (the held points' offsets are taken through its inverse) retried every frame,
        # as a pin target's NaN: the target may be scaled back
        raise RetryError(f"The attachment target '{obj.name}' has a scale of zero (or is "
                         "flattened along some direction, or not finite): the points it "
                         "holds cannot follow it")
    if on and np.abs(matrix[:3, 3]).max() > MAX_COORDINATE:
        # (an offset taken from there has no precision left: the point would jump)
        raise RetryError(f"The attachment target '{obj.name}' is more than "
                         f"{MAX_COORDINATE:g} m from the world origin: single-precision "
                         "coordinates have no precision left there")
    return matrix


def step_holds(found: tuple[Spec, ...], previous: tuple[Hold, ...], enabled: Sequence[bool],
               matrices: Sequence[np.ndarray | None], x: np.ndarray) -> tuple[Hold, ...]:
    """Each attachment's state for the next frame: on (keeping its offsets, or taking them
    from the positions ``x`` [m] of the frame before if it just turned on), off, or broken."""
    holds = []
    for spec, before, on, matrix in zip(found, previous, enabled, matrices, strict=True):
        if before.broken:
            holds.append(before)
        elif not on or matrix is None:
            holds.append(FREE)
        elif before.offsets is not None:
            holds.append(before)
        else:
            inverse = pins.affine_inverse(matrix)
            holds.append(Hold(pins.transform(inverse, x[spec.particles])))
    return tuple(holds)


def held(found: tuple[Spec, ...], holds: tuple[Hold, ...],
         matrices: Sequence[np.ndarray | None]) -> tuple[np.ndarray, np.ndarray]:
    """The particles the rigid attachments hold at this frame and their targets [m] (world),
    shapes [P] and [P, 3]."""
    ids, targets = [], []
    for spec, hold, matrix in zip(found, holds, matrices, strict=True):
        if hold.offsets is not None and matrix is not None and spec.compliance == 0.0:
            ids.append(spec.particles)
            targets.append(pins.transform(matrix, hold.offsets))
    if not ids:
        return np.zeros(0, dtype=np.int64), np.zeros((0, 3))
    return np.concatenate(ids), np.concatenate(targets)


def springs(found: tuple[Spec, ...], holds: tuple[Hold, ...],
            matrices: Sequence[np.ndarray | None]) -> tuple[tuple[Hold, ...], list[tuple]]:
    """The spring attachments at this frame: ``holds`` with their targets set, and for each
    spring attachment holding (particles, start targets, end targets [m], compliance)."""
    out: list[Hold] = []
    pulls: list[tuple] = []
    for spec, hold, matrix in zip(found, holds, matrices, strict=True):
        if hold.offsets is None or matrix is None or spec.compliance == 0.0:
            out.append(hold)
            continue
        end = pins.transform(matrix, hold.offsets)
        start = end if hold.targets is None else hold.targets
        pulls.append((spec.particles, start, end, spec.compliance))
        out.append(Hold(hold.offsets, hold.broken, end))
    return tuple(out), pulls


def forces(x: np.ndarray, edges: np.ndarray, tension: np.ndarray,
           particles: np.ndarray) -> float:
    """The force [N] the rope pulls a set of held ``particles`` with: the sum over the
    segments leaving them of tension [N] times the segment's direction."""
    inside = np.zeros(len(x), dtype=bool)
    inside[particles] = True
    a, b = edges[:, 0], edges[:, 1]
    crossing = inside[a] != inside[b]
    if not crossing.any():
        return 0.0
    held_end = np.where(inside[a[crossing]], a[crossing], b[crossing])
    free_end = np.where(inside[a[crossing]], b[crossing], a[crossing])
    d = x[free_end] - x[held_end]
    length = np.maximum(np.linalg.norm(d, axis=1), 1e-12)
    pull = (tension[crossing] / length)[:, None] * d
    return float(np.linalg.norm(pull.sum(axis=0)))


def break_holds(found: tuple[Spec, ...], holds: tuple[Hold, ...], x: np.ndarray,
                edges: np.ndarray, tension: np.ndarray) -> tuple[Hold, ...]:
    """``holds`` with the attachments whose force passed their ``break_force`` broken: the
    pull of the rope on rigidly held points, the springs' pull on softly held ones."""
    out = []
    for spec, hold in zip(found, holds, strict=True):
        if hold.offsets is not None and spec.compliance > 0.0 and hold.targets is not None:
            pull = float(np.linalg.norm((hold.targets - x[spec.particles]).sum(axis=0))
                         / spec.compliance)
        elif hold.offsets is not None:
            pull = forces(x, edges, tension, spec.particles)
        else:
            pull = 0.0
        if spec.break_force > 0.0 and pull > spec.break_force:
            out.append(Hold(None, broken=True))
        else:
            out.append(hold)
    return tuple(out)
