"""The "XPBD Rope" panel in Properties > Physics, laid out like Blender's physics panels:
an enable toggle in the header, the solver settings, then Stiffness, Collision, Pins and
Cache sub-panels."""

from __future__ import annotations

from typing import Any

import bpy

from . import attachment_ui, dependencies, preparation
from .blender import schema

# blender.sim (numpy) is imported inside draw(), which runs only when a panel is shown:
# registering the add-on must not load numpy (Blender 4.2 does not at start).


def prop(layout: Any, settings: Any, name: str, **options: Any) -> None:
    """Draw the setting ``name`` of ``settings`` with its panel text in the schema (if it has
    one; else Blender shows its label)."""
    text = schema.BY_NAME[name].panel
    layout.prop(settings, name, **({"text": text} if text else {}), **options)


class _PhysicsPanel:
    bl_space_type = "PROPERTIES"
    bl_region_type = "WINDOW"
    bl_context = "physics"

    @classmethod
    def poll(cls, context: Any) -> bool:
        obj = context.object
        # An object that cannot be a rope still shows the panel if it was enabled by script,
        # so its error message is visible.
        return obj is not None and (obj.type in {"MESH", "CURVE"} or obj.xpbd.enabled)

    greyed_when_baked = True
    """A baked rope plays its animation: its settings are shown greyed out and cannot be
    edited (as Blender's own physics do with a baked cache) until Free Bake."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # Wraps every panel's draw once, here, so that panels added later are greyed too.
        super().__init_subclass__(**kwargs)
        draw = cls.__dict__.get("draw")
        if draw is None or not cls.greyed_when_baked:
            return

        def greyed_draw(self: Any, context: Any) -> None:
            obj = context.object
            if obj is not None and obj.xpbd.bake.baked:
                self.layout.enabled = False
            draw(self, context)

        greyed_draw.__doc__ = draw.__doc__
        cls.draw = greyed_draw  # type: ignore[attr-defined]


def _notes(layout: Any, obj: Any, notes_of: Any) -> None:
    """A line per note ``notes_of`` the rope's simulation (``sim.RopeSim``) has, if any."""
    from .blender.frame import sim

    rope = sim.REGISTRY.get(obj.session_uid)
    for note in notes_of(rope) if rope is not None else ():
        layout.label(text=note, icon="INFO")


def rope_message(obj: Any) -> tuple[str, str] | None:
    """The line at the top of the rope's panel, with its icon: why it cannot be simulated
    (ERROR), or that the solver is being prepared (TIME, the first use after installing),
    or None."""
    from .blender.frame import sim

    settings = obj.xpbd
    problem = dependencies.numba_problem() or (sim.status(obj) if settings.enabled else None)
    if problem:
        return problem, "ERROR"
    preparing = preparation.status_text() if settings.enabled else None
    return (preparing, "TIME") if preparing else None


class XPBD_PT_rope(_PhysicsPanel, bpy.types.Panel):  # type: ignore[misc]
    bl_label = "XPBD Rope"

    def draw_header(self, context: Any) -> None:
        layout: Any = self.layout
        layout.prop(context.object.xpbd, "enabled", text="")

    def draw(self, context: Any) -> None:
        layout: Any = self.layout
        layout.use_property_split = True

        obj = context.object
        settings = obj.xpbd
        message = rope_message(obj)
        if message:
            layout.box().label(text=message[0], icon=message[1])
        layout.active = settings.enabled
        col = layout.column()
        prop(col, settings, "substeps")
        prop(col, settings, "solver")
        row = col.row()
        row.active = settings.solver == "DIRECT"
        prop(row, settings, "integrator")
        prop(col, settings, "iterations")
        prop(col, settings, "damping")
        prop(col, settings, "length_scale")
        prop(col, settings, "tear_force")
        scene = context.scene
        gravity = "off" if not scene.use_gravity else (
            "({:.2f}, {:.2f}, {:.2f}) m/s\u00b2".format(*scene.gravity))
        col.label(text=f"Gravity (Scene): {gravity}")
        if obj.type == "CURVE":
            col.operator("xpbd.chain_links", icon="LINKED")


class XPBD_PT_rope_stiffness(_PhysicsPanel, bpy.types.Panel):  # type: ignore[misc]
    """Mass and stiffness: per point (XPBD's alpha and mass) or a material per length,
    with the material presets in the header (like Cloth's presets)."""

    bl_label = "Stiffness"
    bl_parent_id = "XPBD_PT_rope"

    def draw_header_preset(self, context: Any) -> None:
        layout: Any = self.layout
        layout.menu("XPBD_MT_material_presets", text="Presets", icon="PRESET")

    def draw(self, context: Any) -> None:
        layout: Any = self.layout
        layout.use_property_split = True
        settings = context.object.xpbd
        layout.active = settings.enabled
        prop(layout.row(), settings, "stiffness_mode", expand=True)
        col = layout.column()
        if settings.stiffness_mode == "MATERIAL":
            prop(col, settings, "linear_density")
            prop(col, settings, "inextensible")
            sub = col.column()
            sub.active = not settings.inextensible
            prop(sub, settings, "stretch_stiffness")
            prop(col, settings, "use_bend_stiffness")
            sub = col.column()
            sub.active = settings.use_bend_stiffness
            prop(sub, settings, "bend_stiffness")
            bending = settings.use_bend_stiffness
        else:
            prop(col, settings, "compliance")
            prop(col, settings, "vertex_mass")
            prop(col, settings, "use_bending")
            sub = col.column()
            sub.active = settings.use_bending
            prop(sub, settings, "bending_compliance")
            bending = settings.use_bending
        if bending and settings.solver != "DIRECT":
            layout.label(text="Bending needs the Direct solver", icon="INFO")


class XPBD_PT_rope_shape(_PhysicsPanel, bpy.types.Panel):  # type: ignore[misc]
    """A rope as a rod: its modelled shape as the rest shape, twist, plasticity."""

    bl_label = "Shape & Twist"
    bl_parent_id = "XPBD_PT_rope_stiffness"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context: Any) -> None:
        layout: Any = self.layout
        layout.use_property_split = True
        settings = context.object.xpbd
        layout.active = settings.enabled
        col = layout.column()
        prop(col, settings, "bend_rest")
        prop(col, settings, "use_twist")
        sub = col.column()
        sub.active = settings.use_twist
        prop(sub, settings, "twist_stiffness")
        prop(col, settings, "use_plasticity")
        sub = col.column()
        sub.active = settings.use_plasticity
        prop(sub, settings, "plastic_yield")
        prop(sub, settings, "plastic_creep")


class XPBD_PT_rope_collision(_PhysicsPanel, bpy.types.Panel):  # type: ignore[misc]
    """Rope radius, Collision objects, ground plane, self-collision."""

    bl_label = "Collision"
    bl_parent_id = "XPBD_PT_rope"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context: Any) -> None:
        layout: Any = self.layout
        layout.use_property_split = True
        obj = context.object
        settings = obj.xpbd
        layout.active = settings.enabled
        col = layout.column()
        prop(col, settings, "radius")
        prop(col, settings, "use_collision")
        prop(col, settings, "use_ground")
        sub = col.column(align=True)
        sub.active = settings.use_ground
        prop(sub, settings, "ground_height")
        prop(sub, settings, "ground_friction")
        prop(col, settings, "use_self_collision")
        sub = col.column()
        sub.active = settings.use_self_collision
        prop(sub, settings, "self_friction")
        prop(col, settings, "sleep_speed")
        if settings.radius == 0.0 and (settings.use_self_collision or settings.use_ground
                                       or settings.use_collision):
            layout.label(text="Radius 0: points touch colliders, no self-collision",
                         icon="INFO")
        _notes(layout, obj, lambda rope: rope.collider_problems)


class XPBD_PT_rope_fields(_PhysicsPanel, bpy.types.Panel):  # type: ignore[misc]
    """Which force fields act and how much, and the air's drag (docs/blender-usage.md)."""

    bl_label = "Fields & Air"
    bl_parent_id = "XPBD_PT_rope"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context: Any) -> None:
        layout: Any = self.layout
        layout.use_property_split = True
        obj = context.object
        settings = obj.xpbd
        layout.active = settings.enabled
        col = layout.column()
        prop(col, settings, "effector_collection")
        prop(col, settings, "field_weight")
        prop(col, settings, "use_air")
        sub = col.column(align=True)
        sub.active = settings.use_air
        prop(sub, settings, "air_density")
        prop(sub, settings, "drag_normal")
        prop(sub, settings, "drag_tangential")
        if settings.use_air and settings.radius == 0.0:
            layout.label(text="Radius 0: the air has nothing to drag (Collision > Radius)",
                         icon="INFO")
        if not settings.use_air:
            layout.label(text="Wind fields act through the air: turn Air on", icon="INFO")
        _notes(layout, obj, lambda rope: rope.track.field_notes)


class XPBD_PT_rope_maps(_PhysicsPanel, bpy.types.Panel):  # type: ignore[misc]
    """Per-point maps: a vertex group (meshes) or the points' Weight / Radius (curves) that
    scales mass, stiffness, radius or damping point by point, or holds points by springs
    (Pin)."""

    bl_label = "Maps"
    bl_parent_id = "XPBD_PT_rope"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context: Any) -> None:
        layout: Any = self.layout
        layout.use_property_split = True
        obj = context.object
        settings = obj.xpbd
        layout.active = settings.enabled
        for name, factor in (("mass_map", "mass_map_max"),
                             ("stiffness_map", "stiffness_map_max"),
                             ("radius_map", "radius_map_max"),
                             ("damping_map", "damping_map_max"),
                             ("pin_map", "pin_map_stiffness")):
            col = layout.column(align=True)
            if obj.type == "MESH":
                col.prop_search(settings, name, obj, "vertex_groups",
                                text=schema.panel_text(name))
            else:
                prop(col, settings, name)
            sub = col.column()
            sub.active = bool(getattr(settings, name))
            prop(sub, settings, factor)
        if obj.type == "CURVE":
            layout.label(text="Curves: 'weight' or 'radius' of the points (up to 1)",
                         icon="INFO")
        layout.label(text="Weight w scales the setting by 1 + w (Max - 1)", icon="INFO")


class XPBD_PT_rope_pins(_PhysicsPanel, bpy.types.Panel):  # type: ignore[misc]
    bl_label = "Pins"
    bl_parent_id = "XPBD_PT_rope"

    def draw(self, context: Any) -> None:
        layout: Any = self.layout
        layout.use_property_split = True
        obj = context.object
        settings = obj.xpbd
        layout.active = settings.enabled
        if obj.type == "MESH":
            layout.prop_search(settings, "pin_group", obj, "vertex_groups",
                              text=schema.panel_text("pin_group"))
        else:
            col = layout.column(heading="Pin")
            prop(col, settings, "pin_first")
            prop(col, settings, "pin_last")
            if obj.type == "CURVE":
                layout.label(text="Points moved by Hook modifiers are pinned too", icon="INFO")
        attachment_ui.draw(layout, obj)


class XPBD_PT_rope_cache(_PhysicsPanel, bpy.types.Panel):  # type: ignore[misc]
    bl_label = "Cache"
    bl_parent_id = "XPBD_PT_rope"

    def draw(self, context: Any) -> None:
        layout: Any = self.layout
        layout.use_property_split = True
        obj = context.object
        settings = obj.xpbd
        layout.active = settings.enabled
        col = layout.column(align=True)
        prop(col, settings, "frame_start")
        prop(col, settings, "frame_end")
        prop(layout, settings, "preroll")
        from .blender.frame import sim

        entry = sim.REGISTRY.get(obj.session_uid)
        cached = len(entry.cache) if entry is not None else 0
        layout.label(text=f"{cached} frames in memory")
        row = layout.row(align=True)
        row.operator("xpbd.reset", text="Reset", icon="FILE_REFRESH")
        row.operator("xpbd.reset", text="Reset All").all_objects = True


CLASSES = (XPBD_PT_rope, XPBD_PT_rope_stiffness, XPBD_PT_rope_shape,
           XPBD_PT_rope_collision,
           XPBD_PT_rope_fields, XPBD_PT_rope_maps, XPBD_PT_rope_pins,
           XPBD_PT_rope_cache)



class XPBD_PT_rope_bake(_PhysicsPanel, bpy.types.Panel):  # type: ignore[misc]
    """Bake the simulation to keyframes / shape keys or to bones; Free Bake (bake_operators)."""

    bl_label = "Bake"
    bl_parent_id = "XPBD_PT_rope"
    greyed_when_baked = False

    def draw(self, context: Any) -> None:
        layout: Any = self.layout
        layout.use_property_split = True
        obj = context.object
        settings = obj.xpbd
        bake = settings.bake
        layout.active = settings.enabled
        if bake.baked:
            kind = {"CURVE_KEYS": "keyframes", "SHAPE_KEYS": "shape keys",
                    "BONES": "bones", "CACHE": "a cache file"}.get(bake.kind, bake.kind)
            layout.label(text=f"Baked to {kind}, frames {bake.baked_first}-{bake.baked_last}",
                         icon="CHECKMARK")
            if bake.loop:
                layout.label(text=f"Loop seam: {100 * bake.loop_seam_position:.2f} % position, "
                                  f"{100 * bake.loop_seam_velocity:.2f} % velocity")
            row = layout.row(align=True)
            row.operator("xpbd.free_bake", text="Free Bake", icon="TRASH")
            row.operator("xpbd.free_bake", text="Free All").all_objects = True
            if bake.kind == "BONES":
                row = layout.row(align=True)
                row.operator("xpbd.export_gltf", text="Export glTF", icon="EXPORT")
                row.operator("xpbd.export_fbx", text="Export FBX", icon="EXPORT")
            return
        col = layout.column(align=True)
        col.prop(bake, "use_scene_range")
        sub = col.column(align=True)
        sub.active = not bake.use_scene_range
        sub.prop(bake, "frame_start", text="Bake Start")
        sub.prop(bake, "frame_end", text="End")
        row = layout.row(heading="Loop")
        row.prop(bake, "loop", text="")
        sub = row.row()
        sub.active = bake.loop
        sub.prop(bake, "loop_frames", text="Frames")
        layout.prop(bake, "target", expand=True)
        if bake.target == "KEYS" and obj.type == "CURVE":
            layout.prop(bake, "curve_format")
        if bake.target == "BONES":
            layout.prop(bake, "bone_segments")
            layout.prop(bake, "bone_armature")
            if bake.bone_armature is not None and bake.bone_armature.type == "ARMATURE":
                layout.prop_search(bake, "bone_parent", bake.bone_armature.data, "bones")
        if bake.target == "CACHE":
            layout.prop(bake, "cache_path")
        row = layout.row(align=True)
        row.operator("xpbd.bake", text="Bake", icon="KEYFRAME")  # the rope's Bake To
        row.operator("xpbd.bake_selected", text="Bake Selected")
        row.operator("xpbd.bake_all", text="Bake All")


CLASSES = CLASSES + (XPBD_PT_rope_bake,)  # type: ignore[assignment]


class XPBD_PT_rope_readouts(_PhysicsPanel, bpy.types.Panel):  # type: ignore[misc]
    """What the settings do on the frame shown: length, stretch, tension, energy, what the
    frame cost, whether it came from the cache (``blender.frame.readouts``)."""

    bl_label = "Readouts"
    bl_parent_id = "XPBD_PT_rope"
    bl_options = {"DEFAULT_CLOSED"}
    greyed_when_baked = False

    def draw(self, context: Any) -> None:
        from .blender.frame import readouts, sim

        obj = context.object
        rope = sim.REGISTRY.get(obj.session_uid)
        shown = readouts.readout(obj, rope) if rope is not None else None
        layout: Any = self.layout
        col = layout.column(align=True)
        if shown is None:
            col.label(text="Baked: readouts are of the live simulation" if obj.xpbd.bake.baked
                      else "Play, or change the frame, to see the rope's numbers")
            return
        for line in readouts.lines(shown):
            col.label(text=line)


CLASSES = CLASSES + (XPBD_PT_rope_readouts,)  # type: ignore[assignment]


def register() -> None:
    for cls in CLASSES:
        bpy.utils.register_class(cls)


def unregister() -> None:
    for cls in reversed(CLASSES):
        bpy.utils.unregister_class(cls)
