"""Shared by the package tests: a Python with bpy but without numba, and Blender's env."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

HIDDEN = ("numba", "llvmlite")
"""Distributions kept out of the Blender venv: the package must bring them."""


def _hidden(name: str) -> bool:
    base = name.lower().split("-")[0].split(".")[0]
    return base in HIDDEN


@pytest.fixture(scope="session")
def numba_free_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv with this environment's packages (bpy, numpy, ...) linked in, minus numba."""
    venv = tmp_path_factory.mktemp("venv-no-numba")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    target = Path(subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True).stdout.strip())
    source = Path(sysconfig.get_paths()["purelib"])
    for entry in source.iterdir():
        if not _hidden(entry.name) and not (target / entry.name).exists():
            (target / entry.name).symlink_to(entry)
    probe = subprocess.run(
        [str(python), "-c", "import importlib.util as u, bpy; "
         "print([n for n in ('numba', 'llvmlite') if u.find_spec(n)])"],
        check=True, capture_output=True, text=True, env=blender_env(venv / "probe-user"))
    assert probe.stdout.strip().splitlines()[-1] == "[]", "numba still visible"
    return python


def blender_env(user: Path) -> dict[str, str]:
    """The environment of a Blender child process keeping its files in ``user``."""
    # No PYTHON* variables: Blender ignores them by default (--python-use-system-env), and
    # PYTHONDONTWRITEBYTECODE would hide the __pycache__ files uninstall has to remove.
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("NUMBA_", "PYTHON", "BLENDER_"))}
    env["BLENDER_USER_RESOURCES"] = str(user)
    return env

