"""Loop bake (``Object.xpbd.bake.loop``): a bake whose last frame flows into its first, for a
rope on a cyclic animation (a tail on a walk cycle, a cable on a turning wheel), whatever
the bake target.

How. With P = last - first + 1 frames in the bake range and K = ``loop_frames``, the job
simulates K + 1 frames past the range (``extra_frames``; the pins follow the cyclic
animation there), then ``close`` fades the first K baked frames from the simulation one
period later to their own:

    O(first + j) = (1 - w_j) S(first + j + P) + w_j S(first + j),   w_j = s(j / K)

(S the simulated positions, O the baked ones). So the first frame is S(last + 1): from the
last frame to the first the rope moves exactly as the simulation moved from ``last`` to
``last + 1``; the fade spreads what the rope had not yet settled into the cycle (the
difference between S(f) and S(f + P)) over K frames instead of one jump at the seam. s is
smootherstep, 6 t^5 - 15 t^4 + 10 t^3: its first and second derivatives vanish at 0, so
the fade adds no velocity and no acceleration at the seam, and ramps in over the K frames
(with smoothstep, 3 t^2 - 2 t^3, the velocity at the seam was off by 4.4 % of its range at
K = 12 in ``tests/blender/test_bake_loop.py``'s scene). The
animation must itself be cyclic (an F-Curve Cycles modifier, or keys that repeat with
period P): the frames past the range are simulated with it.

The seam, reported (``Seam``): the jump in position at the seam, max over points
|O(first) - S(last + 1)|, and in velocity, the largest difference between the loop's
velocity and the simulation's across the seam (frames last -> first and first -> first + 1),
each as a fraction of the motion's range (the largest extent of a point's position, or
velocity, over the loop). numpy only (no bpy).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

PIN_TOLERANCE = 1e-4
"""[m] Pins further apart than this one frame after the range than on its first frame: the
animation does not repeat, and the bake's report says so."""


@dataclass(frozen=True)
class Seam:
    """How seamless a loop bake is (fractions of the motion's range, 0.01 = 1 %)."""

    position: float
    """Jump in position at the seam over the largest extent of a point's motion"""
    velocity: float
    """Jump in velocity across the seam over the largest extent of a point's velocity"""
    sharpness: float
    """The seam's largest change of velocity (second difference) over the largest one
    within the loop: at most about 1 when the seam is no sharper than any other frame"""
    pins: float = 0.0
    """How far [m] the pinned points are, one frame after the range, from where they are on
    its first frame: 0 when the animation repeats after the range, as a loop needs"""


def extra_frames(settings: Any) -> int:
    """Frames simulated past the bake range [frame]: K + 1 for a loop bake (the fade, and
    one more for the velocity after the seam), 0 otherwise. ``settings``: ``obj.xpbd.bake``."""
    return int(settings.loop_frames) + 1 if settings.loop else 0


def weights(count: int) -> np.ndarray:
    """w_j = smootherstep(j / count), j = 0 .. count - 1: the share of a frame's own
    simulation in the first ``count`` frames of a loop (0 at the seam, rising with no jump
    in its first or second derivative at either end)."""
    t = np.arange(count, dtype=np.float64) / count
    return t * t * t * (10.0 + t * (6.0 * t - 15.0))


def fade(frames: np.ndarray, period: int, count: int) -> np.ndarray:
    """The loop (``period`` frames, [P, ...]) of ``frames`` [P + count + 1, ...] simulated
    one frame after another, its first ``count`` frames faded from one period later."""
    out = np.array(frames[:period], dtype=np.float64)
    w = weights(count).reshape((-1,) + (1,) * (frames.ndim - 1))
    out[:count] = (1.0 - w) * frames[period:period + count] + w * frames[:count]
    return out


def seam(loop: np.ndarray, frames: np.ndarray, frame_time: float) -> Seam:
    """The seam of ``loop`` [P, N, 3] (world positions [m]) against ``frames`` [>= P + 2, N,
    3], what was simulated; ``frame_time`` [s]."""
    period = len(loop)
    after = frames[period], frames[period + 1]  # S(last + 1), S(last + 2)
    position = float(np.linalg.norm(loop[0] - after[0], axis=-1).max())
    crossing = (loop[0] - loop[-1]) - (after[0] - frames[period - 1])
    leaving = (loop[1] - loop[0]) - (after[1] - after[0])
    velocity = float(max(np.linalg.norm(crossing, axis=-1).max(),
                         np.linalg.norm(leaving, axis=-1).max())) / frame_time
    cyclic = np.concatenate([loop, loop[:2]])
    speed = np.diff(cyclic, axis=0) / frame_time  # [P + 1]: velocity k -> k + 1, cyclic
    position_range = float(np.linalg.norm(np.ptp(loop, axis=0), axis=-1).max())
    velocity_range = float(np.linalg.norm(np.ptp(speed[:period], axis=0), axis=-1).max())
    change = np.linalg.norm(np.diff(speed, axis=0), axis=-1).max(axis=-1)  # at k + 1
    seam_change = max(float(change[period - 1]), float(change[period - 2]))  # at 0, at P-1
    inside = float(change[:period - 2].max()) if period > 2 else 0.0
    return Seam(position=position / max(position_range, 1e-12),
                velocity=velocity / max(velocity_range, 1e-12),
                sharpness=seam_change / max(inside, 1e-12))


def close(record: Any, frame_time: float) -> Seam:
    """Turn a loop bake's recording (``bake.Recording`` with ``extra`` frames past its range)
    into the loop: its per-frame lists (object-space and world positions, a rod's normals, the
    character's matrices) cut to the range, the first ``loop_frames`` faded. Returns the
    seam, measured in world space, and how far the pins are from repeating."""
    period = record.last - record.first + 1
    count = record.extra - 1
    world = np.stack(record.world)
    loop = fade(world, period, count)
    measured = seam(loop, world, frame_time)
    pinned = record.always_pinned
    if pinned is not None and pinned.any():
        apart = np.linalg.norm(world[period][pinned] - world[0][pinned], axis=-1).max()
        measured = replace(measured, pins=float(apart))
    local = fade(np.stack(record.local), period, count).astype(np.float32)
    record.local = list(local)
    record.world = list(loop)
    if record.normals:  # a rod's roll, faded as the positions are (then unit again)
        normals = fade(np.stack(record.normals), period, count)
        record.normals = list(normals / np.maximum(
            np.linalg.norm(normals, axis=-1, keepdims=True), 1e-12))
    if record.tilt:  # a curve rod's keyed tilt, unwrapped in time, then faded
        record.tilt = list(fade(np.unwrap(np.stack(record.tilt), axis=0), period, count))
    record.rig_world = record.rig_world[:period]
    record.parent_pose = record.parent_pose[:period]
    return measured
