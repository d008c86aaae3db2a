"""Compile the kernels a model will run before its first ``step``, e.g. in a background thread.

The first ``step`` of a kind of model compiles the numba kernels its path uses: seconds the
first time ever (nothing in numba's cache), a few tenths of a second in a new process with
the cache filled. ``warm(model, substeps)`` pays that cost ahead of time by running the same
path once on the model with a state of its own, so a caller with a user interface can do it
on a thread while the interface stays responsive:

    thread = threading.Thread(target=warm, args=(model, 10), daemon=True)

Why this is safe on a thread: the model is static, and it writes only its own fresh state;
numba serialises compiles with its own lock, so a ``step`` on another thread that needs a
kernel being compiled waits for it rather than compiling it twice; the kernels release the
GIL (``jit.kernel``), so a waiting thread's Python keeps running.

Nothing here lists kernels: ``warm`` goes through ``step`` like a real frame, so whichever
kernels the solver runs for this kind of model (solver, lanes or one rope per block, threads
for big scenes, bending, contacts) are the ones compiled, whatever the kernel modules hold.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from .collision import Collider, Plane
from .model import Model
from .sleep import SLEEP_TIME, Rest
from .solver import step

WARM_DT = 1.0 / 24.0
"""Frame length of the warm-up step [s]: any positive value compiles the same kernels."""

FIRST_GAP = -1.5
"""Where the colliders of ``warm``'s first frame are [rope radii]: below its lowest point,
within reach but apart (as the ground under a new rope): its contact kernels are compiled
without the re-solve a touch would run (the part "rest" compiles that)."""

FALL_FRAMES = 3
"""Frames ``_falling`` steps its ropes from rest"""

WALL_GAP = 1.5
"""How far beside the ropes ``_falling``'s wall stands [rope radii]: within reach, apart"""

CONTACT_FRAMES = 8
"""Frames the warm-up steps a model with contacts (one without contacts: one frame)."""


NUDGE_SPEED = 1.0
"""[m/s] the push of ``_nudged``'s point: over a frame, far beyond its rope-rope slack"""

PARTIAL_SHARE = 5
"""``_nudged`` pushes one point where that is fewer than 1 in PARTIAL_SHARE of the points
(``contacts.constants.PARTIAL_SEARCH`` is 4: more, and the search is a full one)"""

PARTS = ("all", "first", "rest")
"""``warm``'s parts: everything; a first frame's kernels; the rest"""

WARM_REACH = 1.0
"""The largest rope radius [m] the warm-up's colliders are placed by: a radius typed far
beyond any rope's (1e6 m) would put them past the coordinates a collider accepts
(``collision.MAX_COORDINATE``), and where they stand changes no kernel compiled."""


def warm(model: Model, substeps: int, *, meshes: bool = False, ground: bool = False,
         air: bool = False, part: str = "all") -> None:
    """Compile (or load from the cache) the kernels that ``step(model, state, dt, substeps,
    colliders=...)`` runs, by stepping a state of ``model`` from its rest positions.

    ``part``: "first", the kernels of a first frame and the frame after it (from rest
    beside the colliders), and where ropes collide with each other or with meshes, of
    frames of falling ropes (``_falling``), so that a caller can let the first frames run
    while "rest" compiles the others (the re-solve after a hard landing, a moving collider,
    falling asleep); "all" (default) both.

    ``meshes`` / ``ground``: the real steps will have triangle-mesh colliders / a ground
    plane; a small triangle and a tilted plane touching the state's lowest free particle are
    added, and the state thrown at them, so that the contact kernels run too, over
    ``CONTACT_FRAMES`` frames (some run only once contacts are kept from a frame before).
    The triangle moves for the second half of them (a moving collider's kernels).
    Self-collision comes with the model. ``model`` is static (``step`` writes only into the
    warm-up state and its workspace), so it is stepped itself. Raises what ``step`` raises
    for input it refuses. ``air``: the real steps drag the rope through air (``step(...,
    air=...)``: the drag kernel runs at every substep of the frame's stages), so they run
    too.
    """
    if part not in PARTS:
        raise ValueError(f"part: expected one of {PARTS}, got {part!r}")
    if part != "rest":  # a first frame: at rest, the colliders within reach, not touching
        state = model.state()
        start = state.copy()
        colliders = _colliders(model, state, meshes, ground, FIRST_GAP)
        step(model, state, WARM_DT, substeps, colliders=colliders, air=_air(air))
        # and the frame after it, which a handler catching up two frames steps too: it
        # starts from the tension the first carried and asks whether ropes rest. From
        # where the first began, so that it touches no collider either (a touch's
        # re-solve is the part "rest"'s).
        state.x[:], state.v[:] = start.x, start.v
        step(model, state, WARM_DT, substeps, colliders=colliders, air=_air(air))
        if model.self_collision or meshes:
            _falling(model, substeps, meshes, air)
    if part != "first":
        _rest(model, substeps, meshes=meshes, ground=ground, air=air)


def _air(air: bool) -> Any:
    from .air import Air

    return Air() if air else None


def _reach(model: Model) -> float:
    """How far from the ropes the warm-up's colliders stand, in rope radii [m]: the largest
    radius, at least 1 mm and at most ``WARM_REACH``."""
    return min(max(float(model.particle_radius.max(initial=0.0)), 1e-3), WARM_REACH)


def _colliders(model: Model, state: Any, meshes: bool, ground: bool,
               gap: float = -0.5) -> list[Collider | Plane]:
    """A small triangle (``meshes``) and a tilted plane (``ground``) ``gap`` times the
    rope's radius below ``state``'s lowest free particle (or its lowest particle): -0.5,
    touching it, so that contacts are found and their kernels run, not only the broad
    phase."""
    colliders: list[Collider | Plane] = []
    if meshes or ground:
        free = np.flatnonzero(model.particle_inv_mass > 0.0)
        rows = free if len(free) else np.arange(model.particle_count)
        if len(rows):
            low = state.x[rows[np.argmin(state.x[rows, 2])]]
            reach = _reach(model)
            z = low[2] + gap * reach
            if meshes:
                size = 10.0 * reach
                vertices = np.array([[low[0] - size, low[1] - size, z],
                                     [low[0] + size, low[1] - size, z],
                                     [low[0], low[1] + size, z]])
                colliders.append(Collider(vertices, np.array([[0, 1, 2]])))
            if ground:  # tilted, so that it catches one end first (see ``_rest``)
                colliders.append(Plane((low[0], low[1], z), (0.3, 0.0, 1.0)))
    return colliders


def _rest(model: Model, substeps: int, *, meshes: bool, ground: bool, air: bool) -> None:
    """``warm``'s part "rest": frames thrown at the colliders, a moving triangle, the ropes
    counted at rest."""
    state = model.state()
    colliders = _colliders(model, state, meshes, ground)
    if colliders:
        # Thrown at them: contacts that change segment lengths run the rope's re-solve
        # (``solve.substeps.RESOLVE_STRAIN``), whose kernels a gentle touch would leave out.
        free = np.flatnonzero(model.particle_inv_mass > 0.0)
        state.v[free if len(free) else np.arange(model.particle_count)] = (0.0, 0.0, -3.0)
    # With contacts, some kernels run only from the second frame on (particles resting on a
    # face, candidates kept from the last frame): a few frames reach them.
    for frame in range(CONTACT_FRAMES if colliders or model.self_collision else 1):
        if frame == CONTACT_FRAMES // 2 and colliders and isinstance(colliders[0], Collider):
            # the second half with the triangle moving (a moving collider's kernels)
            triangle = colliders[0]
            colliders[0] = triangle.moved(triangle.vertices, triangle.vertices + 1e-4)
        step(model, state, WARM_DT, substeps, colliders=colliders, air=_air(air))
    if state.rest is not None:
        # one more frame with every rope counted at rest for long enough: the kernels of
        # falling asleep and of the wake tests (``core.sleep``), which playback reaches only
        # once ropes rest (a first compile then would stall it)
        state.rest = Rest(np.full(model.particle_count, SLEEP_TIME), state.rest.speed,
                          state.rest.asleep, state.rest.key)
        step(model, state, WARM_DT, substeps, colliders=colliders, air=_air(air))


def _falling(model: Model, substeps: int, meshes: bool, air: bool) -> None:
    """Ropes falling freely from rest for ``FALL_FRAMES`` frames, beside a wall (``meshes``:
    a vertical triangle within reach of the ropes' side, never touched), then, where they
    collide with each other, nudged at rest (``_nudged``): the searches of frames whose
    ropes moved since the last (of the colliders with the ropes' predicted ends; rope-rope,
    the full one and the partial one for the few segments off their prediction), which
    every frame after the first may need (a first compile then stalled the frame that
    caught up two: 2.9 s on one core, Blender, a self-colliding rope over a box)."""
    state = model.state()
    colliders: list[Collider | Plane] = []
    if meshes and model.particle_count:
        reach = _reach(model)
        low, high = state.x.min(axis=0), state.x.max(axis=0)
        side = high[1] + WALL_GAP * reach  # beside the ropes, along their fall
        # [m] reaching 1 m past the ropes' ends, above them and below their fall
        fall = 0.5 * 9.81 * (FALL_FRAMES * WARM_DT) ** 2 + 1.0
        vertices = np.array([[low[0] - 1.0, side, high[2] + 1.0],
                             [high[0] + 1.0, side, high[2] + 1.0],
                             [0.5 * (low[0] + high[0]), side, low[2] - fall]])
        colliders.append(Collider(vertices, np.array([[0, 1, 2]])))
    for _ in range(FALL_FRAMES):
        step(model, state, WARM_DT, substeps, colliders=colliders, air=_air(air))
    if model.self_collision:
        _nudged(model, substeps)
        # the end of a rope-rope prediction carried past a frame's end (``contacts.ropes``),
        # which no frame here reaches: a rope landing on a box compiled it in its frame
        from .contacts.kernels_segments import moving

        moving(state.v, state.v, np.zeros(model.particle_count, dtype=np.uint8))


def _nudged(model: Model, substeps: int) -> None:
    """A rope at rest, weightless, then one of its points pushed: the rope-rope search again
    for the few segments off their prediction (``contacts.ropes``' partial search), which
    playback reaches only once ropes move apart from each other (a first compile then
    stalled a frame). Not when a fifth of the points is more than one (a full search)."""
    free = np.flatnonzero(model.particle_inv_mass > 0.0)
    if model.particle_count < PARTIAL_SHARE or not len(free):
        return
    still = model.state()
    weightless = (0.0, 0.0, 0.0)
    step(model, still, WARM_DT, substeps, gravity=weightless)
    still.v[free[0]] = (0.0, 0.0, NUDGE_SPEED)
    step(model, still, WARM_DT, substeps, gravity=weightless)


def compiled_kernel_count(prefix: str | None = None) -> int:
    """How many kernel specialisations this process holds (compiled or loaded from the
    cache) in the modules whose names start with ``prefix`` (default: this package, the
    core); 0 before numba is imported. Rising while ``warm`` runs: its progress."""
    # Looked up, not imported: the preparation thread may be importing numba right now, and
    # an import from this (the interface's) thread then meets a half-initialised module
    # ("cannot import name ... partially initialized module"; seen in the test suite).
    registry = sys.modules.get("numba.core.registry")
    CPUDispatcher = getattr(registry, "CPUDispatcher", None)  # noqa: N806 - a class
    if CPUDispatcher is None:
        return 0

    prefix = prefix if prefix is not None else __name__.rpartition(".")[0]
    count = 0
    for name, module in list(sys.modules.items()):
        if module is None or not name.startswith(prefix):
            continue
        for value in list(vars(module).values()):
            if isinstance(value, CPUDispatcher) and value.__module__ == name:
                count += len(value.overloads)
    return count

