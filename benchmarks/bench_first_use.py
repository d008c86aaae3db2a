"""First use without precompiled kernels (issue 33): from an empty numba cache, how long until
the default rope's first frame, and which kernels compile for it, each with its time.

    python -m benchmarks first_use [--repeat=3] [--ref=COMMIT] [--prop | --crossing] [--ahead]

Measured with the compile helper process (``core.compile_helper``: a second process compiles
the kernels other than the direct solve's, as the preparation thread starts it) and in one
process, as before it.

Each run is a new Python process with an empty ``NUMBA_CACHE_DIR`` (and ``NUMBA_CPU_NAME``
unset: the host CPU, as on a platform without precompiled kernels). It imports the core,
builds the rope that Add > Curve > XPBD Rope makes (``preparation.default_request``: 20
points over 2 m, first pinned, S = 10, default settings, Air on) and prepares it as the
add-on's preparation thread does for a rope with a ground plane (``core.warmup.warm(...,
ground=True, air=True)`` and the write-back's kernels, ``blender.write.io_kernels.warm``),
then steps its first frame (from rest, a ground plane 5 cm below, in still air): everything
the first frame compiles. (Until 2026-12-07 it left the air out.)
Reported: the time from the start of the import to the end of that
(the figure the targets are about: goal 2 s, target 4 s on the 2-core machine), the same
with the cache filled (a second process), and per kernel signature its own compile time
(CPU time between numba's ``numba:compile`` events, minus the kernels compiled inside it;
an inlined helper is compiled inside its caller) in a table for docs/benchmarks.md.

``--prop``: the same rope over a prop instead of a ground (a 1 m box with Collision 5 cm
below it: the kernels of mesh colliders, ``warm(..., meshes=True)``), as a first scene of a
rope hung over a railing or a table needs them. ``--crossing``: two such ropes with Self
Collision, the second crossing 5 cm above the first, over the same box (the kernels of ropes
colliding with each other too, ``preparation.colliding_request``). ``--ahead``: the helper
has run to its end before the scene (as when it started at Blender's launch: the scene comes
later in the session), so only what it does not compile is compiled here.

``--ref=COMMIT`` measures that commit's package in the same turns (extracted as
``bench_collision_ab`` does), for a before/after on one machine state.
"""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

FRAME_S = 1.0 / 24.0
"""The first frame's length [s]"""

GROUND_Z = -0.05
"""Height of the first frame's ground plane [m] (the default rope lies along x at z = 0)"""

_CHILD = r"""
import inspect, json, sys, time
FRAME_S, GROUND_Z = float(sys.argv[3]), float(sys.argv[4])
if sys.argv[7] == "ahead":  # the helper started at launch and done before the scene
    sys.path.insert(0, sys.argv[1])
    import importlib
    ahead = importlib.import_module(sys.argv[2] + ".core.compile_helper").start()
    if ahead is not None:
        ahead.wait()
SCENE = sys.argv[6]
PROP = SCENE in ("prop", "crossing")
CROSSING = SCENE == "crossing"
start = time.perf_counter()
cpu_start = time.process_time()
sys.path.insert(0, sys.argv[1])
package = sys.argv[2]
import importlib
from numba.core import event

compiles = []   # (name, signature, inclusive seconds, depth, own LLVM seconds)
stack = []      # [start, LLVM seconds] of the compiles under way, innermost last


class Timer(event.Listener):
    def on_start(self, ev):
        stack.append([time.process_time(), 0.0])

    def on_end(self, ev):
        began, llvm = stack.pop()
        data = ev.data
        dispatcher = data["dispatcher"]
        name = f"{dispatcher.py_func.__module__}.{dispatcher.py_func.__qualname__}"
        compiles.append((name, str(data["args"]), time.process_time() - began, len(stack),
                         llvm))


class Llvm(event.Listener):
    def on_start(self, ev):
        self.began = time.process_time()

    def on_end(self, ev):
        if stack:
            stack[-1][1] += time.process_time() - self.began


event.register("numba:compile", Timer())
event.register("numba:llvm_lock", Llvm())
core = importlib.import_module(package + ".core")
def module(*names):
    # the first of names the package has (a --ref commit may name it otherwise)
    for name in names:
        try:
            return importlib.import_module(package + name)
        except ModuleNotFoundError:
            continue
    raise ModuleNotFoundError(names[0])


prepare = module(".core.warmup", ".core.prepare")
preparation = importlib.import_module(package + ".preparation")
imported = time.perf_counter() - start
try:  # as the preparation thread starts it, where the package has one
    helper_module = importlib.import_module(package + ".core.compile_helper")
except ModuleNotFoundError:
    helper_module = None
use_helper = sys.argv[5] == "1" and helper_module is not None and helper_module.wanted()
helper = helper_module.start() if use_helper else None
def takes(function, name):
    return name in inspect.signature(function).parameters
if helper is not None and hasattr(helper_module, "compile_solve"):
    if CROSSING and takes(helper_module.compile_solve, "held"):
        helper_module.compile_solve(True, held=True)
    else:
        helper_module.compile_solve(True)
if helper is not None and PROP and hasattr(helper_module, "compile_from_the_end"):
    if CROSSING and takes(helper_module.compile_from_the_end, "parts"):
        helper_module.compile_from_the_end(helper_module.PARTS)
    else:
        helper_module.compile_from_the_end()
request = preparation.default_request()
if CROSSING:  # two of them, with Self Collision, crossing (as ``colliding_request``)
    import numpy as np
    first = np.zeros((20, 3))
    first[:, 0] = np.linspace(0.0, 2.0, 20)
    second = np.zeros((20, 3))
    second[:, 0], second[:, 1], second[:, 2] = 1.0, np.linspace(-1.0, 1.0, 20), 0.05
    inv_mass = np.full(40, 20.0)
    inv_mass[[0, 20]] = 0.0
    edges = np.array([[i, i + 1] for i in (*range(19), *range(20, 39))])
    import dataclasses
    request = dataclasses.replace(request, model=core.Model(
        np.concatenate([first, second]), edges, inv_mass, 1e-6, damping=0.1, radius=0.01,
        self_collision=True))
# as the preparation thread: a first frame's kernels, then the rope may play (where the
# package has the two parts) while the rest compiles
parts = "part" in inspect.signature(prepare.warm).parameters
# the Add-menu rope moves through air (where the package has it), as its first frame does
air = getattr(request, "air", False) and "air" in inspect.signature(prepare.warm).parameters
options = {"air": True} if air else {}
options.update({"meshes": True} if PROP else {"ground": True})
if parts:
    prepare.warm(request.model, request.substeps, part="first", **options)
else:
    prepare.warm(request.model, request.substeps, **options)
solver_ready = time.perf_counter() - start
io = module(".blender.write.io_kernels", ".blender.io_kernels")
io.warm()
if PROP:  # a mesh collider's first frame also draws the rope's tessellation
    io.warm_tessellation()
# the first frame itself: the rope from rest, its ground (or the prop's top) 5 cm below it
collision = importlib.import_module(package + ".core.collision")
if PROP:  # a 1 m box under the rope's middle, its top at GROUND_Z
    import numpy as np
    corners = np.array([[i, j, k] for i in (0.5, 1.5) for j in (-0.5, 0.5)
                        for k in (GROUND_Z - 1.0, GROUND_Z)])
    faces = np.array([[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
                      [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]])
    ground = collision.Collider(corners, faces)
else:
    ground = collision.Plane((0.0, 0.0, GROUND_Z))
state = request.model.state()
before_frame = len(compiles)
core.step(request.model, state, FRAME_S, request.substeps, colliders=[ground],
          **({"air": core.Air()} if air else {}))
in_frame = [name for name, *_ in compiles[before_frame:]]
by_first_frame = len(compiles)
total = time.perf_counter() - start
cpu = time.process_time() - cpu_start
# the frame after it (a handler catching up two frames steps both before the rest of the
# kernels is ready): it starts from the tension the first one carried
first_x, first_v = state.x.tolist(), state.v.tolist()
before_second = len(compiles)
core.step(request.model, state, FRAME_S, request.substeps, colliders=[ground],
          **({"air": core.Air()} if air else {}))
in_second_frame = [name for name, *_ in compiles[before_second:]]
if parts:
    prepare.warm(request.model, request.substeps, part="rest",
                 **{k: v for k, v in options.items() if k != "air"})
everything_s = time.perf_counter() - start
if helper is not None:
    helper.wait()
helper_s = time.perf_counter() - start if helper is not None else None
print("RESULT " + json.dumps({"import_s": imported, "solver_s": solver_ready,
                              "total_s": total, "cpu_s": cpu, "compiles": compiles,
                              "helper_s": helper_s, "in_frame": in_frame,
                              "in_second_frame": in_second_frame,
                              "everything_s": everything_s, "by_first_frame": by_first_frame,
                              "x": first_x, "v": first_v}))
"""


def exclusive(compiles: list) -> list[tuple[str, str, float, float]]:
    """(kernel, signature, own seconds, of which LLVM) from the events (children end before
    their parent, one level deeper)."""
    out = []
    pending: dict[int, float] = {}  # depth -> seconds of finished children at that depth + 1
    for name, signature, seconds, depth, llvm in compiles:
        children = pending.pop(depth + 1, 0.0)
        out.append((name, signature, seconds - children, llvm))
        pending[depth] = pending.get(depth, 0.0) + seconds
    return out


def run_once(tree: Path, package: str, cache: Path, helper: bool = True,
             scene: str = "ground", ahead: bool = False) -> dict:
    """One new process preparing the default rope, numba's cache in ``cache``; ``helper``:
    with the compile helper process where the package has one (``core.compile_helper``);
    ``scene``: "ground", "prop" (over a box rather than a ground) or "crossing" (two
    colliding ropes over the box); ``ahead``: the helper has filled the cache before the
    timer starts (as when it started at Blender's launch, long before the scene)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "PYTHON"))}
    env["NUMBA_CACHE_DIR"] = str(cache)
    done = subprocess.run([sys.executable, "-c", _CHILD, str(tree), package, repr(FRAME_S),
                           repr(GROUND_Z), "1" if helper else "0",
                           scene, "ahead" if ahead else "cold"], env=env,
                          capture_output=True, text=True, timeout=900)
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    if done.returncode or not lines:
        raise RuntimeError(f"child failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return json.loads(lines[-1][len("RESULT "):])


def measure(tree: Path, package: str, helper: bool, scene: str = "ground",
            ahead: bool = False) -> tuple[dict, dict]:
    """(cold, warm): an empty cache, then the same cache in a second process."""
    with tempfile.TemporaryDirectory(prefix="xpbd-first-use-") as cache:
        cold = run_once(tree, package, Path(cache), helper, scene, ahead and helper)
        warm = run_once(tree, package, Path(cache), helper, scene)
    return cold, warm


def table(cold: dict) -> str:
    """The per-kernel compile table (markdown), slowest first."""
    rows = sorted(exclusive(cold["compiles"]), key=lambda r: -r[2])
    lines = ["| kernel | literal arguments | compile [s] | of which LLVM [s] |",
             "|---|---|---|---|"]
    for name, signature, seconds, llvm in rows:
        short = name.split(".core.", 1)[-1].split(".blender.", 1)[-1]
        literals = ", ".join(re.findall(r"Literal\[\w+\]\((\w+)\)", signature))
        lines.append(f"| {short} | {literals} | {seconds:.2f} | {llvm:.2f} |")
    total = sum(r[2] for r in rows)
    llvm = sum(r[3] for r in rows)
    lines.append(f"| **{len(rows)} compiles** | | **{total:.2f}** | **{llvm:.2f}** |")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    from benchmarks.bench_collision_ab import _package_at

    repeat, ref = 3, None
    scene = next((name for name in ("prop", "crossing") if f"--{name}" in argv), "ground")
    what = {"ground": "default rope with a ground", "prop": "default rope over a box",
            "crossing": "two crossing ropes with Self Collision over a box"}[scene]
    for arg in argv:
        if arg.startswith("--repeat="):
            repeat = int(arg.split("=", 1)[1])
        elif arg.startswith("--ref="):
            ref = arg.split("=", 1)[1]
    with tempfile.TemporaryDirectory() as directory:
        trees = {"working tree": (ROOT, "xpbd_addon", True),
                 "working tree, one process": (ROOT, "xpbd_addon", False)}
        if ref:
            trees = {ref: (Path(directory), _package_at(ref, Path(directory)), True), **trees}
        results: dict[str, list[tuple[dict, dict]]] = {name: [] for name in trees}
        for _ in range(repeat):
            for name, (tree, package, helper) in trees.items():
                results[name].append(measure(tree, package, helper, scene,
                                             "--ahead" in argv))
    for name, runs in results.items():
        totals = [cold["total_s"] for cold, _ in runs]
        warms = [warm["total_s"] for _, warm in runs]
        cpus = [cold["cpu_s"] for cold, _ in runs]
        print(f"\n{name}: {what}, first frame from an empty cache: "
              f"min {min(totals):.2f} s, median {statistics.median(totals):.2f} s "
              f"({', '.join(f'{t:.2f}' for t in totals)}); CPU time min {min(cpus):.2f} s, "
              f"median {statistics.median(cpus):.2f} s; of which import "
              f"{statistics.median(c['import_s'] for c, _ in runs):.2f} s; "
              f"{len(runs[0][0]['compiles'])} compiles; cache filled: "
              f"{statistics.median(warms):.2f} s")
        print(f"  every kernel of the preparation compiled at "
              f"{statistics.median(c.get('everything_s', c['total_s']) for c, _ in runs):.2f} s; "
              f"compiled by the first frame itself: {runs[0][0].get('in_frame')}, "
              f"by the second: {runs[0][0].get('in_second_frame')}")
        helpers = [cold["helper_s"] for cold, _ in runs if cold.get("helper_s")]
        if helpers:
            print(f"  compile helper process done at {statistics.median(helpers):.2f} s "
                  f"(median, from the start)")
        best = min(runs, key=lambda r: r[0]["total_s"])[0]
        print(table(best))
    print("JSON " + json.dumps({name: [c for c, _ in runs] for name, runs in results.items()}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
