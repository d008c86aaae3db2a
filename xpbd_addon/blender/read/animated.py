"""Settings that change while the rope plays: keyframes and drivers on ``Object.xpbd``.

A keyframed or driven setting is read at every frame from the evaluated object (so NLA,
drivers and the Graph Editor all count) and the frame is simulated with it. The per-frame cache
stays exact:

- which settings are animated is part of the simulation's key (``sim.settings_key``):
  keying a setting for the first time, or removing its F-Curve, restarts the simulation;
- every animated channel is stamped on each cached frame (``stamp``, kept in
  ``Frame.channels``): an F-Curve's value at that frame, a driver's value read there;
- when an F-Curve changes (``signature``), ``first_stale`` evaluates the F-Curves at every
  cached frame and the cache is cut at the first frame whose stamp differs, so editing a
  keyframe invalidates exactly the frames after it;
- a driver cannot be evaluated at another frame: a driven channel is compared when its frame
  is shown again (``Run.show``), and the cache is cut there if the value moved.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..bake import action_compat

PREFIX = "xpbd."
"""Data paths of ``Object.xpbd`` settings, relative to the Object."""


@dataclass(frozen=True)
class Channel:
    """One animated value of ``Object.xpbd``: an F-Curve's or a driver's data path and index."""

    path: str
    """RNA path relative to the Object, e.g. 'xpbd.compliance', 'xpbd.attachments[0].enabled'"""
    index: int
    """Array index (0 for plain values)"""
    driven: bool
    """Set by a driver (evaluated only at the current frame) rather than an F-Curve"""

    @property
    def setting(self) -> str:
        """The path relative to ``Object.xpbd`` ('compliance', 'attachments[0].enabled')."""
        return self.path[len(PREFIX):]


def channels(obj: Any) -> tuple[Channel, ...]:
    """The animated channels of ``obj.xpbd`` (F-Curves of its Action, then drivers), in a
    fixed order. A driver wins over an F-Curve of the same channel, as in Blender."""
    found: dict[tuple[str, int], bool] = {}
    for fcurve in action_compat.fcurves_of(obj):
        if fcurve.data_path.startswith(PREFIX) and not fcurve.mute:
            found[(fcurve.data_path, fcurve.array_index)] = False
    anim = obj.animation_data
    if anim is not None:
        for driver in anim.drivers:
            if driver.data_path.startswith(PREFIX) and not driver.mute:
                found[(driver.data_path, driver.array_index)] = True
    return tuple(Channel(path, index, driven) for (path, index), driven in sorted(found.items()))


def animated_settings(found: tuple[Channel, ...]) -> frozenset[str]:
    """The top-level ``Object.xpbd`` settings among ``found`` ('compliance', 'attachments')."""
    return frozenset(c.setting.split("[")[0].split(".")[0] for c in found)


def _value(evaluated: Any, channel: Channel) -> float:
    value = evaluated.path_resolve(channel.path)
    if hasattr(value, "__len__"):
        value = value[channel.index]
    return float(value)


def stamp(obj: Any, evaluated: Any, found: tuple[Channel, ...], frame: int) -> np.ndarray:
    """What the channels of ``found`` are made of at ``frame``, float32: an F-Curve's value
    there (``first_stale`` compares it with a new evaluation), a driver's value on the
    evaluated object (``driven_changed`` compares it with a new reading)."""
    fcurves = _fcurves(obj, found)
    values = np.empty(len(found), dtype=np.float32)
    for k, (channel, fcurve) in enumerate(zip(found, fcurves, strict=True)):
        if fcurve is not None:
            values[k] = fcurve.evaluate(frame)
        else:
            values[k] = _value(evaluated, channel)
    return values


def driven_changed(evaluated: Any, found: tuple[Channel, ...], stored: np.ndarray | None
                   ) -> bool:
    """Whether a driven channel now reads other than ``stored`` (a frame's stamp)."""
    if stored is None or len(stored) != len(found):
        return True
    return any(c.driven and np.float32(_value(evaluated, c)) != stored[k]
               for k, c in enumerate(found))


def _fcurves(obj: Any, found: tuple[Channel, ...]) -> list[Any]:
    """The F-Curve of each channel of ``found`` (None for driven ones)."""
    by_key = {(fc.data_path, fc.array_index): fc for fc in action_compat.fcurves_of(obj)}
    return [None if c.driven else by_key.get((c.path, c.index)) for c in found]


def signature(obj: Any, found: tuple[Channel, ...]) -> tuple:
    """What the F-Curves of ``found`` evaluate from (keys, handles, interpolation,
    extrapolation, modifiers): when it is unchanged, no cached frame can be stale."""
    return tuple(None if fcurve is None else _fcurve_signature(fcurve)
                 for fcurve in _fcurves(obj, found))


def keys_signature(obj: Any) -> tuple:
    """``signature`` of every F-Curve of ``obj``'s Action and how many drivers it has (a
    force field's keyed strength, its keyed motion: read/fields.py, ``static_key``)."""
    anim = obj.animation_data
    return (tuple((f.data_path, f.array_index, _fcurve_signature(f))
                  for f in action_compat.fcurves_of(obj)),
            0 if anim is None else len(anim.drivers))


def _fcurve_signature(fcurve: Any) -> tuple:
    """What one F-Curve evaluates from (keys, handles, interpolation, extrapolation,
    modifiers)."""
    points = fcurve.keyframe_points
    data = np.empty(6 * len(points), dtype=np.float32)
    if len(points):
        for k, name in enumerate(("co", "handle_left", "handle_right")):
            chunk = np.empty(2 * len(points), dtype=np.float32)
            points.foreach_get(name, chunk)
            data[2 * k * len(points):2 * (k + 1) * len(points)] = chunk
    kinds = tuple(p.interpolation for p in points)
    return (data.tobytes(), kinds, fcurve.extrapolation, len(fcurve.modifiers))


def first_stale(obj: Any, found: tuple[Channel, ...], frames: dict[int, Any],
                after: int) -> int | None:
    """The first cached frame after ``after`` whose stamp (``Frame.channels``) differs from
    what the F-Curves give there now, or None."""
    fcurves = _fcurves(obj, found)
    for frame in sorted(k for k in frames if k > after):
        stored = frames[frame].channels
        if stored is None or len(stored) != len(found):
            return frame
        for k, fcurve in enumerate(fcurves):
            if fcurve is not None and np.float32(fcurve.evaluate(frame)) != stored[k]:
                return frame
    return None
