"""One simulated object (``RopeSim``: model, per-frame cache, I/O) and the module registry.

Simulation state never lives in a PropertyGroup. ``REGISTRY`` maps an object's
``session_uid`` to its ``RopeSim``; an entry is rebuilt whenever the object's settings, the
scene's gravity or frame rate, or the topology change (``settings_key``), and is simply
rebuilt from the stored rest shape after a file is reopened.

Frames are made by the frame engine (engine.py): a ``RopeSim`` is what one object brings to
it (its layout, rest shape, settings, pins, writing), fixed once made, and its ``Track``,
where the engine keeps the rope's current Model and frames.
"""

from __future__ import annotations

import math
import traceback
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import numpy as np

from ... import core
from ...core.rod import RodState
from .. import schema
from ..errors import RetryError
from ..read import attachments as attach
from ..read import geometry, maps, pins, rest
from ..read.geometry import Layout, RopeError
from ..write import curve_tilt, rope_data
from ..write import tears as tear
from ..write.curve import write_rod_tilt
from ..write.kinds import Writer, writer_for
from . import changes, stiffness
from .checks import (
    MAX_ACCELERATION,
    MAX_COORDINATE,
    check_matrix,
    energy_at_start,
    matrix_problem,
)
from .inputs import Inputs


@dataclass(slots=True)
class Frame:
    """One cached frame of a simulation."""

    x: np.ndarray
    """Particle positions [m] (world space), shape [N, 3], float64"""
    v: np.ndarray
    """Particle velocities [m/s] (world space), shape [N, 3], float64"""
    targets: np.ndarray
    """Pin targets [m] at this frame (world space), shape [len(pinned_ids), 3]"""
    pinned_ids: np.ndarray
    """The particles pinned by the settings at this frame: the output keeps them at their
    modelled place (they move with the object, its hooks and deformers)"""
    holds: tuple[attach.Hold, ...] = ()
    """Each attachment's state after this frame (attachments.py)"""
    channels: np.ndarray | None = None
    """The stamp of the animated settings at this frame (animated.py), to find stale
    frames when an animation is edited"""
    torn: np.ndarray | None = None
    """The segments torn by this frame (``tear_force``), bool [edge_count]; None: none"""
    tension: np.ndarray | None = None
    """Segment tensions [N] at the end of this frame, per layout edge (0 where torn); None
    before the first step, or where the solver keeps none (the sweep). For readouts"""
    ms: float = 0.0
    """Wall time [ms] of the frame engine's step of the run that made this frame"""
    rod: RodState | None = None
    """A rod's frames, twist rates and (plastic) rest shape at the end of this frame
    (``core.rod``); None for a rope, or at the start frame (its rest state)"""
    turn: np.ndarray | None = None
    """A rod's object's rotation [3, 3] at this frame (``inputs.read_turn``): the next
    frame turns the rod's ends by its change; None for a rope"""
    rest: Any = None
    """``core.sleep.Rest`` of this frame's particles (how long each rope has been at rest,
    which sleep): the next frame starts from it as from x and v; None: all awake"""
    budget: float | None = None
    """The safety net's energy budget [J] (``checks.energy_budgets``): the start frame's
    energy (elastic included), or that of the last frame something uncounted acted in
    (``checks.energy_anchor``), plus the work of forces and soft pins since"""
    model: Any = None
    """The Model this frame was made with: the next frame's budget holds while it is"""
    springs: Any = None
    """This rope's soft pins of this frame (``core.SoftPins``, its own particle numbers),
    whose targets the next frame's budget follows; None: none"""


def scene_gravity(scene: Any) -> tuple[float, float, float]:
    """Gravity [m/s^2] as Blender's own physics use it: scene.gravity if use_gravity, else 0."""
    if not scene.use_gravity:
        return (0.0, 0.0, 0.0)
    return tuple(float(g) for g in scene.gravity)  # type: ignore[return-value]


def frame_dt(scene: Any) -> float:
    """Length of one frame [s]: fps_base / fps."""
    return float(scene.render.fps_base) / float(scene.render.fps)


def settings_key(obj: Any, scene: Any) -> str:
    """Everything a simulation depends on besides geometry values. A different key means the
    cached frames are stale. A string so that NaN settings compare equal to themselves."""
    s = obj.xpbd
    # Whether the pin group exists is part of the key: deleting it must stop the simulation.
    group = bool(s.pin_group) and obj.type == "MESH" and s.pin_group in obj.vertex_groups
    # Shape keys added while simulating must stop the rope (they hide what it writes), as at
    # build time; a matrix scaled to zero and then fixed must retry without a Reset.
    shape_keys = obj.type == "MESH" and obj.data.shape_keys is not None
    matrix_ok = matrix_problem(np.array(obj.matrix_world, dtype=np.float64), obj.name) is None
    return repr((changes.key(obj), group, scene_gravity(scene), frame_dt(scene),
                 geometry.topology_signature(obj), shape_keys, matrix_ok,
                 changes.fields_key(obj, scene), maps.key(obj)))


def _check_settings(obj: Any, scene: Any) -> None:
    problem = schema.problem(obj.xpbd, frame_dt(scene))
    if problem is not None:
        raise RopeError(problem)
    gravity = scene_gravity(scene)
    if not all(math.isfinite(g) for g in gravity):
        raise RopeError("Scene gravity is not a finite vector")
    magnitude = math.hypot(*gravity)
    if magnitude > MAX_ACCELERATION:
        raise RopeError(f"Scene gravity must be at most {MAX_ACCELERATION:.0e} m/s^2 (got "
                        f"{magnitude:.3g})")



def settings_snapshot(settings: Any) -> SimpleNamespace:
    """The values of every setting of ``Object.xpbd`` (``schema.SETTINGS``; the bake
    settings left out), readable as attributes like the PropertyGroup itself."""
    values = {s.name: getattr(settings, s.name) for s in schema.SETTINGS}
    for s in schema.SETTINGS:  # an ID by its name: a reference could dangle after an undo
        if s.kind == schema.POINTER and values[s.name] is not None:
            values[s.name] = values[s.name].name
    return SimpleNamespace(**values)


@dataclass(slots=True)
class Track:
    """What changes as one rope's frames are made: written only by the frame engine's
    ``Run`` that steps the rope (and the ``RopeSim`` methods it calls), read by the panel and
    the readouts. Everything else of a ``RopeSim`` is fixed when it is made."""

    model: Any
    """The Model of the newest frame made (``RopeSim.model_for``)"""
    start_model: Any
    """The Model of the last start frame: the safety net's energy budget holds only while the
    Model (settings, pins) is the start frame's"""
    model_world: np.ndarray
    """The object matrix the start Model's world rest shape was built with (see
    ``RopeSim.reset_frame``)"""
    write_buffer: np.ndarray
    """Object-space float32 points that foreach_set takes: [N, 3] for meshes, [N, 4] (co +
    NURBS weight, filled once) for curves, so each spline writes a slice of it"""
    models: dict[tuple, Any] = field(default_factory=dict)
    """Models of recent frames by (settings values, pinned particles, torn segments): a
    keyframed setting or an attachment gives a frame another Model (``model_for``)"""
    cache: dict[int, Frame] = field(default_factory=dict)
    """The frames made, by frame number"""
    run: Any = None
    """The ``engine.Run`` that fills ``cache`` (this rope alone, or with the ropes it
    collides with)"""
    animation_signature: tuple | None = None
    """The animated F-Curves' ``animated.signature`` when the cache was last checked"""
    collider_notes: tuple[str, ...] = ()
    """Notes on the colliders of the last frame read (skipped or open meshes)"""
    group_notes: tuple[str, ...] = ()
    """Notes on the other self-colliding ropes this one does not collide with (group.py)"""
    field_notes: tuple[str, ...] = ()
    """Notes on the force fields of the last frame made (fields skipped, wind without air)"""


class RopeSim:
    """The simulation of one object: what the rope is (layout, rest shape, settings, pins,
    what can change per frame), fixed once made (an attribute is set once), and its
    ``track``: the Models and frames made so far."""

    __slots__ = ("key", "scene_name", "layout", "rest_local", "rest_xyz", "hooks", "pinned",
                 "pinned_ids", "changes", "settings", "substeps", "preroll", "tear_force",
                 "radii", "frame_start", "frame_end", "gravity", "dt", "air", "maps", "writer",
                 "soft_map", "track", "rest_tilt", "__weakref__")

    def __setattr__(self, name: str, value: Any) -> None:
        # What describes a rope is fixed once it is made: a different rope is a new RopeSim
        # (``ensure``), and what changes from frame to frame lives in ``track``.
        if hasattr(self, name):
            raise AttributeError(f"RopeSim.{name} is fixed once the rope is made")
        object.__setattr__(self, name, value)

    def __init__(self, obj: Any, scene: Any, key: str) -> None:
        _check_settings(obj, scene)
        layout = geometry.build_layout(obj)
        found = rest.inspect(obj, layout)
        if found.problem is not None:
            raise RopeError(found.problem)
        stored = found.local
        if stored is None:
            stored = writer_for(layout.kind).read_local(obj, layout)
            rest.store(obj, layout, stored)  # refuses a non-finite shape
        settings = obj.xpbd
        self.writer: Writer = writer_for(layout.kind)
        """How this rope's kind of data is read and written (mesh, curve): decided here once"""
        self.key = key
        """The settings key the rope was built with (``settings_key``)"""
        self.scene_name = scene.name
        self.layout: Layout = layout
        self.rest_local = stored
        """Stored rest shape, float32 (mesh [N, 3]; curve [N, CURVE_REST_STRIDE])"""
        self.rest_xyz = stored[:, 0:3].astype(np.float64)
        """Rest positions in object space [m], shape [N, 3]"""
        self.rest_tilt = rest.modelled_tilt(obj.data, layout)
        """A curve's modelled tilt [rad] [N] (a rod's roll, ``curve_tilt``), or None"""
        self.hooks = self.writer.hooks(obj, layout)
        self.maps = maps.read_maps(obj, len(self.rest_xyz))
        """The per-point maps' weights (read/maps.py), read when the rope is made"""
        self.pinned = pins.pin_mask(obj, layout, settings, self.hooks, self.maps.get("pin"))
        """Pinned particles [N] by the settings as they are now (``model_for`` follows the
        animated ``pin_first`` / ``pin_last`` of each frame), a Pin Map's weight 1 too"""
        self.pinned_ids = np.flatnonzero(self.pinned)
        self.soft_map = maps.soft_pins(self.maps.get("pin"), settings.pin_map_stiffness,
                                       self.pinned)
        """The points a Pin Map holds by springs (their targets read every frame), or None"""
        self.changes = changes.Changes(obj, layout)
        """What can change while the rope plays: animated settings, attachments"""
        world = np.array(obj.matrix_world, dtype=np.float64)
        check_matrix(world, obj.name)
        self.settings = settings_snapshot(settings)
        """The object's settings as plain values, for rebuilding the Model at the start frame
        (a bpy reference kept here could dangle after an undo)"""
        self.substeps = int(settings.substeps)
        self.preroll = int(settings.preroll)
        self.tear_force = float(settings.tear_force)
        """Tension [N] above which a segment breaks; 0 = never"""
        self.radii = (self.writer.prepare_tears(obj, layout) if self.tear_force > 0.0
                      else None)
        """A tearing curve's modelled point radii [m] (a tear shows as radius 0, tears.py)"""
        self.frame_start = int(settings.frame_start)
        self.frame_end = int(settings.frame_end)
        self.gravity = scene_gravity(scene)
        self.dt = frame_dt(scene)
        self.air = schema.air_of(settings)
        """The air the rope moves through (``core.Air``), None without air (``use_air``)"""
        model = self._build_model(world, self.settings, self.pinned)
        self.track = Track(model, model, world, np.ascontiguousarray(
            stored[:, 0:self.writer.point_width], dtype=np.float32).copy())

    # --- what the frame engine and the panel read of the track ---------------------------------
    @property
    def model(self) -> Any:
        """The Model of the newest frame made (``Track.model``)."""
        return self.track.model

    @property
    def cache(self) -> dict[int, Frame]:
        """The frames made, by frame number (``Track.cache``)."""
        return self.track.cache

    @property
    def run(self) -> Any:
        """The ``engine.Run`` that fills the cache (``Track.run``)."""
        return self.track.run

    def _build_model(self, world: np.ndarray, settings: Any = None,
                     pinned: np.ndarray | None = None, torn: np.ndarray | None = None) -> Any:
        """The core Model of the rest shape placed by ``world`` (rest lengths, masses and
        compliances in world units), with ``settings`` (default: the rope's), the
        ``pinned`` mask [N] (default: the settings' pins) and without the ``torn`` edges."""
        settings = self.settings if settings is None else settings
        pinned = self.pinned if pinned is None else pinned
        world_rest = pins.transform(world, self.rest_xyz)
        edges = self.layout.edges
        arguments = stiffness.apply_maps(
            stiffness.model_arguments(settings, world_rest, edges, pinned,
                                      curve_tilt.roll_of(self, world)), self.maps,
            settings, edges, float(settings.radius))
        if torn is not None:  # the segments' own arrays without the torn ones
            kept = ~torn
            edges = edges[kept]
            for name in ("compliance", "rest_length"):
                if name in arguments and np.ndim(arguments[name]) == 1:
                    arguments[name] = arguments[name][kept]
        try:
            return core.Model(world_rest, edges,
                              **{**schema.model_keywords(settings), **arguments})
        except ValueError as exc:
            raise RopeError(f"Cannot build the rope: {exc}") from exc

    def model_for(self, inputs: Inputs, holds: tuple[attach.Hold, ...],
                  torn: np.ndarray | None = None) -> Any:
        """The Model of a frame made with ``inputs`` while ``holds`` hold their points and
        the ``torn`` segments are gone: the start Model when nothing changed, else one with
        the frame's settings, pins and segments (kept for the next frames while the same)."""
        pinned = self.pinned_at(inputs.values)
        held = [s.particles for s, h in zip(self.changes.attachments, holds, strict=True)
                if h.offsets is not None and s.compliance == 0.0]  # springs: soft pins
        if held:
            pinned = pinned.copy()
            pinned[np.concatenate(held)] = True
        if not inputs.values and not held and pinned is self.pinned and torn is None:
            return self.track.start_model
        key = (inputs.values, pinned.tobytes(), None if torn is None else torn.tobytes())
        model = self.track.models.get(key)
        if model is None:
            if len(self.track.models) >= MODELS_KEPT:
                self.track.models.pop(next(iter(self.track.models)))
            settings = changes.settings_with(self.settings, self.changes.names, inputs.values)
            model = self.track.models[key] = self._build_model(self.track.model_world,
                                                               settings, pinned, torn)
        return model

    def turn(self, matrix_world: np.ndarray) -> np.ndarray | None:
        """A rod's turn since its rest shape was placed (``stiffness.turn_of``); None: rope."""
        return stiffness.turn_of(self.track.start_model, self.track.model_world, matrix_world)

    def pinned_at(self, values: tuple) -> np.ndarray:
        """The settings' pinned particles [N] with the animated ``values`` of a frame
        (curves: ``pin_first`` / ``pin_last`` may be keyframed)."""
        names = self.changes.names
        if self.layout.kind == "MESH" or not ({"pin_first", "pin_last"} & set(names)):
            return self.pinned
        settings = changes.settings_with(self.settings, names, values)
        mask = pins.pin_mask(None, self.layout, settings, self.hooks, self.maps.get("pin"))
        return self.pinned if np.array_equal(mask, self.pinned) else mask

    # --- reading -------------------------------------------------------------------------
    def targets(self, obj: Any, depsgraph: Any, render: bool,
                pinned_ids: np.ndarray | None = None) -> np.ndarray:
        """Targets [m] (world) of the pinned particles ``pinned_ids`` (default: the
        settings' pins) at the depsgraph's frame, shape [len(pinned_ids), 3]."""
        ids = self.pinned_ids if pinned_ids is None else pinned_ids
        t = self.writer.pin_targets(obj, depsgraph, self.rest_local, ids, self.hooks, render)
        if not np.all(np.isfinite(t)):
            raise RetryError("A pin target is NaN or infinite (check the object's and its "
                             "targets' transforms)")
        return t

    @property
    def collider_problems(self) -> tuple[str, ...]:
        """Notes for the Collision panel: colliders skipped or open, ropes not collided with."""
        return self.track.collider_notes + self.track.group_notes

    # --- frames ----------------------------------------------------------------------------
    def reset_frame(self, world: np.ndarray, inputs: Inputs) -> Frame:
        """The start-frame state: the rest shape placed by ``world``, pins on their targets
        (``inputs``), the attachments that are on holding their points where they are.

        The Model is rebuilt here if it was built with another matrix: a rope is built at
        whatever frame it is first seen (a jump, a reopened file, a bake started elsewhere),
        and under a rotating parent the float32 matrix of that frame gives rest lengths that
        differ in their last bits from the start frame's. Every run of frames starts here,
        so the Model is always the start frame's and frames do not depend on the path taken
        to them."""
        if not np.array_equal(world, self.track.model_world):
            self.track.start_model = self._build_model(world)
            self.track.model_world = world.copy()
            self.track.models.clear()
        x = pins.transform(world, self.rest_xyz)
        x[inputs.pinned_ids] = inputs.targets
        if len(x) and np.abs(x).max() > MAX_COORDINATE:
            # (placed there, not thrown: the safety net would blame the solve)
            raise RetryError(f"The rope starts more than {MAX_COORDINATE:g} m from the world "
                             "origin (its object's location or scale, or a pin's target): "
                             "single-precision coordinates have no precision left there")
        found = self.changes.attachments
        holds = attach.step_holds(found, (attach.FREE,) * len(found), inputs.enabled,
                                  inputs.matrices, x)
        self.track.model = self.model_for(inputs, holds)
        start = Frame(x, np.zeros_like(x), inputs.targets, inputs.pinned_ids, holds,
                      inputs.channels,
                      turn=None if self.track.start_model.rod_layout is None else np.eye(3))
        start.budget = energy_at_start(self.track.model, start, self.gravity)
        start.model = self.track.model
        return start

    # --- writing ---------------------------------------------------------------------------
    def write(self, obj: Any, world: np.ndarray, frame: Frame) -> None:
        """Write the free particles of ``frame`` (world [m]) into the object's data in
        object space, with this frame's matrix. Pinned points keep their stored (rest)
        values."""
        from ..write import io_kernels  # numba: imported on the first write, after numba loaded

        buf = self.track.write_buffer
        # Every row converted, then the few pinned rows put back: cheaper than gathering and
        # scattering the free rows.
        io_kernels.world_to_local(frame.x, pins.affine_inverse(world), frame.pinned_ids,
                                  self.rest_local, buf)
        if not np.isfinite(buf).all():
            # Finite in world space but beyond float32 in object space (a huge inverse
            # scale): never written into the user's data.
            raise RopeError("A point would be NaN or infinite in object space (check the "
                            "object's scale); nothing was written")
        try:
            self.writer.write(obj.data, self.layout, buf, self.rest_local)
        except (RuntimeError, TypeError, ValueError) as exc:
            # foreach_set checks sizes before writing: a topology change that the signature
            # did not catch ends here, with nothing written.
            raise RopeError(f"The geometry changed while simulating ({exc}); Reset to use "
                            "the current shape") from exc
        write_rod_tilt(obj.data, self, world, frame)

    def write_rest(self, obj: Any) -> None:
        """Put the exact stored rest shape back into the object's data."""
        self.track.write_buffer[:, 0:3] = self.rest_local[:, 0:3]
        self.writer.write_rest(obj.data, self.layout, self.rest_local)
        if self.tear_force > 0.0:
            self.writer.restore_tears(obj, self.layout)

    def show_tears(self, obj: Any, frame: int) -> None:
        """Show the segments torn by ``frame`` (tears.py): edges removed, curve gaps."""
        if self.tear_force > 0.0:
            frames = tear.tear_frames(self.cache, len(self.layout.edges))
            self.writer.show_tears(obj, self.layout, frames, self.radii, frame)


# --- registry -------------------------------------------------------------------------------

REGISTRY: dict[int, RopeSim] = {}
"""Live simulations by Object.session_uid."""

MODELS_KEPT = 8
"""Models of animated frames a rope keeps (``RopeSim.model_for``): a replay reuses them."""

RETRY_KEY = "<retry>"
"""The settings key of a failure retried on every frame change (it matches no real key)."""

FAILED: dict[int, tuple[str, str]] = {}
"""Objects that cannot be simulated: session_uid -> (settings key, message for the panel).
Kept so a broken object is not rebuilt every frame; a new key or Reset retries."""


def ensure(obj: Any, scene: Any) -> RopeSim | None:
    """The object's simulation, built or rebuilt if its settings key changed; None (and a
    status message) if it cannot be simulated."""
    uid = obj.session_uid
    editor = rope_data.data_editor(obj)
    if editor is not None:
        # Edit Mode data is not in the mesh/curve until the user leaves it: write nothing.
        FAILED[uid] = ("<edit mode>", "Paused in Edit Mode: the rope resumes in Object Mode"
                       if editor == obj.name else
                       f"Paused while '{editor}', which shares its data, is in Edit Mode: "
                       "the rope resumes in Object Mode")
        return None
    if obj.type not in ("MESH", "CURVE"):
        key = repr(("TYPE", obj.type))
    else:
        key = settings_key(obj, scene)
    entry = REGISTRY.get(uid)
    if entry is not None and entry.key == key:
        FAILED.pop(uid, None)
        return entry
    failed = FAILED.get(uid)
    if failed is not None and failed[0] == key:
        return None
    REGISTRY.pop(uid, None)
    try:
        entry = RopeSim(obj, scene, key)
    except RetryError as exc:
        fail(obj, str(exc), RETRY_KEY)  # retried every frame: see RetryError
        return None
    except RopeError as exc:
        fail(obj, str(exc), key)
        return None
    except Exception as exc:  # noqa: BLE001 - a bug: report once, keep Blender running
        traceback.print_exc()
        fail(obj, internal_error(exc), key)
        return None
    FAILED.pop(uid, None)
    REGISTRY[uid] = entry
    return entry


def internal_error(exc: BaseException) -> str:
    """The panel message for an unexpected exception (a bug, not bad input)."""
    return f"Internal error ({type(exc).__name__}: {exc}); see the console"


def fail(obj: Any, message: str | RetryError, key: str | None = None) -> None:
    """Stop simulating ``obj`` and keep ``message`` for the panel (geometry is left as is);
    a RetryError is retried on the next frame change."""
    uid = obj.session_uid
    entry = REGISTRY.pop(uid, None)
    if isinstance(message, RetryError):
        key = RETRY_KEY
        message = str(message)
    if key is None:
        key = entry.key if entry is not None else ""
    FAILED[uid] = (key, message)


def status(obj: Any) -> str | None:
    """The error message of an object that is not being simulated, or None."""
    failed = FAILED.get(obj.session_uid)
    return failed[1] if failed is not None else None


def forget(obj: Any) -> None:
    """Drop the object's simulation and status (its stored rest shape stays)."""
    REGISTRY.pop(obj.session_uid, None)
    FAILED.pop(obj.session_uid, None)


def prune(scene: Any, live_uids: set[int]) -> None:
    """Drop simulations of ``scene`` whose objects are gone or no longer enabled."""
    for uid in [u for u, e in REGISTRY.items() if e.scene_name == scene.name
                and u not in live_uids]:
        del REGISTRY[uid]
    for uid in [u for u in FAILED if u not in live_uids]:
        del FAILED[uid]


def clear() -> None:
    """Forget every simulation (new file loaded, add-on unregistered)."""
    REGISTRY.clear()
    FAILED.clear()
