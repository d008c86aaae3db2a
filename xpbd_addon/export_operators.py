"""Export operators of Bake to Bones results: ``xpbd.export_gltf`` and ``xpbd.export_fbx``
(settings and what is written: ``blender.export``).

Which ropes: those whose rope object, armature or skin is selected or active (a baked rope is
hidden, so its rig or skin is what a user selects), or with ``all_objects`` every rope of the
scene baked to bones.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import bpy
from bpy.props import BoolProperty, StringProperty

from .blender.errors import RopeError


def _ropes(context: Any, all_objects: bool) -> list:
    baked = [o for o in context.scene.objects
             if o.xpbd.bake.baked and o.xpbd.bake.kind == "BONES"]
    if all_objects:
        return baked
    picked = {o.session_uid for o in context.selected_objects}
    if context.active_object is not None:
        picked.add(context.active_object.session_uid)
    out = []
    for o in baked:
        # a rope counts if it, its rig or its skin is picked (a rig shared with a
        # character counts for every rope baked into it)
        own = {x.session_uid for x in (o, o.xpbd.bake.rig, o.xpbd.bake.skin) if x is not None}
        if own & picked:
            out.append(o)
    return out


class _Export:
    """The export operators' shared body (a mixin)."""

    bl_options = {"REGISTER"}
    kind = "GLTF"
    filename_ext = ".glb"
    extensions: tuple[str, ...] = (".glb", ".gltf")

    if TYPE_CHECKING:
        filepath: str
        all_objects: bool

        def report(self, type: set[str], message: str) -> None: ...
    else:
        filepath: StringProperty(subtype="FILE_PATH", default="",
                                 description="File to write")
        all_objects: BoolProperty(
            name="All Ropes", default=False,
            description="Export every rope of the scene baked to bones; off: the ropes whose "
                        "armature, skin or rope object is selected")

    def execute(self, context: Any) -> Any:
        from .blender.bake import export

        ropes = _ropes(context, self.all_objects)
        if not ropes:
            self.report({"ERROR"}, "No rope baked to bones is selected: select a baked "
                                   "rope's armature or skin, or use All Ropes")
            return {"CANCELLED"}
        if not self.filepath:
            self.report({"ERROR"}, "No file path given (filepath)")
            return {"CANCELLED"}
        path = bpy.path.abspath(self.filepath)
        if not path.lower().endswith(self.extensions):
            path += self.filename_ext
        try:
            written = export.export(context, ropes, path, self.kind)
        except RopeError as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        self.report({"INFO"}, f"Exported {len(ropes)} rope(s), {len(written)} objects, to "
                              f"{path}")
        return {"FINISHED"}

    def invoke(self, context: Any, event: Any) -> Any:
        if not self.filepath:
            blend = bpy.data.filepath
            stem = bpy.path.display_name_from_filepath(blend) if blend else "ropes"
            self.filepath = stem + self.filename_ext
        context.window_manager.fileselect_add(self)
        return {"RUNNING_MODAL"}


class XPBD_OT_export_gltf(_Export, bpy.types.Operator):  # type: ignore[misc]
    """Export the selected ropes' Bake to Bones result as glTF (skinned, animated), with
    settings that import right in engines"""

    bl_idname = "xpbd.export_gltf"
    bl_label = "Export Rope Rig (glTF)"
    kind = "GLTF"
    filename_ext = ".glb"
    extensions = (".glb", ".gltf")


class XPBD_OT_export_fbx(_Export, bpy.types.Operator):  # type: ignore[misc]
    """Export the selected ropes' Bake to Bones result as FBX (skinned, animated), with
    settings that import right in engines"""

    bl_idname = "xpbd.export_fbx"
    bl_label = "Export Rope Rig (FBX)"
    kind = "FBX"
    filename_ext = ".fbx"
    extensions = (".fbx",)


CLASSES = (XPBD_OT_export_gltf, XPBD_OT_export_fbx)


def register() -> None:
    for cls in CLASSES:
        bpy.utils.register_class(cls)


def unregister() -> None:
    for cls in reversed(CLASSES):
        bpy.utils.unregister_class(cls)
