"""Export of Bake to Bones results as glTF and FBX, with the settings that import right (in
Blender, in engines that read FBX with ufbx such as Godot, and in the Khronos glTF validator).

What is written: for every rope baked to bones, its armature and its skin (for ropes baked
into a character's armature: that armature and every mesh it deforms, so the file holds one
skeleton); nothing else: not the hidden rope objects (their rest shape), no custom properties
or attributes (the add-on's stored rest shape stays out).

Settings, and why:

- glTF: ``export_animation_mode='ACTIVE_ACTIONS'`` (one animation playing every exported
  rig's Action: Blender's importer assigns it to every rig, where one animation per Action
  left all but one rig without), skins on, modifiers not applied (the Armature modifier is
  the skinning), no extras (custom properties) and no custom attributes, every frame
  sampled (``export_force_sampling``) and kept (the default key reduction moved joints of a
  48-point rope by up to 1.0 mm; without it 2e-6 m), keys at Blender's times (frame f at
  f / fps seconds).
- FBX: no leaf bones (a rope's chain ends in a bone; leaves double the bone count), curve
  simplification 0 (Blender's default 1.0 moved joints by millimetres), one take playing
  every exported rig (the exporter's scene take; ``_one_take``): one take per rope made
  ufbx and Blender's importer play a rope with another rope's take. Bones with Y along
  them, as Blender's importer assumes by default. Start and end keyed.
"""

from __future__ import annotations

from typing import Any

from ..read.geometry import RopeError

FBX_SETTINGS: dict[str, Any] = {
    "use_selection": True,
    "object_types": {"ARMATURE", "MESH"},
    "use_custom_props": False,
    "add_leaf_bones": False,
    "bake_anim": True,
    "bake_anim_use_all_bones": True,
    "bake_anim_use_nla_strips": False,
    "bake_anim_use_all_actions": False,
    "bake_anim_force_startend_keying": True,
    "bake_anim_step": 1.0,
    "bake_anim_simplify_factor": 0.0,
    "use_armature_deform_only": False,
    "apply_unit_scale": True,
    "use_mesh_modifiers": False,
    # Blender's bone axes (Y along the bone; its importer's defaults), so bones point along
    # the rope after Blender's importer at its defaults (with X along the bone they pointed
    # 90 degrees sideways). Its precision: ``bake_bones.BONE_TILT``.
    "primary_bone_axis": "Y",
    "secondary_bone_axis": "X",
}
"""``bpy.ops.export_scene.fbx`` arguments of ``xpbd.export_fbx`` (docs/bake.md)."""

GLTF_SETTINGS: dict[str, Any] = {
    "use_selection": True,
    "export_animations": True,
    "export_animation_mode": "ACTIVE_ACTIONS",
    "export_skins": True,
    "export_apply": False,
    "export_extras": False,
    "export_attributes": False,
    "export_force_sampling": True,
    "export_optimize_animation_size": False,
    "export_frame_range": False,
    "export_def_bones": False,
}
"""``bpy.ops.export_scene.gltf`` arguments of ``xpbd.export_gltf`` (docs/bake.md)."""


def export_set(ropes: list) -> list:
    """The objects an export of ``ropes`` writes: every bones bake's armature and skin, and
    for a character's armature the meshes it deforms. RopeError if none is baked to bones."""
    out: dict[int, Any] = {}
    for obj in ropes:
        settings = obj.xpbd.bake
        if not (settings.baked and settings.kind == "BONES" and settings.rig is not None):
            continue
        rig = settings.rig
        out[rig.session_uid] = rig
        if settings.skin is not None:
            out[settings.skin.session_uid] = settings.skin
        if not settings.rig_owned:
            for child in rig.children_recursive:
                if child.type == "MESH" and any(m.type == "ARMATURE" and m.object == rig
                                                for m in child.modifiers):
                    out[child.session_uid] = child
    if not out:
        names = ", ".join(f"'{o.name}'" for o in ropes) or "no rope"
        raise RopeError(f"Nothing to export: {names} is not baked to bones (Bake to Bones "
                        "first)")
    return list(out.values())


class _one_take:  # noqa: N801 - a context manager used like a function
    """While exporting FBX: the one take (the exporter's scene take, ``FBX_SETTINGS``) made to
    play every exported armature's Action with frame f at time (f - 1) / fps, as Blender's
    FBX importer reads it back at its defaults (``anim_offset`` 1: time 0 is frame 1; the
    scene take writes frame f at f / fps). Each Action goes into an NLA strip of its own one
    frame early (no active Action), the scene's range becomes the strips' span; all put back
    as it was afterwards."""

    def __init__(self, scene: Any, armatures: list) -> None:
        self.scene = scene
        self.armatures = armatures
        self.saved_range = (scene.frame_start, scene.frame_end)
        self.saved: list[tuple[Any, Any, Any, Any]] = []

    def __enter__(self) -> None:
        from . import action_compat

        spans = []
        for arm in self.armatures:
            anim = arm.animation_data
            action = anim.action if anim is not None else None
            if action is None:
                continue
            slot = anim.action_slot if action_compat.has_slots(action) else None
            start, end = (int(round(f)) for f in action.frame_range)
            track = anim.nla_tracks.new()
            track.name = "XPBD export"
            strip = track.strips.new(action.name, start - 1, action)
            if slot is not None:
                strip.action_slot = slot
            anim.action = None
            self.saved.append((arm, action, slot, track))
            spans.append((start - 1, end - 1))
        if spans:
            # the end first: a start past the old end would push the end along
            self.scene.frame_end = max(end for _, end in spans)
            self.scene.frame_start = min(start for start, _ in spans)

    def __exit__(self, *exc: object) -> None:
        for arm, action, slot, track in reversed(self.saved):
            anim = arm.animation_data
            anim.nla_tracks.remove(track)
            anim.action = action
            if slot is not None:
                anim.action_slot = slot
        # end, start, end: whichever order the old range needs, a start past the current
        # end (or an end before the current start) pushes the other along
        self.scene.frame_end = self.saved_range[1]
        self.scene.frame_start = self.saved_range[0]
        self.scene.frame_end = self.saved_range[1]


def _enable(module: str) -> None:
    import addon_utils

    addon_utils.enable(module, default_set=False)


def export(context: Any, ropes: list, filepath: str, kind: str) -> list:
    """Export the bones bakes of ``ropes`` to ``filepath`` (``kind`` 'GLTF': .glb/.gltf,
    'FBX': .fbx) with the settings above; the selection and active object are restored.
    Returns the exported objects."""
    import bpy

    objects = export_set(ropes)
    view_layer = context.view_layer
    hidden = [o.name for o in objects if not o.visible_get(view_layer=view_layer)]
    if hidden:
        raise RopeError(f"Cannot export hidden objects: {', '.join(hidden)} (show them "
                        "first)")
    active = view_layer.objects.active
    selected = [o for o in view_layer.objects if o.select_get()]
    for o in selected:
        o.select_set(False)
    for o in objects:
        o.select_set(True)
    view_layer.objects.active = objects[0]
    try:
        if kind == "GLTF":
            _enable("io_scene_gltf2")
            fmt = "GLB" if filepath.lower().endswith(".glb") else "GLTF_SEPARATE"
            bpy.ops.export_scene.gltf(filepath=filepath, export_format=fmt, **GLTF_SETTINGS)
        else:
            _enable("io_scene_fbx")
            with _one_take(context.scene, [o for o in objects if o.type == "ARMATURE"]):
                bpy.ops.export_scene.fbx(filepath=filepath, **FBX_SETTINGS)
    finally:
        for o in objects:
            o.select_set(False)
        for o in selected:
            o.select_set(True)
        view_layer.objects.active = active
    return objects
