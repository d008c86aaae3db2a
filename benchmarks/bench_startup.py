"""What the add-on costs at Blender start and on the first simulated frame (issues 5 and 16).

    python benchmarks/bench_startup.py [--repeat N] [--check]

Measured on the installed linux-x64 package (built into dist/ first), with its bundled
numba, in a temporary ``BLENDER_USER_RESOURCES``; every figure comes from a new Blender
process, because start-up and numba's cache are per-process effects:

- register: importing the installed add-on's package and running its ``register()``, timed
  directly, which is what it adds to Blender's start. Also reported: the start
  (``read_userpref``, which enables the saved add-ons) with the add-on enabled minus the same
  with it disabled; that includes Blender's own bookkeeping of the extension's wheels, and is
  noisier. Budget: 50 ms for the first.
- first frame, cold: in the first process ever (empty numba cache), ``xpbd.rope_add`` then at
  once the next frame, as a user in a window: the frame handler returns within 0.2 s while
  the kernels compile on a thread (``preparation``), the rope at rest; the figure is the time
  from that ``frame_set`` until the frame shows the simulated rope (``preparation.poll``, the
  timer's call, plays it again when ready). Also: the longest frame handler call.
- first frame, warm: the same in later processes (numba cache filled), play pressed at once
  and ``USER_PAUSE_S`` after adding the rope (the preparation starts with the rope).
- first frame over a prop, cold: the first process after installing, a cube with Collision
  under the rope (``PROP_SIZE``, ``PROP_Z``), played for a second; also its slowest frame (the
  landing) and what was compiled by then.
- first frame of a new session: the preparation started by the launch timer, the rope added
  ``SESSION_ADD_S`` after the start, play pressed at once; and how long after the start the
  solver is ready. Also for the first session after installing (a fresh user folder).
  Budget: 0.3 s for this (later sessions) and the paused figure; the handler's longest
  call: 0.3 s.

``--check`` exits 1 if a budget is exceeded.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODULE = "bl_ext.user_default.xpbd_rope"
REGISTER_BUDGET_S = 0.050
WARM_FRAME_BUDGET_S = 0.3
HANDLER_BUDGET_S = 0.3
"""Longest a frame handler call may take while the kernels compile [s] (it waits 0.2 s)."""
PROP_SIZE, PROP_Z = 0.5, -0.3
"""The prop of the mode "prop": a cube's size [m] and its centre's height [m] (its top 5 cm
under the rope, which lies at z = 0)"""
SESSION_ADD_S = 1.0
"""Seconds from Blender's window being up to a rope added, in the 'new session' figure: the
least a person takes to reach Add > Curve > XPBD Rope."""
USER_PAUSE_S = 0.5
"""Seconds between adding a rope and pressing play in the 'warm, paused' figure: the least a
person takes to move from the Add menu to the play button."""


# --- child side: runs inside a new Blender process ----------------------------------------

def _child(mode: str, argument: str) -> dict:
    import bpy

    result: dict = {}
    if mode == "install":
        bpy.ops.extensions.package_install_files(filepath=argument, repo="user_default",
                                                 enable_on_install=True)
        bpy.ops.wm.save_userpref()
        return result
    if mode == "register":
        # Import + register() of the installed add-on, timed directly. Factory settings here
        # (no read_userpref), so nothing else runs; its wheels are on disk because the saved
        # preferences keep it enabled (disabling would make Blender remove them).
        tick = time.perf_counter()
        module = importlib.import_module(MODULE)
        result["import_s"] = time.perf_counter() - tick
        tick = time.perf_counter()
        module.register()
        result["register_s"] = time.perf_counter() - tick
        result["numba_imported"] = "numba" in sys.modules
        module.unregister()
        return result
    tick = time.perf_counter()
    if bpy.app.version >= (4, 5, 0):
        bpy.ops.wm.read_userpref()  # what Blender does at start: enables the saved add-ons
    else:  # read_userpref segfaults the bpy 4.2 module: enable the add-on as start-up would
        import addon_utils

        addon_utils.enable(MODULE, default_set=True)
    result["start_s"] = time.perf_counter() - tick
    result["enabled"] = MODULE in {a.module for a in bpy.context.preferences.addons}
    if mode == "disable":
        bpy.ops.preferences.addon_disable(module=MODULE)
        bpy.ops.wm.save_userpref()
    elif mode == "frame":
        points, _, pause = argument.partition(":")
        result.update(_first_frame(int(points), pause_s=float(pause or 0.0)))
    elif mode == "session":
        result.update(_session_first_frame(int(argument)))
    elif mode == "prop":
        result.update(_first_frame(int(argument), prop=True))
    return result


def _first_frame(points: int, *, pause_s: float = 0.0, prop: bool = False) -> dict:
    """Add a rope (Add > Curve > XPBD Rope) and play its first frame as a user in a window
    would: the handler returns within ``preparation.WAIT_S`` if the solver is not ready, the
    rope stays at rest, and the frame is played again when it is (``preparation.poll``, the
    timer's call). ``pause_s``: seconds between adding the rope and pressing play. ``prop``:
    over a box with Collision (Add > Mesh > Cube, 0.5 m, its top 5 cm under the rope's
    middle), which the rope lands on in its fourth frame."""
    import bpy
    import numpy as np
    from mathutils import Vector

    preparation = importlib.import_module(MODULE + ".preparation")
    preparation.WAIT_IN_BACKGROUND = False  # as in a window: never wait for a compile
    scene = bpy.context.scene
    scene.frame_set(scene.frame_start)
    if prop:
        bpy.ops.mesh.primitive_cube_add(size=PROP_SIZE, location=(1.0, 0.0, PROP_Z))
        bpy.ops.object.modifier_add(type="COLLISION")
    added = time.perf_counter()
    bpy.ops.xpbd.rope_add(points=points)
    rope = bpy.context.object

    def points_now() -> np.ndarray:
        co = np.zeros(len(rope.data.splines[0].points) * 4, dtype=np.float32)
        rope.data.splines[0].points.foreach_get("co", co)
        return co

    rest = points_now()
    time.sleep(pause_s)
    pressed = time.perf_counter()
    scene.frame_set(scene.frame_start + 1)
    block = time.perf_counter() - pressed
    blocks = [block]
    while preparation.busy():  # the user waits; a window would repaint meanwhile
        time.sleep(0.01)
    simulated = bool(np.any(points_now() != rest))
    if not simulated:
        tick = time.perf_counter()
        preparation.poll()  # the timer: plays the skipped frame again
        blocks.append(time.perf_counter() - tick)
    result = {
        "first_frame_s": time.perf_counter() - pressed,
        "from_add_s": time.perf_counter() - added,
        "handler_block_s": block,
        "simulated_in_first_call": simulated,
        "moved": bool(np.any(points_now() != rest)),
        "numba_file": getattr(sys.modules.get("numba"), "__file__", None),
        "precompiled": preparation.precompiled_status(),
        "compiled": _compiled_kernels(),
        "helper_mark": _helper_mark() if preparation.precompiled_status() else None,
    }
    later = []
    for frame in range(scene.frame_start + 2, scene.frame_start + (24 if prop else 12)):
        tick = time.perf_counter()
        scene.frame_set(frame)
        later.append(time.perf_counter() - tick)
    result["later_frame_s"] = statistics.median(later)
    result["slowest_later_frame_s"] = max(later)
    result["compiled_after"] = _compiled_kernels()  # (the part "rest" while it played)
    co = points_now().reshape(-1, 4)
    result["middle_z"] = float((rope.matrix_world @ Vector(co[len(co) // 2, :3]))[2])
    return result


def _session_first_frame(points: int) -> dict:
    """A later session as in a window: the add-on's launch timer starts the preparation
    (``preparation.start_at_launch``; timers do not run without a window, so it is called at
    its time here), the user adds a rope ``SESSION_ADD_S`` after the start and presses play
    at once. Also: how long after the start the solver is ready."""
    import bpy

    preparation = importlib.import_module(MODULE + ".preparation")
    preparation.WAIT_IN_BACKGROUND = False
    launched = time.perf_counter()
    time.sleep(preparation.LAUNCH_DELAY_S)
    preparation._start_after_launch()
    ready: list[float] = []

    def watch() -> None:  # when the solver is ready, whatever the user does meanwhile
        while preparation.busy():
            time.sleep(0.005)
        ready.append(time.perf_counter() - launched)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    time.sleep(max(0.0, SESSION_ADD_S - (time.perf_counter() - launched)))
    scene = bpy.context.scene
    scene.frame_set(scene.frame_start)
    result = _first_frame(points)
    watcher.join()
    result["launch_ready_s"] = ready[0]
    return result


def _helper_mark(wait_s: float = 120.0) -> str | None:
    """The compile helper's mark (``core.compile_helper``: the kernel sources' hash it
    compiled), waited for up to ``wait_s``; None if it never came."""
    helper = importlib.import_module(MODULE + ".core.compile_helper")
    mark = helper.done_mark()
    deadline = time.perf_counter() + wait_s
    while mark is not None and not mark.is_file() and time.perf_counter() < deadline:
        time.sleep(0.1)
    return mark.read_text() if mark is not None and mark.is_file() else None


def _compiled_kernels() -> list[str]:
    """The add-on's kernels that numba compiled in this process (a miss of its cache), as
    ``module.function``: none where the precompiled kernels cover the scene."""
    from numba.core.registry import CPUDispatcher

    compiled = []
    for name, module in list(sys.modules.items()):
        if module is None or not name.startswith(MODULE + "."):
            continue
        for value in list(vars(module).values()):
            if (isinstance(value, CPUDispatcher) and value.__module__ == name
                    and sum(value.stats.cache_misses.values())):
                compiled.append(f"{name[len(MODULE) + 1:]}.{value.__name__}")
    return sorted(set(compiled))


# --- parent side ---------------------------------------------------------------------------

def _package() -> Path:
    sys.path.insert(0, str(ROOT))
    from tools import packaging

    # Always rebuild (about a second with cached wheels): a zip left in dist/ may be stale.
    return packaging.build(["linux-x64"])[0]


def _run(user: Path, mode: str, argument: str = "", env_extra: dict | None = None) -> dict:
    # Blender ignores PYTHON* variables unless started with --python-use-system-env; the
    # bpy module does not, and PYTHONDONTWRITEBYTECODE would make every process recompile
    # numba's sources, a cost Blender users never see. So the children get none of them.
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("NUMBA_", "BLENDER_", "PYTHON"))}
    env["BLENDER_USER_RESOURCES"] = str(user)
    env.update(env_extra or {})
    done = subprocess.run([sys.executable, __file__, "--child", mode, argument], env=env,
                          capture_output=True, text=True, timeout=600)
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    if done.returncode or not lines:
        raise RuntimeError(f"child {mode} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return json.loads(lines[-1][len("RESULT "):])


def _freshly_installed(package: Path, mode: str, argument: str) -> dict:
    """``_run`` in an empty user folder with ``package`` just installed (the first process
    after installing: numba's cache empty)."""
    fresh = Path(tempfile.mkdtemp(prefix="xpbd-bench-user-"))
    try:
        _run(fresh, "install", str(package))
        return _run(fresh, mode, argument)
    finally:
        shutil.rmtree(fresh, ignore_errors=True)


def measure(repeat: int, points: int = 20) -> dict:
    """All figures, in seconds (medians over ``repeat`` processes where repeated)."""
    package = _package()
    user = Path(tempfile.mkdtemp(prefix="xpbd-bench-user-"))
    try:
        _run(user, "install", str(package))
        cold = _run(user, "frame", str(points))  # the first process ever: empty cache
        warm = [_run(user, "frame", str(points)) for _ in range(repeat)]
        warm_paused = [_run(user, "frame", f"{points}:{USER_PAUSE_S}") for _ in range(repeat)]
        sessions = [_run(user, "session", str(points)) for _ in range(repeat)]
        start_enabled = [_run(user, "start")["start_s"] for _ in range(repeat)]
        registers = [_run(user, "register") for _ in range(repeat)]
        _run(user, "disable")  # Blender removes a disabled extension's wheels
        start_disabled = [_run(user, "start")["start_s"] for _ in range(repeat)]
    finally:
        shutil.rmtree(user, ignore_errors=True)
    # the first session after installing, in a window: the launch timer starts the compile
    # (here: the copy of the precompiled kernels and the first import of numba)
    cold_session = _freshly_installed(package, "session", str(points))
    # the first rope after installing over a prop (a box with Collision), empty cache
    prop = _freshly_installed(package, "prop", str(points))
    every = [cold, *warm, *warm_paused, *sessions, cold_session, prop]
    return {
        "package": package.name,
        "package_mib": package.stat().st_size / 2**20,
        "register_s": statistics.median(r["import_s"] + r["register_s"] for r in registers),
        "import_only_s": statistics.median(r["import_s"] for r in registers),
        "register_imported_numba": any(r["numba_imported"] for r in registers),
        "start_enabled_minus_disabled_s": (statistics.median(start_enabled)
                                           - statistics.median(start_disabled)),
        "first_frame_cold_s": cold["first_frame_s"],
        "first_frame_warm_s": statistics.median(w["first_frame_s"] for w in warm),
        "first_frame_warm_paused_s": statistics.median(w["first_frame_s"]
                                                       for w in warm_paused),
        "first_frame_session_s": statistics.median(w["first_frame_s"] for w in sessions),
        "launch_ready_s": statistics.median(w["launch_ready_s"] for w in sessions),
        "first_frame_cold_session_s": cold_session["first_frame_s"],
        "launch_ready_cold_s": cold_session["launch_ready_s"],
        "first_frame_prop_cold_s": prop["first_frame_s"],
        "slowest_prop_frame_s": prop["slowest_later_frame_s"],
        "prop_middle_z": prop["middle_z"],
        "compiled_prop": prop["compiled_after"],
        "handler_block_max_s": max(r["handler_block_s"] for r in every),
        "handler_block_cold_s": cold["handler_block_s"],
        "handler_block_by_run_s": {
            "cold": cold["handler_block_s"],
            "warm": max(r["handler_block_s"] for r in warm + warm_paused),
            "session": max(r["handler_block_s"] for r in sessions),
            "cold_session": cold_session["handler_block_s"], "prop": prop["handler_block_s"]},
        "all_moved": all(r["moved"] for r in every),
        "later_frame_s": statistics.median(w["later_frame_s"] for w in warm),
        "numba_file": warm[0]["numba_file"],
        "precompiled_cold": cold["precompiled"],
        "compiled_cold": cold["compiled"],
        "compiled_warm": sorted({k for w in warm + warm_paused + sessions
                                 for k in w["compiled"]}),
        "points": points,
        "repeat": repeat,
    }


def main(argv: list[str]) -> int:
    """Parent: measure and print; child (``--child MODE ARG``): one Blender process."""
    if argv[:1] == ["--child"]:
        print("RESULT " + json.dumps(_child(argv[1], argv[2] if len(argv) > 2 else "")),
              flush=True)
        # The bpy 4.2 / 4.5 modules crash or hang at exit while an add-on property with an
        # update callback is registered; the figures are out, so skip Blender's exit.
        os._exit(0)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--check", action="store_true", help="exit 1 if over budget")
    args = parser.parse_args(argv)
    figures = measure(args.repeat)
    ok_register = figures["register_s"] < REGISTER_BUDGET_S
    ok_warm = max(figures["first_frame_warm_paused_s"],
                  figures["first_frame_session_s"]) < WARM_FRAME_BUDGET_S
    ok_block = figures["handler_block_max_s"] < HANDLER_BUDGET_S
    print(f"package {figures['package']} ({figures['package_mib']:.1f} MiB), numba from "
          f"{figures['numba_file']}")
    print(f"import + register()        {figures['register_s'] * 1e3:7.1f} ms  (budget 50 ms) "
          f"{'ok' if ok_register else 'OVER'}; numba imported: "
          f"{figures['register_imported_numba']}")
    print(f"  of which import          {figures['import_only_s'] * 1e3:7.1f} ms")
    print(f"start, enabled - disabled  {figures['start_enabled_minus_disabled_s'] * 1e3:7.1f} ms")
    print(f"first frame, cold cache    {figures['first_frame_cold_s'] * 1e3:7.0f} ms  "
          f"(play pressed right after adding the rope; goal 1 s, target 3 s)")
    print(f"first frame, warm cache    {figures['first_frame_warm_s'] * 1e3:7.0f} ms  "
          "(play pressed right after adding the rope)")
    print(f"  play {USER_PAUSE_S} s after adding {figures['first_frame_warm_paused_s'] * 1e3:7.0f}"
          f" ms  (budget {WARM_FRAME_BUDGET_S * 1e3:.0f} ms) {'ok' if ok_warm else 'OVER'}")
    print(f"new session: rope added {SESSION_ADD_S} s after the start, play at once "
          f"{figures['first_frame_session_s'] * 1e3:7.0f} ms  (budget "
          f"{WARM_FRAME_BUDGET_S * 1e3:.0f} ms); solver ready "
          f"{figures['launch_ready_s'] * 1e3:.0f} ms after the start")
    print(f"first session after installing, the same: "
          f"{figures['first_frame_cold_session_s'] * 1e3:7.0f} ms; solver ready "
          f"{figures['launch_ready_cold_s'] * 1e3:.0f} ms after the start")
    print(f"first rope after installing over a prop (cold): "
          f"{figures['first_frame_prop_cold_s'] * 1e3:7.0f} ms; slowest of its first second "
          f"{figures['slowest_prop_frame_s'] * 1e3:.0f} ms; compiled by then: "
          f"{len(figures['compiled_prop'])} kernels; its middle at z = "
          f"{figures['prop_middle_z'] * 1e3:.1f} mm (the box's top at "
          f"{(PROP_Z + PROP_SIZE / 2) * 1e3:.0f} mm)")
    print(f"longest frame handler call {figures['handler_block_max_s'] * 1e3:7.0f} ms  (budget "
          f"{HANDLER_BUDGET_S * 1e3:.0f} ms) {'ok' if ok_block else 'OVER'}; cold "
          f"{figures['handler_block_cold_s'] * 1e3:.0f} ms")
    unused = figures["precompiled_cold"]
    print(f"precompiled kernels (package): {'used' if unused is None else 'not used: ' + unused}"
          f"; compiled on the cold first frame: {len(figures['compiled_cold'])} kernels, "
          f"on warm ones: {len(figures['compiled_warm'])}")
    print(f"later frames ({figures['points']} points)  {figures['later_frame_s'] * 1e3:7.2f} ms")
    print("JSON " + json.dumps(figures))
    ok = ok_register and ok_warm and ok_block and figures["all_moved"]
    return 0 if ok or not args.check else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
