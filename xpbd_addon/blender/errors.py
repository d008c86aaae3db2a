"""``RopeError``, in a module of its own that imports nothing.

The operators and handlers catch it in ``except`` clauses, so they need the class at import
time; keeping it out of ``geometry`` (numpy) lets ``import xpbd_addon`` and ``register()`` run
without numpy, which Blender 4.2 does not load at start (issue 5: start-up budget).
"""

from __future__ import annotations


class RopeError(Exception):
    """Why an object cannot be simulated, worded for the user (shown in the panel)."""
