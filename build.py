#!/usr/bin/env python3
"""Project commands. Each one creates or reuses the local virtual environment `.venv` itself.

    python3 build.py demo      run the demo (the seed's twelve-point rope)
    python3 build.py test      run the whole test suite (what CI runs)
    python3 build.py bench     run the benchmarks and print their figures
    python3 build.py lint      ruff + mypy
    python3 build.py package   build + validate the extension zips into dist/ (tools/packaging.py)
    python3 build.py matrix    run the tests on Blender 4.2, 4.5, 5.0, 5.3 (tools/matrix.py)

Only the Python standard library is used here, so it runs on a fresh machine with python3.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"


def _venv_python(venv: Path = VENV) -> Path:
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def dev_requirements() -> list[str]:
    with open(ROOT / "pyproject.toml", "rb") as handle:
        return list(tomllib.load(handle)["project"]["optional-dependencies"]["dev"])


def ensure_venv(venv: Path = VENV, requirements: list[str] | None = None,
                python: str = sys.executable) -> Path:
    """Create ``venv`` if needed and install ``requirements`` (pinned) once; a stamp file with
    their hash makes later calls instant."""
    requirements = dev_requirements() if requirements is None else requirements
    python_path = _venv_python(venv)
    if not python_path.exists():
        print(f"creating {venv.name} with {python}", flush=True)
        subprocess.run([python, "-m", "venv", str(venv)], check=True)
    digest = hashlib.sha256("\n".join(requirements).encode()).hexdigest()
    stamp = venv / ".requirements-stamp"
    if not stamp.exists() or stamp.read_text() != digest:
        print(f"installing into {venv.name}: {' '.join(requirements)}", flush=True)
        subprocess.run([str(python_path), "-m", "pip", "install", "-q", "--upgrade", "pip"],
                       check=True)
        subprocess.run([str(python_path), "-m", "pip", "install", "-q", *requirements],
                       check=True)
        stamp.write_text(digest)
    return python_path


def _run(args: list[str]) -> int:
    return subprocess.run(args, cwd=ROOT).returncode


def main(argv: list[str]) -> int:
    command = argv[0] if argv else "help"
    rest = argv[1:]
    if command == "demo":
        return _run([str(ensure_venv()), "-m", "demo", *rest])
    if command == "test":
        return _run([str(ensure_venv()), "-m", "pytest", *rest])
    if command == "bench":
        return _run([str(ensure_venv()), "-m", "benchmarks", *rest])
    if command == "lint":
        python = str(ensure_venv())
        code = _run([python, "-m", "ruff", "check", "xpbd_addon", "tests", "benchmarks", "demo",
                     "tools", "build.py"])
        return code or _run([python, "-m", "mypy", "xpbd_addon"])
    if command == "package":
        return _run([str(ensure_venv()), "-m", "tools.packaging", *rest])
    if command == "matrix":
        from tools import matrix

        return matrix.main(rest)
    print(__doc__)
    return 0 if command in ("help", "-h", "--help") else 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
