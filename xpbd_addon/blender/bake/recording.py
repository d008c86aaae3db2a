"""What a bake records of one object, frame by frame (``job.BakeJob``), for the writers
(keys.py, bones.py, point_cache.py) to turn into animation."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from ..frame import sim


@dataclass
class Recording:
    """One object being baked and what was recorded for it."""

    obj: Any
    rope: sim.RopeSim
    first: int
    """First baked frame [frame] (the rest shape, as at the simulation's start frame)"""
    last: int
    """Last baked frame [frame]"""
    extra: int = 0
    """Frames simulated past ``last`` for a loop bake (``bake_loop``), cut off before writing"""
    local: list = field(default_factory=list)
    """Per frame: object-space positions [m] as playback writes them, float32 [N, 3]"""
    world: list = field(default_factory=list)
    """Per frame: world positions [m] of all particles, float64 [N, 3] (bones, cache)"""
    normals: list = field(default_factory=list)
    """Per frame, for a rod baked to bones: its material normal at every particle, world,
    float64 [N, 3] (the bones' roll); empty for a plain rope"""
    tilt: list = field(default_factory=list)
    """Per frame, for a curve rod baked to keyframes: every control point's tilt [rad] (N,)
    as the live simulation writes it; empty otherwise"""
    rig_world: list = field(default_factory=list)
    """Per frame: world matrix of ``bake.bone_armature`` [4, 4] (bones into an armature)"""
    parent_pose: list = field(default_factory=list)
    """Per frame: pose matrix of ``bake.bone_parent``, armature space [4, 4]"""
    previous: sim.Frame | None = None
    tear_frames: np.ndarray | None = None
    """The frame each segment tore at [frame] (tear.NEVER if not), for a rope with a Tear
    Force: written into the baked rope so that the tears play without the add-on"""
    always_pinned: np.ndarray | None = None
    """Particles pinned by the settings on every recorded frame [N] (keyed pins, such as an
    animated ``pin_first``, are pinned on some frames only): these are not keyed"""

    def frames(self) -> np.ndarray:
        return np.arange(self.first, self.last + 1, dtype=np.float64)
