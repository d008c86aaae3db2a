"""First use on two cores: a second process compiles half of the default rope's kernels.

Where the package carries no compiled kernels for this platform, the first rope waits for
numba to compile them, and numba compiles one kernel at a time per process. So while this
process compiles the stable direct solve (the largest part), a helper process compiles the
rest (the write-back's checks, the frame's pins and checks, the contacts with a ground,
sleeping) into the same on-disk cache, from which this process then loads them in
milliseconds; then the kernels of mesh colliders, which a first rope over a prop needs
later in the session, and those of ropes colliding with each other (Self Collision).
docs/benchmarks.md (first use) has the figures.

What the helper compiles is named in ``kernel_manifest.json``: each kernel that the default
rope's preparation compiles, with the argument types numba compiled it for (those it calls
from Python are the helper's; the kernels they call come with them)
(``record`` writes it: ``python3 build.py manifest``; ``tests/core/test_compile_helper.py``
checks that it is current). A kernel the helper compiled for other types, or not in time, is
compiled here as without the helper: at worst the helper's time is lost, never a result.

- The helper is a plain Python process (``sys.executable``: Blender's own Python, or the
  bpy module's) with this process's module path. It imports the kernels under the package's
  own name without running the add-on's ``__init__`` (which needs bpy), so numba files them
  under the same names.
- Two processes writing one numba cache is safe: numba writes each file whole and replaces
  it; at worst one's index entry is lost and that kernel compiles again later.
- ``wanted``: only where this helps (two cores or more, the manifest's kernels not already
  compiled for these sources: the helper leaves a mark when it is done); ``start``: one
  helper at a time per cache folder, however many Blender processes start meanwhile (a
  claim file made with O_EXCL; the test suite starts dozens).
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

CORE = Path(__file__).parent

MANIFEST = CORE / "kernel_manifest.json"
"""The kernels of the default rope's preparation with their argument types (``record``)"""

PARTS = ("default", "meshes", "self_collision", "held")
"""The manifest's parts, in its order, each what a first scene of its kind adds to those
before it: the default rope (at launch, over a ground, the write-back's kernels); over a
mesh collider (a prop); with Self Collision; two such ropes, whose contacts with each other
the solve holds (``tools/kernel_manifest.py``)"""

HERE_KERNELS = ("core.solve.kernels_frame.direct_frame_single",
                "core.solve.kernels_direct_io.direct_substep_io_single",
                "core.solve.kernels_resolve.direct_resolve_single")
"""Kernels left to this process's preparation where the default rope's manifest part names
them: the direct solve's entries (a whole frame, a substep, the re-solve after contacts),
which share the chain solve's kernels (compiled once, here, while the helper compiles the
rest); the helper takes every other entry of the manifest (``helpers``), those of the other
parts included (the solve with contacts held between ropes: a first scene of colliding
ropes may come at any time in the session)"""

LANDING_KERNELS = ("core.solve.kernels_direct_io.gather_moved", HERE_KERNELS[2],
                   "core.solve.kernels_resolve.scatter_ropes")
"""The re-solve after a hard landing (the ropes whose segments the contacts stretched, solved
again, and put back): a rope dropped on a prop needs it within its first frames"""

HELPER_FIRST = ("core.solve.kernels_direct.limit_chain",
                "core.solve.kernels_direct._update_velocity",
                "core.solve.kernels_sleep.measure_still")
"""What the helper compiles first: the kernels of the chain solve that this process
reaches last while it compiles the solve (numba compiles a kernel's callees as it types
it, in the order it meets them), and the first frame's last kernel, which the helper
otherwise reached after this process had compiled it (``bench first_use``): so that this
process finds them in the cache by then"""

DONE_MARK = "xpbd-helper.{python_tag}.done"
"""The helper's mark in the solver's cache folder: the hash of the kernel sources it
compiled (``kernel_cache.digest``). With it current, no helper is started."""

RUNNING_MARK = "xpbd-helper.{python_tag}.running"
"""The claim of the helper running for a cache folder: one at a time, however many Blender
processes start meanwhile (``start``)"""

CLAIM_S = 300.0
"""Age [s] after which a claim is taken as left by a helper that died (one takes about
20 s on the 2-core test machine)"""

_CHILD = r"""
import importlib, sys, types
package, folder = sys.argv[1], sys.argv[2]
parts = package.split(".")
for i in range(1, len(parts) + 1):  # the package and its parents, without their __init__
    module = types.ModuleType(".".join(parts[:i]))
    module.__path__ = [folder] if i == len(parts) else []
    sys.modules.setdefault(module.__name__, module)
importlib.import_module(package + ".core.compile_helper").run_helper()
"""


# --- argument types as JSON ---------------------------------------------------------------

def encode(numba_type: Any) -> Any:
    """A numba argument type as JSON (the kinds the kernels take; ValueError otherwise)."""
    from numba.core import types

    if isinstance(numba_type, types.Array):
        return {"array": encode(numba_type.dtype), "ndim": numba_type.ndim,
                "layout": numba_type.layout, "readonly": not numba_type.mutable}
    if isinstance(numba_type, types.UniTuple):
        return {"unituple": encode(numba_type.dtype), "count": numba_type.count}
    if isinstance(numba_type, types.Tuple):
        return {"tuple": [encode(item) for item in numba_type.types]}
    if isinstance(numba_type, types.Literal):
        return {"literal": numba_type.literal_value}
    if isinstance(numba_type, types.NoneType):
        return "none"
    if isinstance(numba_type, (types.Integer, types.Float, types.Boolean)):
        return str(numba_type)
    raise ValueError(f"numba_type: {numba_type!r} has no JSON form here")


def decode(value: Any) -> Any:
    """The numba type ``encode`` made ``value`` from."""
    from numba.core import types

    if isinstance(value, str):
        return {"none": types.none, "bool": types.boolean}.get(value) or getattr(types, value)
    if "array" in value:
        return types.Array(decode(value["array"]), value["ndim"], value["layout"],
                           readonly=value["readonly"])
    if "unituple" in value:
        return types.UniTuple(decode(value["unituple"]), value["count"])
    if "tuple" in value:
        return types.Tuple([decode(item) for item in value["tuple"]])
    return types.literal(value["literal"])


# --- the manifest ---------------------------------------------------------------------------

def record(steps: Any) -> list[dict]:
    """Run ``steps()`` (a preparation, in a process whose kernel cache is empty) and return
    the kernels it compiled, in the order their compiles ended, each with its argument types
    and whether it was compiled for a kernel calling it (``inner``) rather than for a call
    from Python: the manifest's entries."""
    from numba.core import event

    package = __name__.rpartition(".core.")[0]
    entries: list[dict] = []
    depth = [0]

    class Listener(event.Listener):
        def on_start(self, ev: Any) -> None:
            depth[0] += 1

        def on_end(self, ev: Any) -> None:
            depth[0] -= 1
            function = ev.data["dispatcher"].py_func
            if function.__module__.startswith(package + "."):
                entries.append({"kernel": function.__module__[len(package) + 1:]
                                + "." + function.__qualname__,
                                "args": [encode(t) for t in ev.data["args"]],
                                "inner": depth[0] > 0})

    listener = Listener()
    event.register("numba:compile", listener)
    try:
        steps()
    finally:
        event.unregister("numba:compile", listener)
    return entries


def load() -> list[dict]:
    """The manifest's entries ([] if it cannot be read)."""
    try:
        return json.loads(MANIFEST.read_text())["kernels"]
    except (OSError, ValueError, KeyError):
        return []


def part_of(entry: dict) -> str:
    """The manifest part (``PARTS``) of ``entry``"""
    return entry.get("part", PARTS[0])


def helpers(entries: list[dict]) -> list[dict]:
    """The helper's share of the manifest's ``entries``, in order: each kernel called from
    Python (its callees come with it), but the direct solve's of the default part, which
    this process compiles (``HERE_KERNELS``)."""
    return [e for e in entries if not e["inner"]
            and not (e["kernel"] in HERE_KERNELS and part_of(e) == PARTS[0])]


def _compile(entries: list[dict]) -> int:
    """Compile (or load) each entry's kernel for its argument types; one that fails is left
    to its first real call. Returns how many this process compiled."""
    return sum(_compile_one(entry) for entry in entries)


def _compile_one(entry: dict) -> bool:
    """Compile (or load) one entry's kernel; True if this process compiled it, False if it
    was loaded from the cache, was here already or failed (left to its first real call)."""
    package = __name__.rpartition(".core.")[0]
    module_name, _, name = entry["kernel"].rpartition(".")
    try:
        kernel = getattr(importlib.import_module(f"{package}.{module_name}"), name)
        before = sum(kernel.stats.cache_misses.values())
        kernel.compile(tuple(decode(arg) for arg in entry["args"]))
        return sum(kernel.stats.cache_misses.values()) > before
    except Exception:  # noqa: BLE001 - a stale entry only costs the time it saves
        return False


def compile_manifest() -> int:
    """Every kernel the manifest names that is called from Python, by its types (its callees
    come with it): the kernels of a first session's scenes, which the package ships compiled
    for its platform (``tools/precompile.py``). Returns how many this process compiled."""
    return _compile([e for e in load() if not e["inner"]])


def compile_solve(contacts: bool, *, held: bool = False) -> None:
    """This process's first share while a helper runs: the direct solve, a substep per call
    (``contacts``: a frame with colliders, air, a damping map or a rod,
    ``solver._advance_with_contacts``) or a whole frame per call, by its manifest types,
    before the preparation's steps reach the checks before the solve (which the helper
    compiles first, meanwhile). ``held``: the solve of ropes whose contacts with each other
    it holds (two ropes or more with Self Collision), whose types the part "held" names;
    else the default rope's."""
    name = HERE_KERNELS[1] if contacts else HERE_KERNELS[0]
    part = PARTS[3] if held else PARTS[0]
    _compile([e for e in load() if e["kernel"] == name and part_of(e) == part])


def compile_landing(parts: tuple[str, ...] = PARTS[:2]) -> int:
    """The re-solve after a hard landing (``LANDING_KERNELS``) by the types the manifest's
    ``parts`` name, before a first rope over a prop plays (else the warm-up's part "rest"
    compiles it while the rope plays, and the frame it lands in waits for it: 1.1 s on one
    core). Returns how many this process compiled."""
    return _compile([e for e in load()
                     if e["kernel"] in LANDING_KERNELS and part_of(e) in parts])


def compile_from_the_end(parts: tuple[str, ...] = PARTS[:2]) -> int:
    """This process's second share while a helper runs, where the first scene has mesh
    colliders or ropes colliding with each other (the manifest's ``parts`` it needs, whose
    kernels come after the default rope's): the re-solve after a landing
    (``compile_landing``), then the helper's kernels of those parts from the manifest's end
    backward, while the helper works forward, until one comes from the cache: the two
    processes meet in the middle instead of compiling the same kernels one after the other.
    Returns how many this process compiled."""
    compiled = compile_landing(parts)
    for entry in reversed(helpers(load())):
        if part_of(entry) not in parts:
            continue  # (a part this scene does not use: the helper's alone)
        if not _compile_one(entry):
            break  # the helper was here (or it failed, which the warm-up then meets)
        compiled += 1
    return compiled


def run_helper() -> None:
    """The helper process: the solve's kernels this process reaches last
    (``HELPER_FIRST``), then its share of the manifest (``helpers``), in order; then the
    mark, and its claim given up (``start``)."""
    try:
        entries = load()
        _compile([e for e in entries if e["kernel"] in HELPER_FIRST and part_of(e) == PARTS[0]]
                 + helpers(entries))
        mark = done_mark()
        if mark is not None:
            from .kernel_cache import digest

            mark.write_text(digest())
    finally:
        _release()


# --- starting it ----------------------------------------------------------------------------

def done_mark() -> Path | None:
    """Where the helper leaves its mark (``DONE_MARK``), None if numba cannot tell."""
    return _beside_the_cache(DONE_MARK)


def _beside_the_cache(name: str) -> Path | None:
    from .kernel_cache import PYTHON_TAG, cache_folder

    folder = cache_folder(CORE / "solve")
    return None if folder is None else folder / name.format(python_tag=PYTHON_TAG)


def _claim() -> bool:
    """Take the one helper's place for this cache folder (``RUNNING_MARK``, made whole or
    not at all); False while another process's helper runs. A claim older than
    ``CLAIM_S`` is taken as left by a helper that died, and taken over."""
    claim = _beside_the_cache(RUNNING_MARK)
    if claim is None:
        return False
    try:
        claim.parent.mkdir(parents=True, exist_ok=True)
        try:
            if time.time() - claim.stat().st_mtime > CLAIM_S:
                claim.unlink()
        except FileNotFoundError:
            pass
        os.close(os.open(claim, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        return True
    except OSError:  # another helper runs (or the folder cannot be written)
        return False


def _release() -> None:
    claim = _beside_the_cache(RUNNING_MARK)
    try:
        if claim is not None:
            claim.unlink()
    except OSError:
        pass


def wanted() -> bool:
    """True where a helper would shorten the first use: two cores or more, a Python to run
    it, and the manifest's kernels not yet compiled for the current kernel sources."""
    from .kernel_cache import digest

    if (os.cpu_count() or 1) < 2 or not Path(sys.executable).name.lower().startswith("python"):
        return False
    try:
        mark = done_mark()
        return mark is None or not mark.is_file() or mark.read_text() != digest()
    except OSError:
        return True


def start() -> subprocess.Popen | None:
    """Start the helper process (None where it cannot start, or where another process's
    helper runs for the same cache: one at a time, ``_claim``); the caller then runs its
    preparation, and ``poll``s or ``wait``s the process later."""
    if not _claim():
        return None
    package = __name__.rpartition(".core.")[0]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    try:
        return subprocess.Popen(
            [sys.executable, "-c", _CHILD, package, str(CORE.parent)], env=env,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            creationflags=getattr(subprocess, "CREATE_NO_WINDOW", 0))
    except OSError:
        _release()
        return None
