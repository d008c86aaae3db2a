"""Seeded fuzz of user actions on four ropes (mesh, poly, Bezier, NURBS), in its own Blender
process, bounded for CI: see ``fuzz_session.py`` for the actions and what is asserted after
each one (no crash, nothing non-finite in any mesh or curve, the rest shape bit-exact, frames
equal to playback)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SESSION = Path(__file__).with_name("fuzz_session.py")


@pytest.mark.parametrize("seed", [19, 2026])
def test_random_user_actions_keep_every_rope_sane(seed, tmp_path):
    done = subprocess.run([sys.executable, str(SESSION), str(seed), "500", str(tmp_path), "25"],
                          capture_output=True, text=True, timeout=120)
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert done.returncode == 0 and lines, (
        f"Blender process failed (exit {done.returncode}):\n{done.stdout[-3000:]}\n"
        f"{done.stderr[-3000:]}")
    result = json.loads(lines[-1][len("RESULT "):])
    assert result["ok"], "\n".join(result["log"][-25:]) + "\n" + result["error"]
    assert len(result["log"]) >= 100  # enough actions ran within the time budget
