"""The kernels give the same physics as plain Python (NUMBA_DISABLE_JIT=1), and the core
imports without Blender."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = r"""
import json, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, sys.argv[2])
from xpbd_addon.core import Model, step
from core.ropes import many_ropes
out = {}
worked = Model([[0, 0, 0], [0, -1.2, 0]], [[0, 1]], [0, 1], 1e-3, rest_length=[1.0])
s = worked.state(); step(worked, s, 1 / 60, 1, gravity=(0, 0, 0)); out["worked"] = s.x.tolist()
for solver in ("sweep", "direct"):
    lanes = many_ropes(8, 6, compliance=1e-4, seed=2, solver=solver)
    s = lanes.state()
    for _ in range(3):
        step(lanes, s, 1 / 24, 4)
    out[solver] = s.x.tolist()
print(json.dumps(out))
"""


def run(env_extra):
    env = {**os.environ, **env_extra}
    env.pop("NUMBA_CACHE_DIR", None)
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(ROOT), str(ROOT / "tests")],
        capture_output=True, text=True, env=env, check=True,
    )
    return json.loads(result.stdout)


def test_interpreted_and_compiled_kernels_agree():
    interpreted = run({"NUMBA_DISABLE_JIT": "1"})
    compiled = run({"NUMBA_DISABLE_JIT": "0"})
    np.testing.assert_allclose(interpreted["worked"][1], [0.0, -1.2 + 0.2 / 4.6, 0.0], atol=1e-12)
    for key in compiled:
        np.testing.assert_allclose(interpreted[key], compiled[key], rtol=0, atol=1e-12)


def test_core_imports_without_bpy_or_numba():
    code = (
        "import sys; sys.modules['bpy'] = None; sys.modules['mathutils'] = None\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        "import xpbd_addon, xpbd_addon.core\n"
        "assert 'numba' not in sys.modules, 'numba is imported before the first step'\n"
        "m = xpbd_addon.core.Model([[0, 0, 0], [1, 0, 0]], [[0, 1]], [0, 1], 0.0)\n"
        "xpbd_addon.core.step(m, m.state(), 1 / 24, 2)\n"
        "assert 'numba' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
