"""Kernels compiled at package time for a portable CPU, shipped in the package.

Why numba's cache can be shipped (numba 0.68, measured): numba finds a cached kernel by

- the folder: ``$NUMBA_CACHE_DIR/<source folder name>_<sha1 of its absolute path>``, which the
  add-on recreates for wherever Blender installed it (``xpbd_addon/precompiled.py``);
- the source's stamp, a sha256 of the file's bytes (not its path or mtime): the zip's files
  are the ones compiled;
- the index key: signature, bytecode hash and (target triple, CPU name, CPU features). The
  kernels are compiled for ``CPU_NAME`` with exactly ``CPU_FEATURES`` (x86-64-v3: AVX2 and
  FMA, every x86-64 CPU since about 2015), and the add-on sets the same two numba settings
  when the CPU it runs on has those features, so the keys match;
- the module's import name, which the cached code imports when it loads: it must be the
  installed one, ``bl_ext.<repository>.<id>``. The kernels are compiled under
  ``bl_ext.user_default.<id>`` (what installing from disk or by drag and drop gives); an
  add-on installed into another repository compiles as before.

Compiled: the kernels of the rope that Add > Curve > XPBD Rope makes, of several ropes at once
(the 16-lane kernels) and the write-back kernel, and every kernel the compile helper's
manifest names (``core/kernel_manifest.json``: the contacts with a ground and with mesh
colliders, Self Collision, the re-solve after a landing, sleeping), which a first session's
scenes need. Others (threads for big scenes, bending on many ropes) still compile on first
use, on the preparation thread. They are built on the platform that builds the package
(linux-x64 here), by this Python and by the test matrix's venvs where they exist (Blender
5.3's: Python 3.13), each only if its numba is the one the package bundles; they are kept
under ``build/precompiled/`` by a hash of the sources and of what is compiled, so rebuilding
the package with both unchanged does not compile again.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PRECOMPILED_ROOT = ROOT / "build" / "precompiled"
REPOSITORY = "user_default"
"""Blender's extension repository of an add-on installed from disk or by drag and drop."""

CPU_NAME = "x86-64-v3"
CPU_FEATURES = ("+64bit,+avx,+avx2,+bmi,+bmi2,+cmov,+cx16,+cx8,+f16c,+fma,+fxsr,+lzcnt,+mmx,"
                "+movbe,+popcnt,+sse,+sse2,+sse3,+sse4.1,+sse4.2,+ssse3,+xsave")
"""The numba target compiled for: ``NUMBA_CPU_NAME`` / ``NUMBA_CPU_FEATURES`` (x86-64-v3)."""

FOLDER = "kernel_cache"
"""Their folder inside the package (beside ``__init__.py``)."""

_COMPILE = r"""
import importlib, sys
sys.path.insert(0, sys.argv[1])
package = importlib.import_module(sys.argv[2])
warmup = importlib.import_module(sys.argv[2] + ".core.warmup")
io_kernels = importlib.import_module(sys.argv[2] + ".blender.write.io_kernels")
preparation = importlib.import_module(sys.argv[2] + ".preparation")
core = importlib.import_module(sys.argv[2] + ".core")
import numpy as np
request = preparation.default_request()
warmup.warm(request.model, request.substeps, air=request.air)
# several ropes: the 16-lane kernels
ropes, points = 16, 20
x = np.zeros((ropes * points, 3))
x[:, 0] = np.tile(np.linspace(0.0, 2.0, points), ropes)
x[:, 1] = np.repeat(np.arange(ropes) * 0.1, points)
edges = np.array([(r * points + i, r * points + i + 1) for r in range(ropes)
                  for i in range(points - 1)])
inv_mass = np.full(len(x), 20.0)
inv_mass[::points] = 0.0
warmup.warm(core.Model(x, edges, inv_mass, 1e-6, damping=0.1, radius=0.01), 10)
# a curved rope with bending: a rod (the modelled rest shape), one rope, with its bending
angle = np.linspace(0.0, 3.0, 12)
curl = np.stack([np.sin(angle), np.zeros(12), 1.0 - np.cos(angle)], axis=1)
pairs = np.array([(i, i + 1) for i in range(11)])
weights = np.full(12, 20.0)
weights[0] = 0.0
warmup.warm(core.Model(curl, pairs, weights, 1e-6, damping=0.1, radius=0.01,
                       bending_compliance=0.1, rod=core.Rod()), 10)
io_kernels.warm()
io_kernels.warm_tessellation()
# the kernels of a first session's scenes with contacts (a ground, a prop, Self Collision):
# the compile helper's manifest, by its types (core/kernel_manifest.json)
importlib.import_module(sys.argv[2] + ".core.compile_helper").compile_manifest()
"""


def cache_folder_name(source_folder: Path) -> str:
    """numba's cache folder (under ``NUMBA_CACHE_DIR``) for the kernels of the Python files in
    ``source_folder``: its last name and the sha1 of its absolute path (numba 0.68,
    ``_UserProvidedCacheLocator.get_suitable_cache_subpath``)."""
    path = os.path.abspath(source_folder)
    return f"{os.path.basename(path)}_{hashlib.sha1(path.encode()).hexdigest()}"


def host_can_build() -> str | None:
    """The Blender platform whose kernels this Python can compile, or None."""
    if sys.platform.startswith("linux") and platform.machine() in ("x86_64", "AMD64"):
        return "linux-x64"
    return None


def sources_digest(source: Path) -> str:
    """sha256 of every Python source of the add-on (what the kernels are compiled from) and
    of the script that compiles them (``_COMPILE``: what is compiled)."""
    digest = hashlib.sha256(_COMPILE.encode())
    for path in sorted(source.rglob("*.py")):
        if "__pycache__" not in path.parts:
            digest.update(path.relative_to(source).as_posix().encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def _python_info(python: str) -> tuple[str, str | None]:
    """("3.11", numba's version or None) of the interpreter ``python``."""
    done = subprocess.run(
        [python, "-c", "import sys\n"
         "try:\n import importlib.metadata as m; v = m.version('numba')\n"
         "except Exception:\n v = ''\n"
         "print(f'{sys.version_info[0]}.{sys.version_info[1]} {v}')"],
        capture_output=True, text=True, check=True)
    version, _, numba_version = done.stdout.strip().partition(" ")
    return version, numba_version or None


def other_pythons() -> list[str]:
    """Interpreters besides this one that can compile kernels for another Blender Python:
    the test matrix's venvs (``tools/matrix.py``; e.g. Blender 5.3's, Python 3.13), where
    they exist. Their numba must be the bundled one (``build`` checks)."""
    venvs = Path(os.environ.get("XPBD_MATRIX_VENVS", ROOT / ".venv-matrix"))
    found = sorted(str(p) for p in venvs.glob("blender-*/bin/python") if p.exists())
    return [p for p in found if os.path.realpath(p) != os.path.realpath(sys.executable)]


def build(source: Path, package_id: str, numba_version: str,
          precompiled_root: Path = PRECOMPILED_ROOT, *, python: str | None = None
          ) -> Path | None:
    """The folder of precompiled kernels for the add-on sources in ``source`` (compiled now
    by the interpreter ``python``, default this one, or reused from ``precompiled_root`` when
    the sources did not change); None if it cannot build them (another platform, or a numba
    other than ``numba_version``, the one the package bundles)."""
    target = host_can_build()
    python = python or sys.executable
    version, found_numba = _python_info(python)
    if target is None or found_numba != numba_version:
        print(f"  no precompiled kernels from {python}: this is {sys.platform}/"
              f"{platform.machine()} with numba {found_numba} (the package bundles "
              f"{numba_version})", flush=True)
        return None
    key = (f"{sources_digest(source)[:16]}-{package_id}-{target}-py{version}-"
           f"numba{numba_version}")
    precompiled = precompiled_root / key
    if (precompiled / "precompiled.json").exists():
        return precompiled
    module = f"bl_ext.{REPOSITORY}.{package_id}"
    print(f"  precompiling the kernels for {target} / Python {version} ({CPU_NAME}), once "
          "per change of the sources", flush=True)
    with tempfile.TemporaryDirectory() as temp:
        tree = Path(temp) / "tree"
        addon = tree / "bl_ext" / REPOSITORY / package_id
        shutil.copytree(source, addon, ignore=shutil.ignore_patterns(
            "__pycache__", "*.pyc", "tests", "wheels", FOLDER))
        cache = Path(temp) / "cache"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "PYTHON"))}
        env.update(NUMBA_CACHE_DIR=str(cache), NUMBA_CPU_NAME=CPU_NAME,
                   NUMBA_CPU_FEATURES=CPU_FEATURES, PYTHONDONTWRITEBYTECODE="1")
        subprocess.run([python, "-c", _COMPILE, str(tree), module], env=env, check=True)
        staging = precompiled_root / (key + ".partial")
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
        # numba's folder for the sources in <add-on>/<sub> (``core/solve``, ``blender``) is
        # "<last folder name>_<sha1 of the folder's absolute path>": kept as "<sub>".
        folders = {cache_folder_name(addon / sub.relative_to(addon)): sub.relative_to(addon)
                   for sub in [addon, *addon.rglob("*")] if sub.is_dir()}
        for folder in sorted(cache.iterdir()):
            sub = folders.get(folder.name)
            if sub is not None:
                shutil.copytree(folder, staging / sub)
        (staging / "precompiled.json").write_text(json.dumps({
            "module": module, "platform": target, "pythons": [version],
            "numba": numba_version, "cpu_name": CPU_NAME, "cpu_features": CPU_FEATURES,
        }, indent=1))
    shutil.rmtree(precompiled, ignore_errors=True)
    staging.rename(precompiled)
    return precompiled


def add_to_stage(stage_dir: Path, package_id: str, numba_version: str) -> Path | None:
    """Put the precompiled kernels (built or reused) into the staged package (``FOLDER``):
    this interpreter's, and those of ``other_pythons`` that have the bundled numba, in one
    folder (numba's cache files carry their Python's tag, e.g. ``.py311.nbi``, so they sit
    side by side); ``precompiled.json`` lists the Pythons."""
    target = stage_dir / FOLDER
    manifest: dict | None = None
    for python in [sys.executable, *other_pythons()]:
        precompiled = build(stage_dir, package_id, numba_version, python=python)
        if precompiled is None:
            continue
        built = json.loads((precompiled / "precompiled.json").read_text())
        if manifest is not None and set(built["pythons"]) <= set(manifest["pythons"]):
            continue  # another interpreter of a Python already in
        shutil.copytree(precompiled, target, dirs_exist_ok=True)
        if manifest is None:
            manifest = built
        else:
            manifest["pythons"] = sorted(set(manifest["pythons"]) | set(built["pythons"]))
    if manifest is None:
        return None
    (target / "precompiled.json").write_text(json.dumps(manifest, indent=1))
    return target
