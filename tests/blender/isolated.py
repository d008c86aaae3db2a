"""Run a piece of Blender work in its own process: for cases that corrupted Blender's heap
(an abort kills the process, not the test session) and for save -> reopen.

``run(body)`` executes ``body`` after a preamble that imports bpy, registers the add-on and
opens an empty file (``scene``, ``ropes``, ``sim``, ``np`` are defined); the body fills the
dict ``result``, printed as the last ``RESULT <json>`` line. A crash, an abort or an
exception fails the test with the process's output.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PREAMBLE = f"""
import sys, json
sys.path.insert(0, {str(ROOT)!r}); sys.path.insert(0, {str(ROOT / 'tests')!r})
import bpy, numpy as np
import xpbd_addon
xpbd_addon.register()
from blender import ropes
from xpbd_addon.blender.frame import sim
from xpbd_addon.blender.read import rest
bpy.ops.wm.read_homefile(use_empty=True, use_factory_startup=True)
scene = bpy.context.scene
result = {{}}
"""

EPILOGUE = """
print("RESULT " + json.dumps(result), flush=True)
# bpy segfaults or hangs at interpreter exit while a property with an update= callback is
# still registered: leave Blender clean.
xpbd_addon.unregister()
"""


def run(body: str, timeout: float = 300.0) -> dict:
    """Execute ``body`` in a new Blender process; its ``result`` dict."""
    script = PREAMBLE + textwrap.dedent(body) + EPILOGUE
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    if done.returncode != 0 or not lines:
        raise AssertionError(f"Blender process failed (exit code {done.returncode}):\n"
                             f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return json.loads(lines[-1][len("RESULT "):])
