"""Bake operators: ``xpbd.bake`` (active object), ``xpbd.bake_selected`` (the selected ropes),
``xpbd.bake_all`` (every simulated, unbaked object of the scene), ``xpbd.free_bake``; and the
bake settings ``Object.xpbd.bake`` (``loop``: ``blender.bake_loop``).

In the UI a bake runs as a modal operator on a timer: the progress bar of the window manager
moves, Blender stays responsive, and Esc (or right click) cancels; nothing is written until
every frame is simulated, so a cancelled bake leaves the objects as they were. In background
mode (``blender -b``, farms and CI) the operators run to the end in ``execute`` and print a
progress line about once a second; cancelling there means stopping the process before the
file is saved (the .blend on disk is untouched).

Headless bake of a whole file, one line (docs/bake.md):

    blender -b scene.blend --python-expr \
        "import bpy; bpy.ops.xpbd.bake_all(); bpy.ops.wm.save_mainfile()"
    blender -c xpbd_bake scene.blend [--target KEYS|BONES|CACHE] [--output baked.blend]
"""

from __future__ import annotations

import traceback
from typing import TYPE_CHECKING, Any

import bpy
from bpy.props import (
    BoolProperty,
    EnumProperty,
)

from . import dependencies, preparation

# blender.bake (numpy) is imported in the operators' bodies: registering the add-on must not
# load numpy, which Blender 4.2 does not load at start (its start-up budget).
from .blender import schema_groups
from .blender.errors import RopeError

if TYPE_CHECKING:
    from .blender.bake import job as bake

TARGETS = schema_groups.BAKE_TARGETS
"""What a bake writes (declared with the bake's settings)."""


def _objects(context: Any, scope: str) -> list:
    """What a bake operator bakes: 'ALL' every simulated, unbaked rope of the scene,
    'SELECTED' those that are selected, 'ACTIVE' the active object."""
    if scope == "ALL":
        return [o for o in context.scene.objects if o.xpbd.enabled and not o.xpbd.bake.baked]
    if scope == "SELECTED":
        return [o for o in context.selected_objects if o.xpbd.enabled and not o.xpbd.bake.baked]
    return [context.active_object] if context.active_object is not None else []


NOTHING = {"ALL": "No simulated rope to bake",
           "SELECTED": "No selected rope to bake: select simulated ropes that are not baked",
           "ACTIVE": "No active object to bake"}
"""The error of a bake operator that finds nothing to bake, by scope."""


class _Bake:
    """The bake operators' shared body (a mixin: Blender registers annotations of mixins)."""

    bl_options = {"REGISTER", "UNDO"}
    scope = "ACTIVE"
    """What it bakes without ``all_objects`` (``_objects``)"""

    if TYPE_CHECKING:
        properties: Any

        def report(self, type: set[str], message: str) -> None: ...

    if TYPE_CHECKING:
        target: str
        all_objects: bool
    else:
        target: EnumProperty(
            name="Bake To", items=TARGETS, default="KEYS",
            description="What to write; not given: the rope's own Bake To (bake.target; "
                        "for Bake All the active rope's)")
        all_objects: BoolProperty(
            name="All Ropes", default=False, options={"SKIP_SAVE"},
            description="Bake every simulated object of the scene that is not baked yet")

    if TYPE_CHECKING:
        # Only for type checkers: Blender evaluates the class annotations of operators when
        # it registers them, and ``bake`` is not imported then.
        _job: bake.BakeJob | None
    _job = None
    _timer: Any = None

    def _start(self, context: Any) -> bake.BakeJob | None:
        from .blender.bake import job as bake

        # A preparation under way (a thread compiling kernels) is finished first: a bake
        # steps on this thread and needs them anyway.
        preparation.wait([], None)
        reason = dependencies.load_numba()
        if reason is not None:
            self.report({"ERROR"}, reason)
            return None
        scope = "ALL" if self.all_objects else self.scope
        objects = _objects(context, scope)
        if not objects:
            self.report({"ERROR"}, NOTHING[scope])
            return None
        segments = max(o.xpbd.bake.bone_segments for o in objects)
        target = self.target
        if not self.properties.is_property_set("target"):
            # Not told: the rope's own Bake To (the active rope's, for Bake All).
            active = context.active_object
            source = active if active is not None and active in objects else objects[0]
            target = source.xpbd.bake.target
        try:
            return bake.BakeJob(context, objects, target, segments)
        except RopeError as exc:
            self.report({"ERROR"}, str(exc))
            return None

    def _finish(self, job: bake.BakeJob) -> Any:
        try:
            messages = job.write()
        except Exception as exc:  # noqa: BLE001 - report, never leave a half bake
            traceback.print_exc()
            job.cancel()
            self.report({"ERROR"}, f"Bake failed ({type(exc).__name__}: {exc}); nothing "
                                   "was kept, see the console")
            return {"CANCELLED"}
        for warning in job.warnings:
            self.report({"WARNING"}, warning)
        self.report({"INFO"}, messages[0] if len(messages) == 1 else
                    f"Baked {len(messages)} ropes")
        return {"FINISHED"}

    def _fail(self, job: bake.BakeJob, exc: Exception) -> Any:
        if not isinstance(exc, RopeError):
            traceback.print_exc()
        job.cancel()
        self.report({"ERROR"}, f"Bake stopped at frame {job.frame}: {exc}; nothing was "
                               "changed")
        return {"CANCELLED"}

    def execute(self: Any, context: Any) -> Any:
        job = self._start(context)
        if job is None:
            return {"CANCELLED"}
        try:
            job.run()
        except Exception as exc:  # noqa: BLE001
            return self._fail(job, exc)
        return self._finish(job)

    def invoke(self, context: Any, event: Any) -> Any:
        if bpy.app.background or context.window is None:
            return self.execute(context)
        job = self._start(context)
        if job is None:
            return {"CANCELLED"}
        self._job = job
        wm = context.window_manager
        wm.progress_begin(0, 100)
        self._timer = wm.event_timer_add(0.01, window=context.window)
        wm.modal_handler_add(self)
        return {"RUNNING_MODAL"}

    def _end_modal(self, context: Any) -> None:
        wm = context.window_manager
        if self._timer is not None:
            wm.event_timer_remove(self._timer)
            self._timer = None
        wm.progress_end()

    def modal(self, context: Any, event: Any) -> Any:
        job = self._job
        assert job is not None
        if event.type in {"ESC", "RIGHTMOUSE"}:
            self._end_modal(context)
            job.cancel()
            self.report({"WARNING"}, "Bake cancelled: nothing was changed")
            return {"CANCELLED"}
        if event.type != "TIMER":
            return {"PASS_THROUGH"}
        try:
            job.advance(budget=0.1)  # short slices keep the UI (and Esc) responsive
        except Exception as exc:  # noqa: BLE001
            self._end_modal(context)
            return self._fail(job, exc)
        context.window_manager.progress_update(int(100 * job.progress))
        if not job.done:
            return {"RUNNING_MODAL"}
        self._end_modal(context)
        return self._finish(job)


class XPBD_OT_bake(_Bake, bpy.types.Operator):  # type: ignore[misc]
    """Simulate the bake range of the active rope and turn it into animation that plays
    without the add-on"""

    bl_idname = "xpbd.bake"
    bl_label = "Bake Rope"
    # The tooltip: Blender shows a docstring as written, line break and indentation included.
    bl_description = ("Simulate the bake range of the active rope and turn it into animation "
                      "that plays without the add-on")


class XPBD_OT_bake_all(_Bake, bpy.types.Operator):  # type: ignore[misc]
    """Bake every simulated rope of the scene that is not baked yet"""

    bl_idname = "xpbd.bake_all"
    bl_label = "Bake All Ropes"
    scope = "ALL"


class XPBD_OT_bake_selected(_Bake, bpy.types.Operator):  # type: ignore[misc]
    """Bake the selected simulated ropes that are not baked yet (and the ropes they collide
    with, which are simulated with them)"""

    bl_idname = "xpbd.bake_selected"
    bl_label = "Bake Selected Ropes"
    bl_description = ("Bake the selected simulated ropes that are not baked yet (and the "
                      "ropes they collide with, which are simulated with them)")
    scope = "SELECTED"


class XPBD_OT_free_bake(bpy.types.Operator):
    """Remove the bake (exactly what it added) and return to the live simulation"""

    bl_idname = "xpbd.free_bake"
    bl_label = "Free Bake"
    bl_options = {"REGISTER", "UNDO"}

    if TYPE_CHECKING:
        all_objects: bool
    else:
        all_objects: BoolProperty(name="All Ropes", default=False,
                                  description="Free the bake of every baked rope of the scene")

    def execute(self, context: Any) -> Any:
        from .blender.bake import job as bake

        if self.all_objects:
            objects = [o for o in context.scene.objects if o.xpbd.bake.baked]
        else:
            objects = [context.active_object] if context.active_object else []
        if not objects:
            self.report({"ERROR"}, "No baked rope to free")
            return {"CANCELLED"}
        messages, errors = [], []
        for obj in objects:
            try:
                messages.append(bake.free(obj))
            except RopeError as exc:
                errors.append(str(exc))
        if not messages:
            self.report({"ERROR"}, "; ".join(errors))
            return {"CANCELLED"}
        for error in errors:
            self.report({"WARNING"}, error)
        self.report({"INFO"}, messages[0] if len(messages) == 1 else
                    f"Freed {len(messages)} bakes")
        # Show the live simulation at the current frame right away.
        context.scene.frame_set(context.scene.frame_current)
        return {"FINISHED"}


CLI_COMMAND = "xpbd_bake"
"""``blender -c xpbd_bake FILE.blend [--target KEYS|BONES|CACHE] [--output OUT.blend]`` (command ids
must be Python identifiers, so no dash)."""


def cli_bake(argv: list[str]) -> int:
    """The ``xpbd_bake`` command: open a .blend, bake every simulated rope (``bake_all``),
    save it (over itself, or to ``--output``). Returns the exit status: 0 baked and saved,
    1 nothing saved (the reason is printed)."""
    import argparse

    parser = argparse.ArgumentParser(
        prog=f"blender -c {CLI_COMMAND}",
        description="Bake every XPBD rope of a .blend file and save it")
    parser.add_argument("blend", help="the .blend file to bake")
    parser.add_argument("--target", choices=[t[0] for t in TARGETS], default=None,
                        help="KEYS: keyframes / shape keys; BONES: armatures; CACHE: an "
                             "Alembic/USD file per bake; default: the ropes' own Bake To "
                             "(the active rope's)")
    parser.add_argument("--output", help="save here instead of over the input file")
    args = parser.parse_args(argv)
    try:
        bpy.ops.wm.open_mainfile(filepath=args.blend)
        told = {} if args.target is None else {"target": args.target}
        bpy.ops.xpbd.bake_all(**told)  # type: ignore[attr-defined]
    except RuntimeError as exc:  # an ERROR report of the operator, or a file that will not open
        print(f"XPBD Rope: nothing saved: {exc}")
        return 1
    bpy.ops.wm.save_as_mainfile(filepath=args.output or args.blend)
    return 0


CLASSES = (XPBD_OT_bake, XPBD_OT_bake_selected, XPBD_OT_bake_all, XPBD_OT_free_bake)
"""Registered here; the bake's PropertyGroup (XPBD_PG_bake) is built and registered by
properties.py from ``schema_groups.BAKE`` (it is part of Object.xpbd)."""

_cli_handle: Any = None


def register() -> None:
    global _cli_handle
    for cls in CLASSES:
        bpy.utils.register_class(cls)
    register_cli = getattr(bpy.utils, "register_cli_command", None)  # Blender 4.2+
    if register_cli is not None and _cli_handle is None:
        _cli_handle = register_cli(CLI_COMMAND, cli_bake)


def unregister() -> None:
    global _cli_handle
    if _cli_handle is not None:
        bpy.utils.unregister_cli_command(_cli_handle)
        _cli_handle = None
    for cls in reversed(CLASSES):
        bpy.utils.unregister_class(cls)
