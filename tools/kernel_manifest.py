"""Writes ``xpbd_addon/core/kernel_manifest.json``: the kernels the default rope's preparation
compiles, with their argument types, for the first-use compile helper
(``xpbd_addon/core/compile_helper.py``).

    python3 build.py manifest          write it
    python3 build.py manifest --check  exit 1 if it is not what the sources give

A new process with an empty kernel cache runs the preparations a first session makes and
records what each compiles (``compile_helper.record``), in parts (``compile_helper.PARTS``):
"default", the write-back's kernels, the default rope at launch and over a ground, as the
first-use benchmark does; "meshes", the same rope over a mesh collider (a prop);
"self_collision", that rope with Self Collision over a ground and over a prop; "held", two
such ropes crossing (their contacts held in the solve). A part holds only what the parts
before it did not compile.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MANIFEST = ROOT / "xpbd_addon" / "core" / "kernel_manifest.json"

ABOUT = ("The kernels the default rope's preparation compiles, in the order it compiles them, "
         "with their argument types (core/compile_helper.py). Written by "
         "`python3 build.py manifest`; do not edit.")

_CHILD = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from xpbd_addon import preparation
from xpbd_addon.core import compile_helper, warmup
from xpbd_addon.blender.write import io_kernels


request = preparation.default_request()


def default():  # the write-back's first: the helper compiles what a first frame needs first
    io_kernels.warm()
    warmup.warm(request.model, request.substeps, air=request.air)  # at launch
    warmup.warm(request.model, request.substeps, ground=True, air=request.air)
    warmup.warm(request.model, request.substeps, ground=True)


def meshes():  # a first rope over a prop: mesh colliders (Collision Objects is on by default)
    warmup.warm(request.model, request.substeps, meshes=True)
    io_kernels.warm_tessellation()


def self_collision():  # a rope with Self Collision
    alone = preparation.default_request(self_collision=True)
    warmup.warm(alone.model, alone.substeps, ground=True, air=alone.air)
    warmup.warm(alone.model, alone.substeps, meshes=True, air=alone.air)


def held():  # two crossing: their contacts held in the solve
    crossing = preparation.colliding_request()
    warmup.warm(crossing.model, crossing.substeps, ground=True, air=crossing.air)
    warmup.warm(crossing.model, crossing.substeps, meshes=True, air=crossing.air)


entries = []
for part, steps in zip(compile_helper.PARTS, (default, meshes, self_collision, held),
                       strict=True):
    entries += [dict(entry, part=part) for entry in compile_helper.record(steps)]
print("MANIFEST " + json.dumps(entries))
"""


def recorded(python: str = sys.executable) -> list[dict]:
    """The manifest's entries as the sources give them (a new process, empty cache)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "PYTHON"))}
    with tempfile.TemporaryDirectory(prefix="xpbd-manifest-") as cache:
        env["NUMBA_CACHE_DIR"] = cache
        done = subprocess.run([python, "-c", _CHILD, str(ROOT)], env=env,
                              capture_output=True, text=True, timeout=900)
    lines = [line for line in done.stdout.splitlines() if line.startswith("MANIFEST ")]
    if done.returncode or not lines:
        raise RuntimeError(f"recording failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return json.loads(lines[-1][len("MANIFEST "):])


def text(entries: list[dict]) -> str:
    """The file's text: one kernel a line, so that a change reads as a diff."""
    rows = ",\n".join("    " + json.dumps(entry) for entry in entries)
    return f'{{"about": {json.dumps(ABOUT)},\n "kernels": [\n{rows}\n]}}\n'


def main(argv: list[str]) -> int:
    new = text(recorded())
    if "--check" in argv:
        current = MANIFEST.read_text() if MANIFEST.is_file() else ""
        if current != new:
            print(f"{MANIFEST.relative_to(ROOT)} is not current: run python3 build.py manifest")
            return 1
        print("kernel manifest current")
        return 0
    MANIFEST.write_text(new)
    print(f"wrote {MANIFEST.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
