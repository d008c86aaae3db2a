"""Seeded fuzz of user actions on four ropes (mesh, poly, Bezier, NURBS) and a linked duplicate,
in its own Blender process: see ``fuzz_session.py`` for the actions and what is asserted after
each one (no crash, no Internal error, nothing non-finite in any mesh or curve, the rest shape
bit-exact, frames equal to playback).

CI runs a slice: two seeds, ``XPBD_FUZZ_SESSIONS`` sessions each (default 3) of up to 200
actions and 25 s. A longer run is the same test with more sessions, e.g.
``XPBD_FUZZ_SESSIONS=50 python3 build.py test tests/blender/test_fuzz.py`` (docs/development.md).
A failure names its seed and actions; ``python tests/blender/fuzz_session.py SEED 200 FOLDER``
replays it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SESSION = Path(__file__).with_name("fuzz_session.py")
SESSIONS = int(os.environ.get("XPBD_FUZZ_SESSIONS", "3"))
"""Sessions per seed below (each a fresh file); seeds seed, seed + 1, ..."""
ACTIONS = 200


@pytest.mark.parametrize("seed", [19, 2026])
def test_random_user_actions_keep_every_rope_sane(seed, tmp_path):
    done = subprocess.run([sys.executable, str(SESSION), str(seed), str(ACTIONS),
                           str(tmp_path), "25", str(SESSIONS)],
                          capture_output=True, text=True, timeout=90 + 60 * SESSIONS)
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert done.returncode == 0 and lines, (
        f"Blender process failed (exit {done.returncode}):\n{done.stdout[-3000:]}\n"
        f"{done.stderr[-3000:]}")
    result = json.loads(lines[-1][len("RESULT "):])
    print(f"fuzz seeds {seed}..{seed + SESSIONS - 1}: {result['sessions']} sessions, "
          f"{result['actions']} actions, {len(result['failures'])} failures")
    assert result["ok"], (
        f"seed {result['seed']} (replay: python {SESSION} {result['seed']} {ACTIONS} FOLDER), "
        f"its actions:\n" + "\n".join(result["log"]) + "\n" + result["error"])
    assert result["actions"] >= 100 * SESSIONS  # enough actions ran within the time budget
