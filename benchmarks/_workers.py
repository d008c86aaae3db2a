"""Worker processes of the Blender benchmarks: each measurement runs in a fresh process
under the interpreter whose ``bpy`` wheel it needs, and prints one ``RESULT <json>`` line."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any


def bpy_version(python: Path | str) -> str | None:
    """bpy's major.minor under that interpreter, or None (no such interpreter, no bpy)."""
    exe = shutil.which(str(python)) if not os.path.isabs(str(python)) else str(python)
    if not exe or not os.path.exists(exe):
        return None
    try:
        r = subprocess.run(
            [exe, "-c", "import bpy; print('%d.%d' % bpy.app.version[:2])"],
            capture_output=True,
            text=True,
            timeout=120,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = r.stdout.strip().splitlines()
    return lines[-1] if r.returncode == 0 and lines else None


def run_worker(cmd: list[str], tail_lines: int = 5) -> tuple[dict[str, Any] | None, str]:
    """Run a worker command; (its RESULT dict with ``process_wall_s`` [s] added, "") or
    (None, the last ``tail_lines`` lines of its output joined) when it printed none."""
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    for line in r.stdout.splitlines():
        if line.startswith("RESULT "):
            res = json.loads(line[len("RESULT "):])
            res["process_wall_s"] = round(wall, 2)
            return res, ""
    tail = (r.stderr or r.stdout).strip().splitlines()[-tail_lines:]
    return None, " | ".join(tail)
