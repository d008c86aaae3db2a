"""``RopeError``, in a module of its own that imports nothing.

The operators and handlers catch it in ``except`` clauses, so they need the class at import
time; keeping it out of ``geometry`` (numpy) lets ``import xpbd_addon`` and ``register()`` run
without numpy, which Blender 4.2 does not load at start (the start-up budget,
docs/install.md).
"""

from __future__ import annotations


class RopeError(Exception):
    """Why an object cannot be simulated, worded for the user (shown in the panel)."""


class RetryError(RopeError):
    """A problem whose cause nothing in the settings key reflects (a point or a pin target
    that is NaN): such a failure is retried on every frame change instead of waiting for a
    new settings key, so the message goes once the cause is fixed."""


class ShapeError(RetryError):
    """The current shape cannot be stored (a NaN or infinite point)."""
