"""Preparing the solver: numba's kernels compiled (or loaded from its cache) on a background
thread, so that Blender never freezes while they compile.

The first simulated frame after installing used to freeze Blender for 7-30 s, silently, while
numba compiled. Now:

- the frame handler hands the scene's ropes to ``wait`` and waits at most ``WAIT_S`` for
  their kernels: a warm start (kernels in numba's cache) is ready within that, so the frame
  is simulated as before; a cold one is not, and the handler returns at once, leaving the
  ropes as they are (at rest at the start of playback). The kernels keep compiling on a
  thread (``core.warmup.warm``, which touches no Blender data), and a timer on the main
  thread shows the progress in the panel and the status bar ("Preparing the solver, first
  use only: 40 %"), then plays the frame again once the solver is ready;
- preparation starts before the first frame where it can: a moment after Blender's start in
  every session with a window (``start_at_launch``: the compile after installing or
  updating, loading the cache later), when a rope is added or a file with ropes is opened
  (``start_default``);
- rendering and scripts in background mode (``blender -b``) wait for the solver without a
  limit (``WAIT_IN_BACKGROUND``): a rendered or scripted frame must be the simulated one.

Module state is the one declared ``_Worker`` below; nothing else is kept.
"""

from __future__ import annotations

import os
import sys
import threading
import time
import traceback
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import dependencies

WAIT_S = 0.1
"""Longest the frame handler waits for the solver to be ready [s]. The preparation starts at
Blender's launch, so a session's first frame normally finds it done; otherwise the frame
shows the rope as it is and is played again when the solver is ready. Short, because on a
busy machine the thread's Python shares the interpreter with the handler's own work, which
must still end within 0.3 s."""

WAIT_IN_BACKGROUND = True
"""In background mode (``blender -b``, the bpy module: scripts, command-line renders) the
frame handler waits for the solver however long it takes, so that ``frame_set`` simulates
as before. A script that wants the interactive behaviour (return at once, rope at rest,
status shown) sets this to False."""

LAUNCH_DELAY_S = 0.2
"""How long after Blender's window is up the preparation starts (``start_at_launch``) [s]."""

POLL_S = 0.25
"""How often the main-thread timer checks the preparation and redraws its status [s]."""

EXPECTED_FIRST_COMPILE = 24
"""Kernel specialisations a first-ever preparation of a rope without contacts compiles (the
solver's and the write-back's, numba 0.68, measured): the percentage's denominator."""

EXPECTED_CONTACT_COMPILE = 97
"""Kernel specialisations a first scene with mesh colliders, a ground and self-collision adds
(measured): added to the denominator while such a rope is being prepared."""

ADDED_POINTS, ADDED_LENGTH = 20, 2.0
"""Points and length [m] of the rope Add > Curve > XPBD Rope makes (``default_request``)"""

_PRECOMPILED_UNTRIED = "not tried yet"


def precompiled_status() -> str | None:
    """Why the package's precompiled kernels are not used here, None if they are."""
    with _worker.lock:
        return _worker.precompiled


@dataclass(frozen=True)
class Request:
    """One model whose kernels the frame handler needs (``core.warmup.warm``'s arguments)."""

    model: Any
    """The rope's ``core.Model``"""
    substeps: int
    """Substeps per frame (S): whether big scenes use threads depends on it"""
    meshes: bool = False
    """The rope will collide with triangle meshes"""
    ground: bool = False
    """The rope will collide with a ground plane"""
    air: bool = False
    """The rope moves through air (``Object.xpbd.use_air``: the drag kernel)"""


class _Worker:
    """The preparation thread and what it has done (one per process)."""

    def __init__(self) -> None:
        self.lock = threading.Condition()
        """Guards every attribute below; notified when a request is done"""
        self.queue: list[Request] = []
        """Requests not yet warmed"""
        self.thread: threading.Thread | None = None
        """The running preparation thread, or None when idle"""
        self.finishing = False
        """The thread compiles the kernels ready ropes need only later (not busy: they
        play meanwhile)"""
        self.prepared: weakref.WeakSet[Any] = weakref.WeakSet()
        """Models whose kernels are compiled (or whose warm-up failed: ``step`` reports it)"""
        self.io_ready = False
        """The Blender side's write-back kernel is compiled"""
        self.count_at_start = 0
        """Kernel specialisations the process held when the current preparation began"""
        self.expected = EXPECTED_FIRST_COMPILE
        """Kernel specialisations the current preparation compiles if nothing is cached
        (the progress denominator)"""
        self.waiting_scenes: set[str] = set()
        """Scenes whose frame was skipped while preparing: replayed when ready"""
        self.timer_on = False
        """The main-thread poll timer is registered"""
        self.precompiled: str | None = _PRECOMPILED_UNTRIED
        """Why the package's precompiled kernels are not used (``precompiled``), None if
        they are"""


_worker = _Worker()


def _package() -> str:
    return __name__.rpartition(".")[0]


def _busy_locked() -> bool:
    return _worker.thread is not None and not _worker.finishing or bool(_worker.queue)


def busy() -> bool:
    """True while kernels are being prepared."""
    with _worker.lock:
        return _busy_locked()


def _ready_locked(models: list[Any], whole: bool) -> bool:
    return (not _busy_locked() and _worker.io_ready and not (whole and _worker.finishing)
            and all(model in _worker.prepared for model in models))


def ready_models(models: list[Any], *, whole: bool = False) -> bool:
    """Whether these models' (``core.Model``) first frames can run: their kernels are
    compiled. ``whole``: all their kernels, not only a first frame's (the preparation
    compiles the rest while they play)."""
    with _worker.lock:
        return _ready_locked(models, whole)


def request(requests: list[Request]) -> None:
    """Queue the requests whose models are not prepared and start the thread if idle."""
    with _worker.lock:
        queued = {id(r.model) for r in _worker.queue}
        new = [r for r in requests
               if r.model not in _worker.prepared and id(r.model) not in queued]
        if not new and _worker.io_ready:
            return
        _worker.queue.extend(new)
        if any(r.meshes or r.ground or getattr(r.model, "self_collision", False)
               for r in new) and _worker.expected == EXPECTED_FIRST_COMPILE:
            _worker.expected += EXPECTED_CONTACT_COMPILE
        if _worker.thread is None:
            _worker.count_at_start = _kernel_count()
            _worker.thread = threading.Thread(target=_run, name="xpbd-prepare", daemon=True)
            _worker.thread.start()
    _start_timer()


def wait(requests: list[Request], timeout: float | None, *, whole: bool = False) -> bool:
    """``request`` these, then wait up to ``timeout`` [s] (None: without limit) until they
    are ready (``ready_models``, ``whole`` as there); True if they are."""
    request(requests)
    deadline = None if timeout is None else time.perf_counter() + timeout
    with _worker.lock:
        while not _ready_locked([r.model for r in requests], whole):
            if not _busy_locked() and _worker.io_ready and not (whole and _worker.finishing):
                return True  # the thread ended without them (it failed): the step compiles
            left = None if deadline is None else deadline - time.perf_counter()
            if left is not None and left <= 0.0:
                return False
            _worker.lock.wait(left)
    return True


def defer(scene_name: str) -> None:
    """Play ``scene_name``'s current frame again once the solver is ready (its frame was
    skipped while preparing)."""
    with _worker.lock:
        _worker.waiting_scenes.add(scene_name)
    _start_timer()


def progress() -> float | None:
    """The running preparation's progress in [0, 0.99], or None when idle. An estimate: the
    kernels compiled so far over those a cold preparation compiles."""
    with _worker.lock:
        if not _busy_locked():
            return None
        done = _kernel_count() - _worker.count_at_start
        return min(0.99, max(0.0, done / max(_worker.expected, 1)))


def status_text() -> str | None:
    """The panel's and status bar's line while preparing, or None when idle."""
    fraction = progress()
    if fraction is None:
        return None
    return f"Preparing the solver, first use only: {round(100 * fraction)} %"


def _kernel_count() -> int:
    if "numba" not in sys.modules:
        return 0
    from .core import warmup

    return warmup.compiled_kernel_count(_package())


def _run() -> None:
    """The thread: load numba, then warm every queued model: the kernels of its first
    frames (then it is ready), and once every queued model is, the rest of their kernels
    while they play (``core.warmup.warm``'s parts). Never touches bpy."""
    item: Request | None = None
    try:
        with dependencies.IMPORTING:  # (the cache's look imports part of numba already)
            _use_precompiled()
            reason = dependencies.load_numba()
        helped = reason is None and _start_helper()
        if reason is None and not helped:
            _warm_io()
        # with a compile helper the write-back's kernels are among its own: loaded once the
        # queued ropes are, by when the helper has compiled them
        io_left = helped
        later: list[Request] = []  # ready to play; the rest of their kernels still to come
        met: set[tuple[str, ...]] = set()  # the contacts' parts compiled here
        while True:
            with _worker.lock:
                waiting = bool(_worker.queue)
            if io_left and not waiting:
                _warm_io()
                io_left = False
            with _worker.lock:
                item = _worker.queue.pop(0) if _worker.queue else None
                if item is None:
                    _worker.io_ready = True  # a failed numba load is reported by the handler
                    _worker.finishing = bool(later)
                    if not later:
                        # Idle again, in the same hold of the lock that found the queue
                        # empty, so that a request arriving now starts a new thread.
                        _worker.expected = EXPECTED_FIRST_COMPILE
                        _worker.thread = None
                    _worker.lock.notify_all()
                    if not later:
                        break
            if item is None:  # every queued rope is ready: the rest while they play
                for done in later:
                    _warm(done, "rest")
                later.clear()
                continue  # (a request queued meanwhile is taken, else the thread ends)
            if reason is None:
                if helped and not later:  # the solve first: the helper has the rest
                    _compile_solve(item)
                parts = _contact_parts(item)
                if parts and parts not in met:  # a landing's re-solve, and the helper's
                    _compile_for_contacts(helped, parts)  # kernels from the other end
                    met.add(parts)
                _warm(item, "first")
                later.append(item)
            with _worker.lock:
                _worker.prepared.add(item.model)
                _worker.lock.notify_all()
    except BaseException:
        with _worker.lock:  # never leave the handler waiting on a dead thread: its step
            for left in [*_worker.queue, *([item] if item else [])]:  # compiles what it
                try:  # needs, or reports the problem
                    _worker.prepared.add(left.model)
                except TypeError:  # not weakly referable: the waiter sees the dead thread
                    pass
            _worker.queue.clear()
            _worker.io_ready = True
            _worker.finishing = False
            _worker.thread = None
            _worker.lock.notify_all()
        raise


def _start_helper() -> bool:
    """Start the compile helper process where it shortens a first use (no precompiled
    kernels here, nothing compiled yet: ``core.compile_helper``); True if it runs."""
    with _worker.lock:
        if _worker.precompiled is None:  # the package's compiled kernels are used
            return False
    from .core import compile_helper

    try:
        helper = compile_helper.start() if compile_helper.wanted() else None
    except Exception:  # noqa: BLE001 - then this thread compiles everything, as without it
        traceback.print_exc()
        return False
    if helper is None:
        return False
    # reaped when it ends (a finished child left unwaited stays in the process table)
    threading.Thread(target=helper.wait, name="xpbd-compile-helper", daemon=True).start()
    return True


def _use_precompiled() -> None:
    """Before numba loads: use the kernels compiled at package time, if they fit here."""
    if "numba" in sys.modules or _worker.precompiled != _PRECOMPILED_UNTRIED:
        return
    from . import precompiled

    cache = os.environ.get("NUMBA_CACHE_DIR")
    try:
        reason = (precompiled.adopt(Path(__file__).parent, _package(), cache) if cache
                  else "no cache folder set")
    except Exception as error:  # noqa: BLE001 - then numba compiles, as without them
        reason = f"failed: {type(error).__name__}: {error}"
    with _worker.lock:
        _worker.precompiled = reason


def _compile_solve(item: Request) -> None:
    from .core import compile_helper

    try:
        # (the air, a damping map and a rod, like the contacts, step the frame a substep
        # per kernel call)
        compile_helper.compile_solve(
            item.ground or item.meshes or item.air or _collides(item.model)
            or getattr(item.model, "particle_damping", None) is not None
            or getattr(item.model, "rod_layout", None) is not None,
            held=_holds_contacts(item.model))
    except Exception:  # noqa: BLE001 - the warm-up compiles it then
        traceback.print_exc()


def _collides(model: Any) -> bool:
    return bool(getattr(model, "self_collision", False))


def _holds_contacts(model: Any) -> bool:
    """Whether ``model``'s solve holds contacts between its ropes (two ropes or more with
    Self Collision, ``core.solve.substeps.holds_contacts``). Called once numba is loaded."""
    from .core.solve.substeps import holds_contacts

    plan = getattr(model, "plan", None)
    return plan is not None and holds_contacts(model, plan)


def _contact_parts(item: Request) -> tuple[str, ...]:
    """The compile helper manifest's parts (``core.compile_helper.PARTS``) whose kernels
    ``item`` needs beyond the default rope's: () without mesh colliders or Self Collision."""
    from .core.compile_helper import PARTS

    default, meshes, collide, held = PARTS
    if not item.meshes and not _collides(item.model):
        return ()
    return ((default,) + ((meshes,) if item.meshes else ())
            + ((collide,) if _collides(item.model) else ())
            + ((held,) if _holds_contacts(item.model) else ()))


def _compile_for_contacts(helped: bool, parts: tuple[str, ...]) -> None:
    """Before a first rope over a prop, or of ropes colliding with each other, plays: with a
    helper running, the helper's kernels of the manifest's ``parts`` from the other end of
    its list, and the re-solve after a landing; on one core, over a prop, that re-solve."""
    from .core import compile_helper

    try:
        if helped:
            compile_helper.compile_from_the_end(parts)
        elif compile_helper.PARTS[1] in parts:
            compile_helper.compile_landing(parts)
    except Exception:  # noqa: BLE001 - the warm-up compiles what is left
        traceback.print_exc()


def _warm(item: Request, part: str) -> None:
    """``core.warmup.warm``'s ``part`` ("first", "rest") for ``item``."""
    from .core import warmup

    try:
        model = item.model if part == "first" else item.model.with_changes()
        warmup.warm(model, item.substeps, meshes=item.meshes, ground=item.ground,
                    air=item.air, part=part)
        if item.meshes and part == "first":
            from .blender.write import io_kernels

            io_kernels.warm_tessellation()
    except Exception:  # noqa: BLE001 - the real step reports a refused input in the panel
        print("XPBD Rope: preparing the solver for a rope failed (it is simulated anyway):")
        traceback.print_exc()


def _warm_io() -> None:
    try:
        from .blender.write import io_kernels

        io_kernels.warm()
    except Exception:  # noqa: BLE001 - the first write compiles it then
        traceback.print_exc()


# --- what starts a preparation before the first frame ------------------------------------

def default_request(*, self_collision: bool = False) -> Request:
    """The rope that Add > Curve > XPBD Rope makes (20 points, 2 m, first point pinned,
    default settings, air on): the kind of model most first frames need; ``self_collision``:
    with Self Collision on."""
    import numpy as np

    positions = np.zeros((ADDED_POINTS, 3))
    positions[:, 0] = np.linspace(0.0, ADDED_LENGTH, ADDED_POINTS)
    return Request(_added_ropes([positions], self_collision), 10, air=True)


def colliding_request() -> Request:
    """Two ropes as Add > Curve > XPBD Rope makes them, with Self Collision on, the second
    crossing 5 cm above the first's middle: the kind of model a first scene of ropes that
    collide with each other needs (their contacts held in the solve, ``core.solve``)."""
    import numpy as np

    first = np.zeros((ADDED_POINTS, 3))
    first[:, 0] = np.linspace(0.0, ADDED_LENGTH, ADDED_POINTS)
    second = np.zeros((ADDED_POINTS, 3))
    second[:, 0] = 0.5 * ADDED_LENGTH
    second[:, 1] = np.linspace(-0.5, 0.5, ADDED_POINTS) * ADDED_LENGTH
    second[:, 2] = 0.05
    return Request(_added_ropes([first, second], True), 10, air=True)


def _added_ropes(ropes: list[Any], self_collision: bool) -> Any:
    """One ``core.Model`` of ``ropes`` ((n, 3) positions [m] each) with the Add menu rope's
    settings: 0.05 kg a point, the first point of each pinned, compliance 1e-6 m/N, damping
    0.1 /s, radius 1 cm."""
    import numpy as np

    from .core import Model

    counts = [len(rope) for rope in ropes]
    starts = np.cumsum([0, *counts[:-1]])
    edges = np.concatenate([np.stack([np.arange(n - 1), np.arange(1, n)], axis=1) + start
                            for n, start in zip(counts, starts, strict=True)])
    inv_mass = np.full(sum(counts), 1.0 / 0.05)
    inv_mass[starts] = 0.0
    return Model(np.concatenate(ropes), edges, inv_mass, 1e-6, damping=0.1, radius=0.01,
                 self_collision=self_collision)


def start_default() -> None:
    """Begin preparing the default rope's kernels (a rope was added or a file with ropes
    opened); nothing if the solver is ready or being prepared."""
    with _worker.lock:
        if _worker.io_ready or _busy_locked():
            return
    if dependencies.numba_problem() is not None:
        return
    request([default_request()])


# --- main thread: status, redraw, replay ---------------------------------------------------

def _start_timer() -> None:
    import bpy

    with _worker.lock:
        if _worker.timer_on or bpy.app.background:
            return
        _worker.timer_on = True
    bpy.app.timers.register(poll, first_interval=POLL_S)


def poll() -> float | None:
    """Main-thread timer: show the status while preparing; once ready, clear it, redraw, and
    play again the frames skipped meanwhile. Returns the next interval, None to stop."""
    import bpy

    text = status_text()
    _show_status(bpy, text)
    if text is not None:
        return POLL_S
    with _worker.lock:
        scenes = sorted(_worker.waiting_scenes)
        _worker.waiting_scenes.clear()
        _worker.timer_on = False
    playing = any(window.screen.is_animation_playing
                  for window in getattr(bpy.context.window_manager, "windows", ()))
    for name in [] if playing else scenes:  # playback reaches the next frame by itself
        scene = bpy.data.scenes.get(name)
        if scene is not None:
            scene.frame_set(scene.frame_current, subframe=scene.frame_subframe)
    return None


def _show_status(bpy: Any, text: str | None) -> None:
    """The status bar line (every window's workspace) and a redraw of the panels."""
    wm = getattr(bpy.context, "window_manager", None)
    for window in getattr(wm, "windows", ()):
        try:
            window.workspace.status_text_set(text)
        except (AttributeError, RuntimeError, TypeError):
            pass
        for area in window.screen.areas:
            if area.type in {"PROPERTIES", "VIEW_3D", "STATUSBAR"}:
                area.tag_redraw()


def start_at_launch() -> None:
    """At registration, in a window: begin preparing the default rope's kernels
    ``LAUNCH_DELAY_S`` after Blender's own start (a timer, which first runs once Blender's
    window is up, so the start itself is not delayed). After installing or updating that is
    the compile (seconds, on the thread); in every later session it is loading numba and the
    cached kernels (about 0.4 s of the thread), done before a user can add a rope and press
    play, so that the first frame of a session is simulated at once."""
    import bpy

    if bpy.app.background:
        return
    # persistent: a file given on the command line loads after the add-ons register, and a
    # file load drops the timers that are not
    bpy.app.timers.register(_start_after_launch, first_interval=LAUNCH_DELAY_S,
                            persistent=True)


def _start_after_launch() -> None:
    start_default()


def register() -> None:
    start_at_launch()


def unregister() -> None:
    import bpy

    for function in (_start_after_launch, poll):
        if bpy.app.timers.is_registered(function):
            bpy.app.timers.unregister(function)
    with _worker.lock:
        _worker.queue.clear()
        _worker.waiting_scenes.clear()
        _worker.timer_on = False
