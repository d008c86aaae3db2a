"""register()/unregister() repeatedly in one process leave no handler, class or property."""

from __future__ import annotations

import bpy

import xpbd_addon
from xpbd_addon import bake_operators, handlers, operators, panels, properties

from . import ropes

CLASSES = properties.CLASSES + operators.CLASSES + panels.CLASSES


def _ours(handler_list):
    return [f for f in handler_list if getattr(f, "__module__", "").startswith("xpbd_addon")]


def _menu_funcs():
    draw = bpy.types.VIEW3D_MT_curve_add.draw
    return list(getattr(draw, "_draw_funcs", []))


def _assert_clean():
    assert not hasattr(bpy.types.Object, "xpbd")
    assert not _ours(bpy.app.handlers.frame_change_post)
    assert not _ours(bpy.app.handlers.load_pre)
    assert not _ours(bpy.app.handlers.load_post)
    for cls in CLASSES:
        assert not cls.is_registered, cls.__name__
    assert operators.menu_curve_add not in _menu_funcs()


def _assert_registered():
    assert hasattr(bpy.types.Object, "xpbd")
    assert _ours(bpy.app.handlers.frame_change_post) == [handlers.on_frame_change_post]
    assert _ours(bpy.app.handlers.load_pre) == [handlers.on_load_pre]
    assert _ours(bpy.app.handlers.load_post) == [handlers.on_load_post]
    for cls in CLASSES:
        assert cls.is_registered, cls.__name__
    assert _menu_funcs().count(operators.menu_curve_add) == 1


def test_register_unregister_five_times(scene):
    _assert_registered()
    xpbd_addon.unregister()
    try:
        _assert_clean()
        for _ in range(5):
            xpbd_addon.register()
            _assert_registered()
            xpbd_addon.unregister()
            _assert_clean()
    finally:
        xpbd_addon.register()
    _assert_registered()
    # Still works afterwards.
    bpy.ops.wm.read_homefile(use_empty=True, use_factory_startup=True)
    scene = bpy.context.scene
    obj = ropes.curve_rope(scene, "POLY")
    ropes.play(scene, 1, 5)
    assert ropes.world_points(obj)[-1, 2] < -0.05


def test_rope_add_operator(scene):
    scene.cursor.location = (1.0, 2.0, 3.0)
    assert bpy.ops.xpbd.rope_add(points=7, length=1.5) == {"FINISHED"}
    obj = bpy.context.active_object
    assert obj.type == "CURVE" and obj.xpbd.enabled and obj.xpbd.pin_first
    spline = obj.data.splines[0]
    assert spline.type == "POLY" and len(spline.points) == 7
    assert tuple(obj.location) == (1.0, 2.0, 3.0)
    assert ropes.length(ropes.world_points(obj)) == 1.5
    ropes.play(scene, 1, 12)
    world = ropes.world_points(obj)
    assert tuple(world[0]) == (1.0, 2.0, 3.0)
    assert world[-1, 2] < 2.5


def test_disabling_restores_the_rest_shape(scene):
    obj = ropes.mesh_rope(scene)
    rest = ropes.local_points(obj).copy()
    ropes.play(scene, 1, 10)
    obj.xpbd.enabled = False
    assert (ropes.local_points(obj) == rest).all()
    assert "xpbd_rest" not in obj.data.attributes
    scene.frame_set(11)
    assert (ropes.local_points(obj) == rest).all()


def test_panel_shows_for_ropes_and_for_broken_enabled_objects(scene):
    from xpbd_addon.panels import XPBD_PT_rope

    mesh = ropes.mesh_rope(scene)
    bpy.context.view_layer.objects.active = mesh
    assert XPBD_PT_rope.poll(bpy.context)
    assert XPBD_PT_rope.bl_context == "physics"
    empty = bpy.data.objects.new("empty", None)
    scene.collection.objects.link(empty)
    bpy.context.view_layer.objects.active = empty
    assert not XPBD_PT_rope.poll(bpy.context)
    empty.xpbd.enabled = True  # enabled by a script: the panel must show its error
    assert XPBD_PT_rope.poll(bpy.context)


def test_tooltips_are_one_clean_line(addon):
    """Blender shows an operator's description as its tooltip, as written: a docstring's
    line break and indentation would show ("plays\n    without")."""
    for cls in operators.CLASSES + bake_operators.CLASSES:
        module, name = cls.bl_idname.split(".")
        description = getattr(getattr(bpy.ops, module), name).get_rna_type().description
        assert description, cls.__name__
        assert "\n" not in description and "  " not in description, (cls.__name__, description)
