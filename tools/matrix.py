"""``python3 build.py matrix``: run the test suite on every supported Blender (the bpy wheel).

Each Blender version gets its own venv under ``.venv-matrix/`` or ``$XPBD_MATRIX_VENVS``
(created and reused through ``build.ensure_venv``) with that version's ``bpy``, the numpy its
Python can take, numba and pytest; 5.0 reuses the dev venv ``.venv``, which already is that
Blender. Then pytest runs over ``tests/`` in each, exactly as ``build.py test`` does.

    python3 build.py matrix                 all of TARGETS
    python3 build.py matrix 4.2 5.3         some
    python3 build.py matrix 5.3 -- -x -k package   arguments after -- go to pytest

A fresh venv costs about 35 s here (bpy is a 300+ MB wheel), the suite about 30 s each.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tools.pythons import find_python

ROOT = Path(__file__).resolve().parent.parent
# $XPBD_MATRIX_VENVS can put the venvs outside the checkout (e.g. under ~/.cache) so that a
# fresh clone, as CI makes, reuses them; each venv's requirement stamp keeps that safe.
MATRIX_VENVS = Path(os.environ.get("XPBD_MATRIX_VENVS", ROOT / ".venv-matrix"))


@dataclass(frozen=True)
class BlenderTarget:
    """One supported Blender release line, as the bpy wheel ships it."""

    name: str
    """Short name used on the command line and for the venv folder, e.g. ``"4.2"``."""
    bpy: str
    """Exact bpy wheel version (the newest patch release of that line on PyPI)."""
    python: str
    """The Python minor version that Blender embeds, e.g. ``"3.11"``."""
    numpy: str
    """numpy pin: Blender ships its own numpy, so test against the same series."""
    numba: str = "0.68.1"
    """numba pin: the release the packages bundle for this Blender."""
    llvmlite: str = "0.50.0"
    """llvmlite pin: the one that numba release requires."""
    exit_breaks: bool = False
    """The bpy module crashes or hangs at interpreter exit with an add-on's update callbacks
    still registered (4.2, 4.5): pytest then ends through ``tools.pytest_hard_exit``."""


# The newest patch release of each line; 4.2 and 4.5 are LTS. 5.1+ moved to Python 3.13.
TARGETS: dict[str, BlenderTarget] = {
    "4.2": BlenderTarget("4.2", "4.2.23", "3.11", "1.26.4", exit_breaks=True),
    # 4.5 is the last Blender for Intel Macs, whose package bundles numba 0.62.1 (the last
    # with Intel-mac wheels): testing 4.5 with it runs the kernels on that numba too.
    "4.5": BlenderTarget("4.5", "4.5.15", "3.11", "1.26.4", "0.62.1", "0.45.1",
                         exit_breaks=True),
    "5.0": BlenderTarget("5.0", "5.0.1", "3.11", "1.26.4"),
    "5.3": BlenderTarget("5.3", "5.3.0", "3.13", "2.3.5"),
}

TEST_TOOLS = ["pytest==9.2.0", "pygltflib==1.16.5", "ufbx==0.0.5", "usd-core==26.11"]
"""pytest, and the independent readers the export tests check files with (as in the dev list)."""


def requirements(target: BlenderTarget) -> list[str]:
    """What the matrix venv of ``target`` installs (pinned, so results are reproducible)."""
    return [f"bpy=={target.bpy}", f"numpy=={target.numpy}", f"numba=={target.numba}",
            f"llvmlite=={target.llvmlite}", *TEST_TOOLS]


@dataclass(frozen=True)
class Venvs:
    """build.py's venv helpers, handed in by ``build.py matrix`` (this module does not import
    build.py: build.py imports it)."""

    ensure_venv: Callable[..., Path]
    """``build.ensure_venv(venv, requirements, python, minor)``: create or reuse a venv"""
    dev_requirements: list[str]
    """``build.dev_requirements()``: the pins of the dev venv (.venv)"""


def venv_for(target: BlenderTarget, venvs: Venvs) -> Path:
    """Create or reuse the venv of ``target`` and return its python."""
    if f"bpy=={target.bpy}" in venvs.dev_requirements:
        return venvs.ensure_venv()  # the dev venv already is this Blender: don't install twice
    python = find_python(target.python)
    if python is None:
        raise RuntimeError(f"Blender {target.name} needs Python {target.python}, none found")
    return venvs.ensure_venv(MATRIX_VENVS / f"blender-{target.name}", requirements(target),
                             python, target.python)


SUMMARY = re.compile(r"\b\d+ (passed|failed|error|errors|skipped|deselected)\b.* in [\d.]+s")


def run(target: BlenderTarget, pytest_args: list[str], venvs: Venvs
        ) -> tuple[int, float, str]:
    """Run pytest in the venv of ``target``; return (exit code, seconds, pytest's last line)."""
    python = venv_for(target, venvs)
    start = time.perf_counter()
    print(f"=== Blender {target.name} (bpy {target.bpy}, Python {target.python}, numba "
          f"{target.numba}) ===", flush=True)
    # Tee pytest's output: shown live, and its closing summary line kept for the table.
    plugin = ["-p", "tools.pytest_hard_exit"] if target.exit_breaks else []
    if plugin:
        print(f"(bpy {target.bpy} breaks at interpreter exit with callbacks registered: pytest "
              "leaves through tools.pytest_hard_exit once its report is out)", flush=True)
    process = subprocess.Popen([str(python), "-m", "pytest", *plugin, *pytest_args], cwd=ROOT,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               env={**os.environ, "XPBD_MATRIX_BLENDER": target.name})
    last = ""
    assert process.stdout is not None
    for line in process.stdout:
        sys.stdout.write(line)
        # pytest's closing line, not the noise Blender prints while it exits.
        if SUMMARY.search(line):
            last = line.strip().strip("= ")
    code = process.wait()
    return code, time.perf_counter() - start, last


def main(argv: list[str], venvs: Venvs) -> int:
    """``build.py matrix [VERSION...] [-- PYTEST_ARGS...]``: run the suite per Blender version
    (default: all of ``TARGETS``) and print one line per version; non-zero if any failed."""
    if "--" in argv:
        split = argv.index("--")
        names, pytest_args = argv[:split], argv[split + 1:]
    else:
        names, pytest_args = argv, []
    names = names or list(TARGETS)
    unknown = [name for name in names if name not in TARGETS]
    if unknown:
        print(f"unknown Blender version(s) {unknown}; choose from {list(TARGETS)}")
        return 2
    results = [(name, *run(TARGETS[name], pytest_args or ["-q"], venvs)) for name in names]
    print("\n=== matrix ===")
    for name, code, seconds, last in results:
        target = TARGETS[name]
        print(f"Blender {name:4} bpy {target.bpy:7} Python {target.python}  "
              f"{'PASS' if code == 0 else 'FAIL'}  {seconds:6.0f} s  {last}")
    return 0 if all(code == 0 for _, code, _, _ in results) else 1
