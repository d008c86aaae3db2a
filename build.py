#!/usr/bin/env python3
"""Project commands. Each one creates or reuses the local virtual environment `.venv` itself.

    python3 build.py demo          run the demo (ropes released over a bar, three compliances)
    python3 build.py test          run the whole test suite (what CI runs)
    python3 build.py test --quick  a fast subset for contributors (under a minute)
    python3 build.py bench         run the benchmarks and print their figures
    python3 build.py lint          ruff + mypy
    python3 build.py package       build + validate the extension zips into dist/
    python3 build.py matrix        run the tests on Blender 4.2, 4.5, 5.0, 5.3 (tools/matrix.py)
    python3 build.py manifest      record the kernels the first-use compile helper compiles

Only the Python standard library is used here, so it runs on a fresh machine with python3.
`.venv` needs Python 3.11 (bpy 5.0.1, Blender as a Python module, exists for 3.11 only): the
running python3 if it is 3.11, else a python3.11 on PATH or under pyenv. Nothing is installed
before that is settled, and the downloads are announced before they start.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
PYTHON = "3.11"
"""The Python of `.venv`: bpy==5.0.1 (pyproject.toml) has wheels for CPython 3.11 only."""

DOWNLOADS = ("about 0.5 GB the first time: bpy 5.0.1 (Blender as a Python module, about "
             "0.8 GB once unpacked), numba, llvmlite, numpy, pytest, ruff, mypy")
"""What creating `.venv` downloads, said before pip starts."""

TEST_DOWNLOADS = ("the package tests also fetch numba and llvmlite wheels for every platform "
                  "Blender runs on into .wheel_cache/ (473 MB, once; "
                  "`build.py test --quick` skips them)")


class SetupError(Exception):
    """Set-up cannot go on; the message says what to do."""


def _venv_python(venv: Path = VENV) -> Path:
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def dev_requirements() -> list[str]:
    import tomllib  # Python 3.11+: only reached once the Python is checked

    with open(ROOT / "pyproject.toml", "rb") as handle:
        return list(tomllib.load(handle)["project"]["optional-dependencies"]["dev"])


def _version_of(python: Path | str) -> str | None:
    """"3.11" for a Python that runs, None if it does not (missing, broken, a stale shim)."""
    try:
        done = subprocess.run([str(python), "-c",
                               "import sys; print('%d.%d' % sys.version_info[:2])"],
                              capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def find_python(minor: str = PYTHON) -> str:
    """A Python ``minor`` to create a venv with, or SetupError naming what to install."""
    from tools.pythons import find_python as find

    found = find(minor)
    if found is None:
        raise SetupError(
            f"This needs Python {minor}: bpy 5.0.1 (Blender as a Python module, what the tests "
            f"and the demo run in) exists only for Python {minor}, and this is Python "
            f"{sys.version_info[0]}.{sys.version_info[1]} ({sys.executable}). Install Python "
            f"{minor}, e.g. `pyenv install {minor}` (https://github.com/pyenv/pyenv) or your "
            f"system's python{minor} package, then run this command again: it finds "
            f"python{minor} on PATH or under pyenv by itself.")
    return found


def _delete_hint(venv: Path) -> str:
    name = venv.name if venv.parent == ROOT else str(venv)
    command = f"rmdir /s /q {name}" if os.name == "nt" else f"rm -rf {name}"
    return f"delete it (`{command}`) and run the command again"


def venv_problem(venv: Path, minor: str) -> str | None:
    """Why an existing ``venv`` cannot be used (no working Python in it, or the wrong
    version), or None if it can."""
    python = _venv_python(venv)
    if not python.exists():
        return f"it has no Python ({python.relative_to(venv)} is missing)"
    version = _version_of(python)
    if version is None:
        return f"its Python ({python}) does not run (its base Python was removed or moved?)"
    if version != minor:
        return f"it is Python {version}, and Python {minor} is needed"
    return None


def ensure_venv(venv: Path = VENV, requirements: list[str] | None = None,
                python: str | None = None, minor: str = PYTHON) -> Path:
    """Create ``venv`` with Python ``minor`` if needed and install ``requirements`` (pinned)
    once; a stamp file with their hash makes later calls instant. A ``venv`` that exists but
    cannot work (``venv_problem``) or whose install failed is named with the command to delete
    it; it is never deleted here (it may be a link to a shared environment)."""
    if venv.exists() or venv.is_symlink():
        problem = venv_problem(venv, minor)
        if problem:
            raise SetupError(f"The virtual environment {venv} cannot be used: {problem}. "
                             f"{_delete_hint(venv).capitalize()}.")
    else:
        python = python or find_python(minor)
        print(f"creating {venv.name} with Python {minor} ({python})", flush=True)
        subprocess.run([python, "-m", "venv", str(venv)], check=True)
    requirements = dev_requirements() if requirements is None else requirements
    python_path = _venv_python(venv)
    digest = hashlib.sha256("\n".join(requirements).encode()).hexdigest()
    stamp = venv / ".requirements-stamp"
    if not stamp.exists() or stamp.read_text() != digest:
        if venv == VENV:
            print(f"installing into {venv.name}, downloading {DOWNLOADS}", flush=True)
        print(f"installing into {venv.name}: {' '.join(requirements)}", flush=True)
        for args in (["install", "-q", "--upgrade", "pip"], ["install", "-q", *requirements]):
            if subprocess.run([str(python_path), "-m", "pip", *args]).returncode:
                raise SetupError(f"pip failed installing into {venv} (its message is above). "
                                 f"If it keeps failing, {_delete_hint(venv)}.")
        stamp.write_text(digest)
    return python_path


def _run(args: list[str]) -> int:
    return subprocess.run(args, cwd=ROOT).returncode


QUICK = [
    "tests/core", "tests/blender/test_register.py", "tests/blender/test_cache.py",
    "tests/blender/test_settings.py", "tests/blender/test_pins.py",
    "tests/blender/test_render.py", "-m", "not slow", "-q",
    # the long ones of tests/core (5-65 s each here): broad phases against fresh colliders
    # every frame, a droop that needs a long settle, contacts run twice over
    "--deselect", "tests/core/test_collision_broadphase.py::"
                  "test_no_contact_is_ever_missed_by_the_broad_phases[fresh colliders]",
    "--deselect", "tests/core/test_bending.py::"
                  "test_cantilever_droop_does_not_depend_on_substeps",
    "--deselect", "tests/core/test_collision_rest.py::"
                  "test_contacts_are_deterministic_and_independent_of_threads",
    "--deselect", "tests/core/test_collision_input.py::"
                  "test_degenerate_triangles_are_skipped_and_reported",
]
"""``build.py test --quick``: the core tests minus the slow ones, and Blender's smoke tests
(registration, cache and jumps, settings, pins, render); no package build, no new Blender
process, nothing downloaded. About 20 s once numba's cache is filled; the first run on a new
checkout compiles the kernels (90 s here)."""


def _test_args(rest: list[str]) -> list[str]:
    if "--quick" in rest:
        rest = [arg for arg in rest if arg != "--quick"]
        return [*QUICK, *rest]
    print(f"note: {TEST_DOWNLOADS}", flush=True)
    return rest


def main(argv: list[str]) -> int:
    command = argv[0] if argv else "help"
    rest = argv[1:]
    if command in ("help", "-h", "--help") or command not in COMMANDS:
        print(__doc__)
        return 0 if command in ("help", "-h", "--help") else 2
    try:
        return COMMANDS[command](rest)
    except SetupError as error:
        print(f"build.py: {error}", file=sys.stderr)
        return 2


def _matrix(rest: list[str]) -> int:
    from tools import matrix

    return matrix.main(rest, matrix.Venvs(ensure_venv, dev_requirements()))


def _lint(rest: list[str]) -> int:
    python = str(ensure_venv())
    code = _run([python, "-m", "ruff", "check", "xpbd_addon", "tests", "benchmarks", "demo",
                 "tools", "build.py"])
    return code or _run([python, "-m", "mypy", "xpbd_addon"])


COMMANDS = {
    "demo": lambda rest: _run([str(ensure_venv()), "-m", "demo", *rest]),
    "test": lambda rest: _run([str(ensure_venv()), "-m", "pytest", *_test_args(rest)]),
    "bench": lambda rest: _run([str(ensure_venv()), "-m", "benchmarks", *rest]),
    "lint": _lint,
    "package": lambda rest: _run([str(ensure_venv()), "-m", "tools.packaging", *rest]),
    "matrix": _matrix,
    "manifest": lambda rest: _run([str(ensure_venv()), "-m", "tools.kernel_manifest", *rest]),
}


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
