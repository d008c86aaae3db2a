"""Kernels compiled at package time, put where numba looks for them (first use only).

A package built on a platform that can compile its kernels (``tools/precompile.py``:
linux-x64 for Python 3.11 today) carries them in ``kernel_cache/``, compiled for a portable
CPU target (x86-64-v3: AVX2 and FMA). Before numba is first imported, ``adopt`` checks that
this process matches them (the add-on's import name, platform, Python, bundled numba version,
and a CPU with the target's features), sets numba's CPU target to theirs for this process
(``NUMBA_CPU_NAME`` / ``NUMBA_CPU_FEATURES``, read once when numba is imported, so kernels
compiled later are cached under the same target), and copies the files into numba's cache
folder for this installation: numba then loads them instead of compiling (about 0.5 s
instead of 6-30 s). Anything that does not match leaves numba as it was: it compiles.

No bpy, no numba import (llvmlite is imported to read the CPU's features): it runs on the
preparation thread (``preparation``).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import platform
import shutil
import sys
from pathlib import Path

from .core.kernel_cache import KERNEL_STAMP as STAMP  # the stamp of the kernel sources

FOLDER = "kernel_cache"
"""The folder of the precompiled kernels in the package, beside this file."""


def _platform() -> str | None:
    if sys.platform.startswith("linux") and platform.machine() in ("x86_64", "AMD64"):
        return "linux-x64"
    return None


def _host_has(features: str) -> bool:
    """True if this CPU has every ``+feature`` of ``features`` (LLVM's names)."""
    try:
        from llvmlite import binding

        host = binding.get_host_cpu_features()
    except Exception:  # noqa: BLE001 - cannot tell: do not use the precompiled kernels
        return False
    wanted = [item[1:] for item in features.split(",") if item.startswith("+")]
    return all(host.get(name, False) for name in wanted if name != "64bit")


def problem(addon_root: Path, package: str) -> str | None:
    """Why the precompiled kernels in ``addon_root`` cannot be used in this process, or None
    if they can."""
    manifest = addon_root / FOLDER / "precompiled.json"
    if not manifest.exists():
        return "no precompiled in this package"
    try:
        built = json.loads(manifest.read_text())
        numba_version = importlib.metadata.version("numba")
    except (OSError, ValueError, importlib.metadata.PackageNotFoundError) as error:
        return f"unreadable ({error})"
    python = f"{sys.version_info[0]}.{sys.version_info[1]}"
    checks = (
        (built.get("module") == package,
         f"compiled as {built.get('module')}, not {package}"),
        (built.get("platform") == _platform(), f"compiled for {built.get('platform')}"),
        (python in built.get("pythons", [built.get("python")]),
         f"compiled for Python {', '.join(built.get('pythons', [built.get('python')]))}"),
        (built.get("numba") == numba_version, f"compiled with numba {built.get('numba')}"),
        ("numba" not in sys.modules, "numba was loaded before (its CPU target is set)"),
        (os.environ.get("NUMBA_CPU_NAME") in (None, built.get("cpu_name")),
         "NUMBA_CPU_NAME is set to something else"),
    )
    for ok, reason in checks:
        if not ok:
            return reason
    if not _host_has(str(built.get("cpu_features", ""))):
        return f"this CPU lacks features of {built.get('cpu_name')}"
    return None


def adopt(addon_root: Path, package: str, cache_dir: str) -> str | None:
    """Use the precompiled kernels if they fit (see the module docstring). Returns None if
    they are in use, else why not. Files already in the cache are kept (they may hold more
    kernels) unless they were compiled from other sources."""
    reason = problem(addon_root, package)
    if reason is not None:
        return reason
    folder_in_package = addon_root / FOLDER
    precompiled = json.loads((folder_in_package / "precompiled.json").read_text())
    os.environ["NUMBA_CPU_NAME"] = precompiled["cpu_name"]
    os.environ["NUMBA_CPU_FEATURES"] = precompiled["cpu_features"]
    try:
        # One folder per source folder of the add-on that has kernels (``blender``,
        # ``core/solve``, ...): the ones holding numba's index files.
        for folder in sorted({index.parent for index in folder_in_package.rglob("*.nbi")}):
            # numba's cache folder for the sources in <add-on>/<sub>: "<last name of sub>_<sha1
            # of its absolute path>"
            source = os.path.abspath(addon_root / folder.relative_to(folder_in_package))
            target = Path(cache_dir) / (
                f"{os.path.basename(source)}_{hashlib.sha1(source.encode()).hexdigest()}")
            target.mkdir(parents=True, exist_ok=True)
            # A cache of other sources (an earlier version of the add-on) is replaced: the
            # core flushes a folder whose stamp differs, which would drop these too.
            stamp = folder / STAMP
            replace = stamp.exists() and (not (target / STAMP).exists() or (
                (target / STAMP).read_bytes() != stamp.read_bytes()))
            for path in folder.iterdir():
                if replace or not (target / path.name).exists():
                    shutil.copy2(path, target / path.name)
    except OSError as error:
        return f"could not copy the precompiled kernels ({error})"
    return None
