"""What can change a rope while it plays, read at every frame: keyframed or driven settings
(animated.py), pins switched on and off (``pin_first`` / ``pin_last``) and attachments
(attachments.py). ``Changes`` is fixed while a simulation lives (which settings are animated, the
attachments' points); what one frame is made with is read by inputs.py.

From a frame's ``inputs.Inputs`` a rope takes the Model of that frame
(``RopeSim.model_for``): the Model is static, so a frame whose settings or held points
differ from the last frame's gets another Model, and the State simply goes on with it
(positions and velocities are all it carries).
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from .. import schema
from ..read import animated, fields
from ..read import attachments as attach
from ..read.geometry import Layout

ANIMATABLE = frozenset(s.name for s in schema.SETTINGS if s.animatable)
"""The settings read at every frame when they are keyframed or driven."""


class Changes:
    __slots__ = ("channels", "names", "attachments")

    """The parts of one rope's simulation that can change from frame to frame."""

    def __init__(self, obj: Any, layout: Layout) -> None:
        self.channels = animated.channels(obj)
        """Every animated channel of ``Object.xpbd`` (stamped on each frame)"""
        self.names = tuple(sorted(animated.animated_settings(self.channels) & ANIMATABLE))
        """The settings read at every frame (animated and animatable), in a fixed order"""
        self.attachments = attach.specs(obj, layout)
        """The attachments and the particles each holds"""

    def values(self, evaluated: Any) -> tuple:
        """The values of ``names`` on the evaluated object (this frame's)."""
        settings = evaluated.xpbd
        return tuple(getattr(settings, name) for name in self.names)

    def enabled(self, evaluated: Any) -> list[bool]:
        """Whether each attachment is on at this frame (its keyframes, drivers)."""
        items = evaluated.xpbd.attachments
        if len(items) != len(evaluated.original.xpbd.attachments):
            # An item added since the object was last evaluated (adding one does not tag
            # the object): the original holds this frame's animated values as well.
            items = evaluated.original.xpbd.attachments
        return [bool(items[spec.index].enabled) for spec in self.attachments]


def settings_with(snapshot: SimpleNamespace, names: tuple[str, ...], values: tuple
                  ) -> SimpleNamespace:
    """``snapshot`` (``sim.settings_snapshot``) with ``names`` set to ``values``."""
    if not names:
        return snapshot
    return SimpleNamespace(**{**vars(snapshot), **dict(zip(names, values, strict=True))})


def key(obj: Any) -> tuple:
    """The settings part of the simulation's key (``sim.settings_key``): the values of the
    settings (``schema.cache_values``) except the animated ones, which are read at every
    frame; which channels are animated (keying a setting for the first time restarts); the
    attachments' fixed fields."""
    settings = obj.xpbd
    channels = animated.channels(obj)
    skip = animated.animated_settings(channels) & ANIMATABLE
    return (schema.cache_values(settings, skip), tuple((c.path, c.index, c.driven)
                                                       for c in channels),
            attach.key(settings))


def fields_key(obj: Any, scene: Any) -> tuple | None:
    """The force fields' part of ``sim.settings_key`` (``fields.static_key``): None while
    fields are ignored (a Field Weight of 0 that is not keyed), so that a scene's fields
    change nothing then."""
    settings = obj.xpbd
    if settings.field_weight == 0.0 and "field_weight" not in animated.animated_settings(
            animated.channels(obj)):
        return None
    return fields.static_key(obj, scene, settings.effector_collection)
