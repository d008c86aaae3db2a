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
(the 16-lane kernels) and the write-back kernel, everything the first frames of a scene
without colliders need. Others (contacts, threads for big scenes) still compile on first
use, on the preparation thread. They are built with this Python's numba, so only for the
platform and Python that build the package (linux-x64 / Python 3.11 here), and only if that
numba is the one the package bundles; they are kept under ``build/precompiled/`` by a hash of
the sources, so rebuilding the package with unchanged sources does not compile again.
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
prepare = importlib.import_module(sys.argv[2] + ".core.prepare")
io_kernels = importlib.import_module(sys.argv[2] + ".blender.io_kernels")
preparation = importlib.import_module(sys.argv[2] + ".preparation")
core = importlib.import_module(sys.argv[2] + ".core")
import numpy as np
request = preparation.default_request()
prepare.warm(request.model, request.substeps)
# several ropes: the 16-lane kernels
ropes, points = 16, 20
x = np.zeros((ropes * points, 3))
x[:, 0] = np.tile(np.linspace(0.0, 2.0, points), ropes)
x[:, 1] = np.repeat(np.arange(ropes) * 0.1, points)
edges = np.array([(r * points + i, r * points + i + 1) for r in range(ropes)
                  for i in range(points - 1)])
inv_mass = np.full(len(x), 20.0)
inv_mass[::points] = 0.0
prepare.warm(core.Model(x, edges, inv_mass, 1e-6, damping=0.1, radius=0.01), 10)
io_kernels.warm()
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
    """sha256 of every Python source of the add-on (what the kernels are compiled from)."""
    digest = hashlib.sha256()
    for path in sorted(source.rglob("*.py")):
        if "__pycache__" not in path.parts:
            digest.update(path.relative_to(source).as_posix().encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def build(source: Path, package_id: str, numba_version: str,
          precompiled_root: Path = PRECOMPILED_ROOT) -> Path | None:
    """The folder of precompiled kernels for the add-on sources in ``source`` (compiled now,
    or reused from ``precompiled_root`` when the sources did not change); None if this
    machine cannot build them (another platform, or a numba other than ``numba_version``,
    the one the package bundles)."""
    target = host_can_build()
    try:
        import numba
    except ImportError:
        return None
    if target is None or numba.__version__ != numba_version:
        print(f"  no precompiled kernels: this is {sys.platform}/{platform.machine()} with "
              f"numba "
              f"{numba.__version__} (the package bundles {numba_version})", flush=True)
        return None
    python = f"{sys.version_info[0]}.{sys.version_info[1]}"
    key = f"{sources_digest(source)[:16]}-{package_id}-{target}-py{python}-numba{numba_version}"
    precompiled = precompiled_root / key
    if (precompiled / "precompiled.json").exists():
        return precompiled
    module = f"bl_ext.{REPOSITORY}.{package_id}"
    print(f"  precompiling the kernels for {target} / Python {python} ({CPU_NAME}), once per "
          "change of the sources", flush=True)
    with tempfile.TemporaryDirectory() as temp:
        tree = Path(temp) / "tree"
        addon = tree / "bl_ext" / REPOSITORY / package_id
        shutil.copytree(source, addon, ignore=shutil.ignore_patterns(
            "__pycache__", "*.pyc", "tests", "wheels", FOLDER))
        cache = Path(temp) / "cache"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "PYTHON"))}
        env.update(NUMBA_CACHE_DIR=str(cache), NUMBA_CPU_NAME=CPU_NAME,
                   NUMBA_CPU_FEATURES=CPU_FEATURES, PYTHONDONTWRITEBYTECODE="1")
        subprocess.run([sys.executable, "-c", _COMPILE, str(tree), module], env=env,
                       check=True)
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
            "module": module, "platform": target, "python": python,
            "numba": numba_version, "cpu_name": CPU_NAME, "cpu_features": CPU_FEATURES,
        }, indent=1))
    shutil.rmtree(precompiled, ignore_errors=True)
    staging.rename(precompiled)
    return precompiled


def add_to_stage(stage_dir: Path, package_id: str, numba_version: str) -> Path | None:
    """Put the precompiled kernels (built or reused) into the staged package (``FOLDER``)."""
    precompiled = build(stage_dir, package_id, numba_version)
    if precompiled is None:
        return None
    shutil.copytree(precompiled, stage_dir / FOLDER)
    return stage_dir / FOLDER
