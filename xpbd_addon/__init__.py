"""XPBD Rope: ropes, cables, chains and tails simulated with XPBD in Blender.

This module only wires the parts together: ``register()`` calls each module's ``register()``
in order and ``unregister()`` undoes them in reverse. bpy is imported by those modules, not
here, so ``import xpbd_addon`` (and ``xpbd_addon.core``) works outside Blender.
"""

from __future__ import annotations

import importlib

_MODULES = ("properties", "operators", "attachment_ui", "bake_operators", "export_operators",
            "presets", "panels", "handlers", "preparation")
"""Registration order: the settings first (everything else reads Object.xpbd)."""


def _modules() -> list:
    return [importlib.import_module(f".{name}", __name__) for name in _MODULES]


def register() -> None:
    from .blender import environment

    environment.configure_numba_cache(__name__)
    for module in _modules():
        module.register()


def unregister() -> None:
    for module in reversed(_modules()):
        module.unregister()
