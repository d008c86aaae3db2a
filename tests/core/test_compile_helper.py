"""First use on two cores (issue 33): a helper process compiles the kernels other than the
direct solve's into numba's cache while the preparation compiles the solve, so that the first
frame comes sooner where the package ships no compiled kernels (Windows, macOS, Linux ARM).

What a user relies on: the helper's kernels are the ones the first frame then loads (named
by a manifest that matches the sources), the frame is the same frame, and a helper that has
done its work is not started again. Its time is the benchmark's (``python -m benchmarks
first_use``, docs/benchmarks.md).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest
from numba.core import types

from benchmarks import bench_first_use
from tools import kernel_manifest
from xpbd_addon.core import compile_helper
from xpbd_addon.core.kernel_cache import PYTHON_TAG, digest

ROOT = Path(__file__).resolve().parents[2]


def test_argument_types_survive_the_manifest() -> None:
    entries = compile_helper.load()
    assert entries, "no manifest"
    for entry in entries:
        for value in entry["args"]:
            numba_type = compile_helper.decode(value)
            assert compile_helper.encode(numba_type) == value
    assert compile_helper.decode({"literal": True}) == types.literal(True)
    with pytest.raises(ValueError, match="numba_type"):
        compile_helper.encode(types.unicode_type)


@pytest.mark.slow  # a cold compile in a new process
def test_the_manifest_is_what_the_sources_compile() -> None:
    recorded = kernel_manifest.text(kernel_manifest.recorded())
    assert recorded == compile_helper.MANIFEST.read_text(), (
        "the kernel manifest is not current: run python3 build.py manifest")


@pytest.fixture(scope="module")
def helped() -> dict:
    """An empty cache filled by the helper alone, then the default rope prepared and its
    first frame stepped in a new process with that cache (``bench_first_use.run_once``)."""
    with tempfile.TemporaryDirectory(prefix="xpbd-helper-") as cache:
        before = os.environ.get("NUMBA_CACHE_DIR")
        os.environ["NUMBA_CACHE_DIR"] = cache  # the helper's (this process has its own)
        try:
            helper = compile_helper.start()
            assert helper is not None
            code = helper.wait(timeout=900)
        finally:
            # this process's numba keeps its own cache folder, where start() claimed
            compile_helper._release()
            if before is None:
                del os.environ["NUMBA_CACHE_DIR"]
            else:
                os.environ["NUMBA_CACHE_DIR"] = before
        marks = [p.read_text() for p in Path(cache).rglob(
            compile_helper.DONE_MARK.format(python_tag=PYTHON_TAG))]
        result = bench_first_use.run_once(ROOT, "xpbd_addon", Path(cache), helper=False)
        over_a_prop = _first_frames(Path(cache), "prop")
        crossing = _first_frames(Path(cache), "crossing")
    result.update(code=code, marks=marks, over_a_prop=over_a_prop, crossing=crossing)
    return result


_PROP = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from numba.core import event
compiled = []
class Listener(event.Listener):
    def on_start(self, ev): pass
    def on_end(self, ev):
        function = ev.data["dispatcher"].py_func
        compiled.append(function.__module__ + "." + function.__qualname__)
event.register("numba:compile", Listener())
import numpy as np
from xpbd_addon import preparation
from xpbd_addon.core import step, warmup
from xpbd_addon.core.collision import Collider
from xpbd_addon.blender.write import io_kernels
# the default rope, or two crossing ropes with Self Collision (sys.argv[2] "crossing")
request = (preparation.colliding_request() if sys.argv[2] == "crossing"
           else preparation.default_request())
warmup.warm(request.model, request.substeps, meshes=True, air=request.air, part="first")
io_kernels.warm_tessellation()
box = np.array([[x, y, z] for x in (0.9, 1.1) for y in (-0.1, 0.1) for z in (-0.2, -0.02)])
faces = np.array([[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
                  [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]])
state = request.model.state()
for _ in range(6):  # falling onto a small box (a prop) under the rope's middle
    step(request.model, state, 1.0 / 24.0, request.substeps, colliders=[Collider(box, faces)])
# (the point over the box, 5 cm past its middle: resting on the box, not fallen past it)
print("COMPILED " + json.dumps({"compiled": compiled, "over_the_box": float(state.x[10, 2])}))
"""


def _first_frames(cache: Path, scene: str) -> dict:
    """What a new process with ``cache`` compiles to prepare and play the first frames of the
    default rope (``scene`` "prop"), or of two crossing ropes with Self Collision
    ("crossing"), over a mesh collider (a prop); and the height [m] of the first rope's point
    over the box then."""
    import subprocess

    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "PYTHON"))}
    env["NUMBA_CACHE_DIR"] = str(cache)
    done = subprocess.run([sys.executable, "-c", _PROP, str(ROOT), scene], env=env,
                          capture_output=True, text=True, timeout=900)
    lines = [line for line in done.stdout.splitlines() if line.startswith("COMPILED ")]
    assert lines, done.stdout[-2000:] + done.stderr[-3000:]
    return json.loads(lines[-1][len("COMPILED "):])


@pytest.mark.slow
def test_the_first_frame_loads_what_the_helper_compiled(helped: dict) -> None:
    assert helped["code"] == 0
    # what the preparation compiled itself: the direct solve's kernels only
    compiled = {name.removeprefix("xpbd_addon.") for name, *_ in helped["compiles"]}
    helpers = {e["kernel"] for e in compile_helper.load()
               if not e["inner"] and e["kernel"] not in compile_helper.HERE_KERNELS}
    assert helpers and not compiled & helpers, sorted(compiled & helpers)
    assert {"core.solve.kernels_direct_io.direct_substep_io_single"} <= compiled
    # the solve's kernels the helper takes first are found in the cache by the solve's
    # compile here (the same types: else this process compiled them again)
    first = set(compile_helper.HELPER_FIRST)
    assert first and not compiled & first, sorted(compiled & first)


@pytest.mark.slow
def test_a_first_rope_over_a_prop_loads_what_the_helper_compiled(helped: dict) -> None:
    """The helper compiles the kernels of mesh colliders too (Collision Objects is on by
    default): a first rope over a prop, later in the session, compiles none of its own."""
    compiled = {name.removeprefix("xpbd_addon.") for name in helped["over_a_prop"]["compiled"]}
    helpers = {e["kernel"] for e in compile_helper.load()
               if not e["inner"] and e["kernel"] not in compile_helper.HERE_KERNELS}
    assert any(".kernels_collider." in k for k in helpers)
    assert not compiled & helpers, sorted(compiled & helpers)
    assert helped["over_a_prop"]["over_the_box"] > -0.03  # (on the box: the contacts ran)


@pytest.mark.slow
def test_a_first_scene_of_colliding_ropes_loads_what_the_helper_compiled(helped: dict) -> None:
    """The helper compiles the kernels of ropes colliding with each other too (Self
    Collision, their contacts held in the solve), after the default rope's and the meshes':
    two crossing ropes with Self Collision over a prop, later in the session, compile
    nothing of their own, the solve that holds their contacts included (it took 26 s before
    a first such scene could play, docs/benchmarks.md)."""
    compiled = {name.removeprefix("xpbd_addon.") for name in helped["crossing"]["compiled"]}
    entries = compile_helper.load()
    collide = {e["kernel"] for e in compile_helper.helpers(entries)
               if compile_helper.part_of(e) in ("self_collision", "held")}
    assert {"core.solve.kernels_held.hold_contacts", "core.contacts.kernels_pairs.segment_pairs",
            compile_helper.HERE_KERNELS[1]} <= collide
    assert not compiled, sorted(compiled)
    assert helped["crossing"]["over_the_box"] > -0.03


@pytest.mark.slow
def test_a_helper_that_is_done_leaves_its_mark(helped: dict) -> None:
    """The mark holds the sources' hash: the next session starts no helper, and a change of
    the kernels (another hash) starts one again (``compile_helper.wanted``)."""
    assert helped["marks"] == [digest()]


@pytest.mark.slow
def test_the_helped_first_frame_is_the_ropes_first_frame(helped: dict) -> None:
    from xpbd_addon import preparation
    from xpbd_addon.core import Air, step
    from xpbd_addon.core.collision import Plane

    request = preparation.default_request()
    state = request.model.state()
    step(request.model, state, bench_first_use.FRAME_S, request.substeps,
         colliders=[Plane((0.0, 0.0, bench_first_use.GROUND_Z))],
         air=Air() if request.air else None)  # (Air on, as the benchmark steps it)
    np.testing.assert_array_equal(np.array(helped["x"]), state.x)
    np.testing.assert_array_equal(np.array(helped["v"]), state.v)


def test_no_helper_without_a_python_to_run_it(monkeypatch) -> None:
    """Inside a Blender whose ``sys.executable`` is Blender itself, nothing is started."""
    monkeypatch.setattr(sys, "executable", "/opt/blender/blender")
    assert not compile_helper.wanted()


def test_one_helper_at_a_time(tmp_path, monkeypatch) -> None:
    """However many Blender processes start at once (the test suite starts dozens), one
    helper runs per cache folder: a second start finds the claim and starts none; a claim
    left by a helper that died is taken over after ``CLAIM_S``."""
    monkeypatch.setattr(compile_helper, "_beside_the_cache", lambda name: tmp_path / name)
    assert compile_helper._claim()
    assert not compile_helper._claim()
    assert compile_helper.start() is None  # claimed: nothing started
    claim = tmp_path / compile_helper.RUNNING_MARK
    old = claim.stat().st_mtime - compile_helper.CLAIM_S - 1.0
    os.utime(claim, (old, old))
    assert compile_helper._claim()  # a dead helper's claim
    compile_helper._release()
    assert not claim.exists()
    assert compile_helper._claim()


_FROM_THE_END = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from xpbd_addon.core import compile_helper
from xpbd_addon.blender.write import io_kernels
entries = [e for e in compile_helper.load() if e["kernel"].startswith("blender.write.")
           and not e["inner"]]
if sys.argv[3] == "parts":  # the last two as a part the scene does not use
    entries = entries[:-2] + [dict(e, part="self_collision") for e in entries[-2:]]
compile_helper.load = lambda: entries  # a manifest of the write-back's kernels only
if sys.argv[2] == "helper":  # as the helper going forward: the first half
    compile_helper._compile(entries[:len(entries) // 2])
    print("RESULT " + json.dumps(len(entries)))
else:  # this process from the other end, for a scene with meshes (no Self Collision)
    count = compile_helper.compile_from_the_end(("default", "meshes"))
    names = [e["kernel"].rpartition(".")[2] for e in entries]
    here = [bool(getattr(io_kernels, name).overloads) for name in names]
    print("RESULT " + json.dumps({"count": count, "here": here}))
"""


@pytest.mark.parametrize("manifest", ["one part", "parts"])
def test_this_process_compiles_the_helpers_kernels_from_the_other_end(tmp_path,
                                                                     manifest) -> None:
    """A first rope over a prop: while the helper works through the manifest forward, this
    process compiles it from the end backward and stops at the first kernel the helper has
    put in the cache, so that the two meet in the middle rather than compile the same
    kernels one after the other (the first scene over a box ready in 21 s instead of 29,
    docs/benchmarks.md). The kernels of a part the scene does not use (Self Collision, for
    a rope over a prop) are left to the helper."""
    import subprocess

    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "PYTHON"))}
    env["NUMBA_CACHE_DIR"] = str(tmp_path)

    def run(role: str):
        done = subprocess.run([sys.executable, "-c", _FROM_THE_END, str(ROOT), role, manifest],
                              env=env, capture_output=True, text=True, timeout=600)
        lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
        assert lines, done.stdout[-2000:] + done.stderr[-3000:]
        return json.loads(lines[-1][len("RESULT "):])

    count = run("helper")
    assert count >= 6
    result = run("this process")
    half = count // 2
    # the second half compiled here, from the end; the first kernel of the helper's half
    # that it met came from the cache, and nothing before it was touched
    if manifest == "parts":  # the last two, of a part the scene does not use: not here
        assert result["count"] == count - half - 2
        assert result["here"] == [False] * (half - 1) + [True] * (count - half - 1) + [False] * 2
    else:
        assert result["count"] == count - half
        assert result["here"] == [False] * (half - 1) + [True] * (count - half + 1)


def _literal_twins(entries: list[dict]) -> list[str]:
    """The kernels the manifest holds twice, once with an integer argument typed as a
    literal (``count = 0``'s first type) and once as int64."""
    def twin(a: list, b: list) -> bool:
        return a != b and len(a) == len(b) and all(
            x == y or (isinstance(x, dict) and type(x.get("literal")) is int and y == "int64")
            for x, y in zip(a, b, strict=True))

    return sorted({e["kernel"] for e in entries for f in entries
                   if e["kernel"] == f["kernel"] and twin(e["args"], f["args"])})


def test_no_kernel_compiles_twice_for_a_counter_started_at_zero() -> None:
    """A counter started as ``count = 0`` and passed to a kernel is typed first as the literal
    0, and numba compiled the callee for that and again for int64 (0.1-0.8 s each on a first
    use: the rope-rope search's ``_extra_grid_pairs``, the meshes' ``feature_normal``, ...).
    The manifest (current: ``test_the_manifest_is_what_the_sources_compile``) lists every
    compile of a first session's preparation; where a kernel takes a literal on purpose
    (``jit.lane_flag``) it is a literal in every entry."""
    assert not _literal_twins(compile_helper.load())
    # (the check finds them: the manifest before the counters were started as int64)
    doubled = [e for e in compile_helper.load() if e["kernel"].endswith(".doubled")]
    assert len(doubled) == 1
    literal = json.loads(json.dumps(doubled[0]))
    literal["args"][1] = {"literal": 0}
    assert _literal_twins([doubled[0], literal]) == [doubled[0]["kernel"]]
