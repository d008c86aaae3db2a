"""Operators: ``xpbd.reset``, ``xpbd.rope_add`` (Add > Curve > XPBD Rope) and
``xpbd.chain_links`` (a link object instanced along a rope).

The bake operators (``xpbd.bake``, ``xpbd.bake_all``, ``xpbd.free_bake``) are in
``bake_operators``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import bpy
from bpy.props import BoolProperty, FloatProperty, IntProperty

# numpy and the modules using it (blender.geometry, rest, sim) are imported inside the
# functions: registering the add-on must not load numpy, which Blender 4.2 does not load at
# start (its start-up budget). RopeError comes from a numpy-free module.
from .blender.errors import RopeError


def reset_object(obj: Any, *, use_current: bool = False) -> str:
    """Restore ``obj``'s rest shape exactly and drop its cache. If its topology changed since
    the rest shape was stored, or ``use_current`` is set, the current shape becomes the rest
    shape instead. Returns what was done; raises RopeError if it cannot be a rope."""
    from .blender.frame import sim
    from .blender.read import geometry, rest
    from .blender.write import rope_data

    editor = rope_data.data_editor(obj)
    if editor is not None:
        raise RopeError(f"'{editor}' is in Edit Mode: leave it first")
    if obj.xpbd.bake.baked:
        # Its stored rest shape is what Free Bake puts back: a reset (Use Current above
        # all, which would store the baked pose) must not change it.
        raise RopeError(f"'{obj.name}' is baked: Free Bake first")
    layout = geometry.build_layout(obj)
    if not obj.xpbd.enabled and not rest.has_rest(obj):
        raise RopeError(f"'{obj.name}' is not a rope: enable XPBD Rope in its Physics tab")
    found = None if use_current else rest.inspect(obj, layout)
    # The rest shape is stored in the data: every object sharing it (a linked duplicate)
    # starts again from what this reset leaves there, and none of them may be baked.
    objects: Any = bpy.data.objects
    sharers = [other for other in objects
               if other == obj or (obj.data is not None and other.data == obj.data)]
    for other in sharers:
        if other.xpbd.bake.baked:
            raise RopeError(f"'{other.name}', which shares its data, is baked: Free Bake "
                            "first")
    for other in sharers:
        sim.forget(other)
    if found is None or found.local is None:
        # Refuses (RopeError, nothing stored) a current shape with a NaN or infinite point.
        rest.store(obj, layout, geometry.read_local(obj, layout))
        if found is not None and found.topology_changed:
            return "Topology changed: the current shape is the new rest shape"
        if found is not None and found.problem is not None:
            return "The stored rest shape could not be used: the current shape is the new one"
        return "The current shape is the rest shape"
    rope_data.restore_rest(obj)
    return "Rest shape restored"


class XPBD_OT_reset(bpy.types.Operator):
    """Restore the rest shape and clear the cache (active object, or all simulated objects)"""

    bl_idname = "xpbd.reset"
    bl_label = "Reset Rope"
    bl_options = {"REGISTER", "UNDO"}

    if TYPE_CHECKING:
        all_objects: bool
        use_current: bool
    else:
        all_objects: BoolProperty(
            name="All Ropes", default=False,
            description="Reset every simulated object of the scene, not only the active one")
        use_current: BoolProperty(
            name="Use Current Shape as Rest", default=False,
            description="Keep the current shape and make it the new rest shape")

    def execute(self, context: Any) -> Any:
        baked: list[str] = []
        if self.all_objects:
            # Baked ropes play their bake and keep the rest shape Free Bake restores: Reset
            # All leaves them alone (docs/blender-usage.md, "The rest shape").
            objects = [o for o in context.scene.objects if o.xpbd.enabled]
            baked = [o.name for o in objects if o.xpbd.bake.baked]
            objects = [o for o in objects if not o.xpbd.bake.baked]
        else:
            objects = [context.active_object] if context.active_object else []
        if not objects:
            self.report({"ERROR"}, "Every simulated rope is baked: Free Bake first" if baked
                        else "No active object to reset")
            return {"CANCELLED"}
        messages, errors = [], []
        for obj in objects:
            try:
                messages.append(reset_object(obj, use_current=self.use_current))
            except RopeError as exc:
                errors.append(f"Cannot reset '{obj.name}': {exc}")
        if not messages:
            self.report({"ERROR"}, "; ".join(errors))
            return {"CANCELLED"}
        for error in errors:  # Reset All: the ropes that could be reset were
            self.report({"WARNING"}, error)
        left = f" ({len(baked)} baked left as they are)" if baked else ""
        self.report({"INFO"}, messages[0] + left if len(messages) == 1 else
                    f"Reset {len(messages)} ropes{left}")
        return {"FINISHED"}


class XPBD_OT_rope_add(bpy.types.Operator):
    """Add a rope: a horizontal poly curve at the 3D cursor, pinned at its first point"""

    bl_idname = "xpbd.rope_add"
    bl_label = "XPBD Rope"
    bl_options = {"REGISTER", "UNDO"}

    if TYPE_CHECKING:
        points: int
        length: float
        thickness: float
    else:
        points: IntProperty(name="Points", default=20, min=2, max=100000,
                            description="Number of points of the rope [count]")
        length: FloatProperty(name="Length", default=2.0, min=1e-4, soft_max=100.0,
                              unit="LENGTH", description="Rest length of the rope [m]")
        thickness: FloatProperty(name="Thickness", default=0.01, min=0.0, soft_max=1.0,
                                 unit="LENGTH",
                                 description="Radius of the rope [m]: the curve's bevel "
                                             "depth and its collision radius")

    def execute(self, context: Any) -> Any:
        import numpy as np

        curve = bpy.data.curves.new("XPBD Rope", "CURVE")
        curve.dimensions = "3D"
        curve.bevel_depth = self.thickness
        spline = curve.splines.new("POLY")
        spline.points.add(self.points - 1)
        co = np.zeros((self.points, 4), dtype=np.float32)
        co[:, 0] = np.linspace(0.0, self.length, self.points)
        co[:, 3] = 1.0
        spline.points.foreach_set("co", co.ravel())
        obj: Any = bpy.data.objects.new("XPBD Rope", curve)
        obj.location = context.scene.cursor.location
        context.collection.objects.link(obj)
        for other in context.selected_objects:
            other.select_set(False)
        obj.select_set(True)
        context.view_layer.objects.active = obj
        obj.xpbd.pin_first = True
        obj.xpbd.radius = self.thickness  # contacts at the rendered surface
        # A new rope feels the air (a Wind field moves it); ropes of files made before the
        # setting existed read its default, off, and play as they did.
        obj.xpbd.use_air = True
        obj.xpbd.enabled = True  # starts preparing the solver (properties._on_enabled)
        return {"FINISHED"}


class XPBD_OT_chain_links(bpy.types.Operator):
    """Instance the selected object as a link on every segment of the active curve rope"""

    bl_idname = "xpbd.chain_links"
    bl_label = "Chain Links"
    bl_options = {"REGISTER", "UNDO"}

    def execute(self, context: Any) -> Any:
        from .blender.write import links

        rope = context.active_object
        if rope is None or rope.type != "CURVE":
            self.report({"ERROR"}, "Chain links need a curve rope as the active object "
                                   "(Add > Curve > XPBD Rope)")
            return {"CANCELLED"}
        others = [o for o in context.selected_objects if o != rope]
        if len(others) != 1:
            self.report({"ERROR"}, "Select the link object, then the rope (active): "
                                   f"{len(others)} other objects are selected")
            return {"CANCELLED"}
        link = others[0]
        if not max(link.dimensions) > 0.0:
            self.report({"ERROR"}, f"'{link.name}' has no size: a link needs geometry")
            return {"CANCELLED"}
        links.add_links(rope, link)
        self.report({"INFO"}, f"'{link.name}' on every segment of '{rope.name}' (hide "
                              f"'{link.name}' itself if it should not render)")
        return {"FINISHED"}


def menu_curve_add(self: Any, context: Any) -> None:
    self.layout.operator(XPBD_OT_rope_add.bl_idname, icon="OUTLINER_OB_CURVE")


CLASSES = (XPBD_OT_reset, XPBD_OT_rope_add, XPBD_OT_chain_links)


def register() -> None:
    for cls in CLASSES:
        bpy.utils.register_class(cls)
    bpy.types.VIEW3D_MT_curve_add.append(menu_curve_add)


def unregister() -> None:
    bpy.types.VIEW3D_MT_curve_add.remove(menu_curve_add)
    for cls in reversed(CLASSES):
        bpy.utils.unregister_class(cls)
