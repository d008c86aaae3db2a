"""Finding a Python interpreter of a given version (build.py for .venv, tools/matrix.py for
each Blender's venv). Standard library only: build.py runs it on a fresh machine."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys


def _python_is(path: str, minor: str) -> bool:
    """True if ``path`` runs and is Python ``minor`` (pyenv shims exist for inactive versions
    and fail when run, so a name on PATH proves nothing)."""
    try:
        out = subprocess.run([path, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                             capture_output=True, text=True, timeout=60)
    except OSError:
        return False
    return out.returncode == 0 and out.stdout.strip() == minor


def find_python(minor: str) -> str | None:
    """An interpreter of Python ``minor`` ("3.13"): this one, a pyenv one, or one on PATH."""
    if f"{sys.version_info[0]}.{sys.version_info[1]}" == minor:
        return sys.executable
    pyenv_root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    candidates = sorted(glob.glob(os.path.join(pyenv_root, "versions", f"{minor}.*", "bin",
                                               "python")), reverse=True)
    candidates += [c for c in (shutil.which(f"python{minor}"),) if c]
    for candidate in candidates:
        if _python_is(candidate, minor):
            return candidate
    return None
