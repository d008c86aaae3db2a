"""First use without precompiled kernels (issue 33): a new process with an empty kernel cache
prepares the default rope (Add > Curve > XPBD Rope, with a ground plane) and simulates its
first frame, as on Windows, macOS or Linux ARM, where the package ships no compiled kernels.

What a user relies on: that first frame is the rope's real first frame (the same bits as a
process whose kernels were compiled long ago), it comes in seconds, and only what the scene
uses is compiled for it. The time is printed (``pytest -s``); it and its targets (goal 2 s,
target 4 s) are the benchmark's (``python -m benchmarks first_use``, docs/benchmarks.md), not
a unit test's, which a busy machine would fail. Checked here is what sets it: which kernels,
and how many, the first frame waits for.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest

from benchmarks import bench_first_use
from xpbd_addon import preparation
from xpbd_addon.core import Air, step
from xpbd_addon.core.collision import Plane

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow  # a cold compile every run (8 s of CPU): not in --quick

FIRST_FRAME_KERNELS = 40
"""Most of the add-on's kernel specialisations the cold first frame may compile in one
process (its preparation's part "first" and the write-back's): 35 now (numba 0.68), each
0.05-4 s. A kernel path added to the first frame, or a kernel compiled twice (for a literal,
for another layout), shows here; the seconds are the benchmark's. (Until session 25 a bound
on the CPU time, 12 s, which a busy machine exceeded once.)"""


@pytest.fixture(scope="module")
def cold() -> dict:
    """One new process, empty cache: the default rope prepared and its first frame."""
    with tempfile.TemporaryDirectory(prefix="xpbd-first-use-") as cache:
        result = bench_first_use.run_once(ROOT, "xpbd_addon", Path(cache), helper=False)
    kernels = sorted({name for name, *_ in result["compiles"]})
    print(f"\ncold first frame of the default rope with a ground: {result['total_s']:.2f} s "
          f"({result['cpu_s']:.2f} s CPU, import {result['import_s']:.2f} s), "
          f"{len(result['compiles'])} kernels compiled")
    result["kernels"] = kernels
    return result


def test_the_first_frame_from_an_empty_cache_is_the_ropes_first_frame(cold: dict) -> None:
    request = preparation.default_request()
    state = request.model.state()
    step(request.model, state, bench_first_use.FRAME_S, request.substeps,
         colliders=[Plane((0.0, 0.0, bench_first_use.GROUND_Z))],
         air=Air() if request.air else None)  # (Air on, as the benchmark steps it)
    x, v = np.array(cold["x"]), np.array(cold["v"])
    # the same bits as kernels compiled in another process (this one's)
    np.testing.assert_array_equal(x, state.x)
    np.testing.assert_array_equal(v, state.v)
    # and a real frame: the pinned end stays, the rest falls, nothing below the ground
    rest = request.model.state().x
    assert np.array_equal(x[0], rest[0])
    assert np.all(x[1:, 2] < rest[1:, 2])
    assert x[:, 2].min() >= bench_first_use.GROUND_Z


def test_the_cold_first_frame_compiles_few_kernels(cold: dict) -> None:
    first = [name for name, *_ in cold["compiles"][:cold["by_first_frame"]]
             if name.startswith("xpbd_addon.")]
    print(f"\nkernels the cold first frame compiled: {len(first)}")
    assert first and len(first) <= FIRST_FRAME_KERNELS, sorted(first)


def test_only_what_the_default_rope_uses_is_compiled(cold: dict) -> None:
    """No bending (its rope has none), no 16-lane or threaded kernels (one rope), no mesh
    collider's kernels (a ground plane only)."""
    kernels = cold["kernels"]
    assert kernels, "nothing was compiled: the cache was not empty"
    assert not [k for k in kernels if ".kernels_joint." in k], kernels
    assert not [k for k in kernels if k.endswith(("_parallel", ".direct_substep_io",
                                                  ".direct_resolve", ".quad_tessellation"))]
    assert not [k for k in kernels if ".kernels_collider.face_normal" in k], kernels


def test_the_first_frame_waits_only_for_its_own_kernels(cold: dict) -> None:
    """The preparation compiles a first frame's kernels (``warmup.warm(part="first")``),
    then lets the rope play while the rest compiles (``part="rest"``): the first frame
    compiles nothing itself, and the re-solve after a hard landing, which the first frame
    does not run, comes after it."""
    assert cold["in_frame"] == []
    names = [name for name, *_ in cold["compiles"]]
    later = names[cold["by_first_frame"]:]
    assert any(name.endswith("kernels_resolve.direct_resolve_single") for name in later)
    assert not any("kernels_resolve.direct_resolve" in name
                   for name in names[:cold["by_first_frame"]])


def test_a_part_of_the_warm_up_is_named() -> None:
    from xpbd_addon.core import warmup

    request = preparation.default_request()
    with pytest.raises(ValueError, match="part"):
        warmup.warm(request.model, request.substeps, part="most")


def test_the_frame_after_the_first_compiles_nothing_either(cold: dict) -> None:
    """A handler catching up from the rest frame to its third steps two frames while the
    rest of the kernels still compiles: the second starts from the tension the first left
    in the State (``State.tension``), whose kernel the first part must have compiled too
    (a Blender frame compiled it on the main thread, stalling it)."""
    assert cold["in_second_frame"] == []


@pytest.mark.parametrize("radius", [1e6, 1e30])
def test_the_warm_up_takes_a_radius_far_beyond_any_ropes(radius: float) -> None:
    """A Radius typed as 1e6 m (the field has no hard maximum): the preparation still
    compiles the rope's kernels. Its colliders stood that many radii away, beyond the
    coordinates a collider accepts, and the warm-up failed with a traceback in the console
    (found by the fuzz sessions)."""
    from xpbd_addon.core import Model, warmup

    x = np.zeros((8, 3))
    x[:, 0] = np.linspace(0.0, 1.0, 8)
    edges = np.stack([np.arange(7), np.arange(1, 8)], axis=1)
    model = Model(x, edges, np.full(8, 0.05), 1e-7, radius=radius, self_collision=True)
    warmup.warm(model, 5, meshes=True, ground=True, air=True)
