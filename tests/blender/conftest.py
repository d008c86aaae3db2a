"""Real Blender (the bpy wheel), in this process, headless. Every test here gets an empty
factory-settings file with the add-on registered (imported as top-level ``xpbd_addon`` from
the repository root)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

bpy = pytest.importorskip("bpy")

import xpbd_addon  # noqa: E402
from xpbd_addon.blender.frame import sim  # noqa: E402


def pytest_collection_modifyitems(config, items):
    here = Path(__file__).parent
    for item in items:
        if here in Path(item.fspath).parents:
            item.add_marker(pytest.mark.blender)


@pytest.fixture(scope="session")
def addon():
    """The add-on registered once for the session (the register test re-registers it)."""
    xpbd_addon.register()
    yield xpbd_addon
    xpbd_addon.unregister()


@pytest.fixture
def scene(addon):
    """A fresh empty scene (factory settings: 24 fps, gravity -9.81 m/s^2 along z)."""
    bpy.ops.wm.read_homefile(use_empty=True, use_factory_startup=True)
    sim.clear()
    scene = bpy.context.scene
    scene.frame_set(1)
    yield scene
    sim.clear()
