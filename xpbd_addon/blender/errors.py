"""``RopeError``, in a module of its own that imports nothing.

The operators and handlers catch it in ``except`` clauses, so they need the class at import
time; keeping it out of ``geometry`` (numpy) lets ``import xpbd_addon`` and ``register()`` run
without numpy, which Blender 4.2 does not load at start (issue 5: start-up budget).
"""

from __future__ import annotations


class RopeError(Exception):
    """Why an object cannot be simulated, worded for the user (shown in the panel)."""


class ShapeError(RopeError):
    """The current shape cannot be stored (a NaN or infinite point). Nothing in the settings
    changes when the user repairs the point, so such a failure is retried on every frame
    change instead of waiting for a new settings key: the message goes once the point is
    fixed."""
