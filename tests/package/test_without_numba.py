"""When numba cannot load, the add-on says why and leaves the rope alone: no traceback.

Two ways it fails for users: numba absent (a package for another platform, or the add-on
copied by hand without its wheels), and numba present but broken (built for another numpy or
Python). The first runs in real Blender, in the venv without numba; the second needs only
``xpbd_addon.dependencies`` and a stand-in numba that fails on import the way a broken one
does, in a plain Python subprocess (no bpy involved, nothing of Blender's replaced).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from .conftest import blender_env

ROOT = Path(__file__).resolve().parents[2]

MISSING = """
import json, sys
sys.path.insert(0, {root!r})
import bpy
import numpy as np
import xpbd_addon
from xpbd_addon import dependencies
xpbd_addon.register()
try:
    bpy.ops.wm.read_homefile(use_empty=True, use_factory_startup=True)
    scene = bpy.context.scene
    scene.frame_set(1)
    bpy.ops.xpbd.rope_add(points=8)
    obj = bpy.context.view_layer.objects.active
    def points():
        co = np.empty(len(obj.data.splines[0].points) * 4, dtype=np.float32)
        obj.data.splines[0].points.foreach_get("co", co)
        return co.tolist()
    before = points()
    for frame in range(2, 6):
        scene.frame_set(frame)
    result = dict(reason=dependencies.numba_problem(), load=dependencies.load_numba(),
                  unchanged=points() == before, numba_loaded="numba" in sys.modules)
finally:
    # bpy 4.2/4.5 crash or hang at exit while a property with an update callback is still
    # registered: leave Blender clean.
    xpbd_addon.unregister()
print("RESULT " + json.dumps(result))
"""

BROKEN = """
import json, sys
sys.path.insert(0, {fake!r}); sys.path.insert(0, {root!r})
from xpbd_addon import dependencies
before = dependencies.numba_problem()
reason = dependencies.load_numba()
print("RESULT " + json.dumps(dict(before=before, reason=reason,
                                  again=dependencies.load_numba(),
                                  panel=dependencies.numba_problem())))
"""


def _result(done: subprocess.CompletedProcess) -> dict:
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert done.returncode == 0 and lines, done.stdout[-3000:] + done.stderr[-3000:]
    return json.loads(lines[-1][len("RESULT "):])


def test_missing_numba_is_reported_in_blender(numba_free_python: Path, tmp_path: Path) -> None:
    done = subprocess.run([str(numba_free_python), "-c", MISSING.format(root=str(ROOT))],
                          env=blender_env(tmp_path / "user"), capture_output=True, text=True,
                          timeout=300)
    result = _result(done)
    assert result["reason"] and "numba is not installed" in result["reason"], result
    assert result["load"] == result["reason"]
    assert result["unchanged"], "the rope was changed although nothing could simulate it"
    assert not result["numba_loaded"]


def test_broken_numba_is_reported_with_its_error(tmp_path: Path) -> None:
    fake = tmp_path / "site"
    (fake / "numba").mkdir(parents=True)
    (fake / "llvmlite").mkdir()
    (fake / "llvmlite" / "__init__.py").write_text("")
    # What a numba built against another numpy raises on import.
    (fake / "numba" / "__init__.py").write_text(textwrap.dedent("""
        raise ImportError("Numba needs NumPy 2.3 or less. Got NumPy 2.9.")
    """))
    done = subprocess.run([sys.executable, "-c", BROKEN.format(fake=str(fake), root=str(ROOT))],
                          capture_output=True, text=True, timeout=120)
    result = _result(done)
    assert result["before"] is None  # found on disk: only importing it tells
    assert result["reason"].startswith("numba cannot load: Numba needs NumPy 2.3 or less")
    assert "numpy" in result["reason"] and "Python" in result["reason"]
    assert result["again"] == result["reason"] == result["panel"]
