"""The demo, in real Blender, headless: ropes doing what ropes do, and what compliance means.

Left: a rope pinned at one end, released horizontally, swings down onto a bar and wraps its
tail around it; a free rope dropped across a second, thin bar (2 cm, a third of its
segment) drapes over it. Several frames of each are overlaid, fading from the release to
the end. Right: a twelve-point rope (1.98 m, top pinned, 1 kg per point) at three
compliances side by side: the stiff one ends on its rest length, the soft ones sag below it
by alpha * m * g * sum(k). Saves a .blend, renders a PNG (Workbench) and prints each
compliance rope's length and stretch.

    python -m demo [--out out] [--frames 150]        (python3 build.py demo)
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
POINTS = 12
LENGTH = 1.98
"""Rest length of the compliance ropes [m] (11 links of 0.18 m)."""
MASS = 1.0
"""Mass of each point of the compliance ropes [kg] (inverse mass w = 1)."""
ALPHAS = (1e-6, 3.5e-4, 1e-3)
"""Compliances [m/N]: stiff, medium, soft."""
OFFSET = 3.0
"""x of the middle compliance rope's pin [m]: the bar scene is left of x = 0."""
GHOSTS = (1, 8, 13, 18, 24, 34)
"""Frames overlaid (fading) besides the last one, in the bar scene."""
BAR_RADIUS = 0.1
"""Radius of the bar the pinned rope swings onto [m]."""
THIN_BAR_RADIUS = 0.01
"""Radius of the bar the free rope is dropped across [m]: far thinner than the rope's
segments (6 cm), which hold it between their points."""
SPACING = 2.6
"""Distance between the ropes' pins along x [m]."""
COLORS = ((0.10, 0.45, 0.85, 1.0), (0.95, 0.55, 0.10, 1.0), (0.85, 0.15, 0.20, 1.0))


def _material_color(obj, rgba):
    obj.color = rgba


def build_scene(bpy, frames: int):
    """The three ropes, their pins, the rest-length line, labels, camera and Workbench."""
    bpy.ops.wm.read_homefile(use_empty=True, use_factory_startup=True)
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, frames
    ropes = []
    for i, alpha in enumerate(ALPHAS):
        x0 = OFFSET + (i - 1) * SPACING
        curve = bpy.data.curves.new(f"rope_{alpha:g}", "CURVE")
        curve.dimensions = "3D"
        curve.bevel_depth = 0.025
        curve.bevel_resolution = 2
        spline = curve.splines.new("POLY")
        spline.points.add(POINTS - 1)
        co = np.zeros((POINTS, 4), dtype=np.float32)
        co[:, 0] = np.linspace(0.0, LENGTH, POINTS)  # horizontal: it swings down
        co[:, 3] = 1.0
        spline.points.foreach_set("co", co.ravel())
        obj = bpy.data.objects.new(curve.name, curve)
        obj.location = (x0, 0.0, 0.0)
        scene.collection.objects.link(obj)
        _material_color(obj, COLORS[i])
        settings = obj.xpbd
        settings.compliance = alpha
        settings.substeps = 20
        settings.vertex_mass = MASS
        settings.damping = 1.5  # settle within the clip; the resting shape is damping-free
        settings.pin_first = True
        settings.frame_end = frames
        settings.enabled = True
        ropes.append(obj)
        _pin_ball(bpy, scene, (x0, 0.0, 0.0))
        _label(bpy, scene, f"alpha = {alpha:g} m/N", (x0 - 0.9, 0.0, 0.3), COLORS[i])
    _rest_line(bpy, scene)
    swinging = _bar_scene(bpy, scene, frames)
    _camera(bpy, scene)
    return scene, ropes, swinging


def _rope(bpy, scene, name, start, length, points, rgba, *, pinned, frames):
    """A horizontal rope along +x from ``start`` [m], simulated with collisions."""
    curve = bpy.data.curves.new(name, "CURVE")
    curve.dimensions = "3D"
    curve.bevel_depth = 0.03
    curve.bevel_resolution = 2
    spline = curve.splines.new("POLY")
    spline.points.add(points - 1)
    co = np.zeros((points, 4), dtype=np.float32)
    co[:, 0] = np.linspace(0.0, length, points)
    co[:, 3] = 1.0
    spline.points.foreach_set("co", co.ravel())
    obj = bpy.data.objects.new(name, curve)
    obj.location = start
    obj.color = rgba
    scene.collection.objects.link(obj)
    settings = obj.xpbd
    settings.pin_first = pinned
    settings.radius = 0.03
    settings.substeps = 20
    settings.damping = 0.3
    settings.frame_end = frames
    settings.use_ground = True
    settings.ground_height = -2.2
    settings.use_self_collision = True  # the ends of a draped rope swing into each other
    settings.enabled = True
    return obj


def _bar(bpy, scene, location, radius=BAR_RADIUS):
    """A bar along y (a cylinder of ``radius`` [m] with Collision physics, friction 0.4)."""
    bpy.ops.mesh.primitive_cylinder_add(radius=radius, depth=1.2, vertices=32,
                                        location=location, rotation=(np.pi / 2, 0.0, 0.0))
    obj = bpy.context.active_object
    obj.color = (0.25, 0.25, 0.25, 1.0)
    obj.modifiers.new("Collision", "COLLISION")
    obj.collision.cloth_friction = 40.0  # Blender's 0-80 scale: mu = 0.4
    return obj


def _bar_scene(bpy, scene, frames):
    """A pinned rope swinging onto a bar and a free rope dropped across a thin one."""
    blue, green = (0.10, 0.40, 0.80, 1.0), (0.15, 0.60, 0.30, 1.0)
    _bar(bpy, scene, (-4.9, 0.0, -0.75))
    _bar(bpy, scene, (-1.6, 0.0, -0.75), THIN_BAR_RADIUS)
    swinging = _rope(bpy, scene, "rope_swinging", (-6.3, 0.0, 0.0), 2.6, 40, blue,
                     pinned=True, frames=frames)
    _pin_ball(bpy, scene, (-6.3, 0.0, 0.0))
    dropped = _rope(bpy, scene, "rope_dropped", (-2.8, 0.0, -0.3), 2.4, 40, green,
                    pinned=False, frames=frames)
    _label(bpy, scene, "pinned, released, swings onto a bar", (-6.9, 0.0, 0.45), blue, 0.2)
    _label(bpy, scene, "dropped across a 2 cm bar", (-2.9, 0.0, 0.45), green, 0.2)
    _label(bpy, scene, f"{len(GHOSTS) + 1} frames overlaid, fading from release",
           (-6.9, 0.0, -2.45), (0.3, 0.3, 0.3, 1.0), 0.16)
    return [swinging, dropped]


def _ghost(bpy, scene, obj, fade):
    """A still copy of ``obj``'s current shape, its colour faded towards white by ``fade``."""
    n = len(obj.data.splines[0].points)
    buf = np.empty(4 * n, dtype=np.float32)
    obj.data.splines[0].points.foreach_get("co", buf)
    curve = bpy.data.curves.new(obj.name + "_ghost", "CURVE")
    curve.dimensions = "3D"
    curve.bevel_depth = 0.02
    spline = curve.splines.new("POLY")
    spline.points.add(n - 1)
    spline.points.foreach_set("co", buf)
    ghost = bpy.data.objects.new(curve.name, curve)
    ghost.matrix_world = obj.matrix_world.copy()
    ghost.location.y += 0.05  # behind the rope itself
    ghost.color = tuple(c + (1.0 - c) * fade for c in obj.color[:3]) + (1.0,)
    scene.collection.objects.link(ghost)


def _pin_ball(bpy, scene, location):
    bpy.ops.mesh.primitive_uv_sphere_add(radius=0.07, location=location)
    bpy.context.active_object.color = (0.15, 0.15, 0.15, 1.0)


def _label(bpy, scene, text, location, rgba, size=0.22):
    data = bpy.data.curves.new(text, "FONT")
    data.body = text
    data.size = size
    obj = bpy.data.objects.new(text, data)
    obj.location = location
    obj.rotation_euler = (np.pi / 2, 0.0, 0.0)  # face the camera (looking along +y)
    obj.color = rgba
    scene.collection.objects.link(obj)


def _rest_line(bpy, scene):
    """Dashed line at z = -LENGTH: where the tip of a rope that keeps its length hangs."""
    width = 3 * SPACING
    dash, gap = 0.18, 0.12
    starts = OFFSET + np.arange(-width / 2, width / 2, dash + gap)
    verts, faces = [], []
    for k, s in enumerate(starts):
        z0, z1 = -LENGTH - 0.006, -LENGTH + 0.006
        verts += [(s, -0.1, z0), (s + dash, -0.1, z0), (s + dash, -0.1, z1), (s, -0.1, z1)]
        faces.append(tuple(range(4 * k, 4 * k + 4)))
    mesh = bpy.data.meshes.new("rest_length")
    mesh.from_pydata(verts, [], faces)
    obj = bpy.data.objects.new("rest_length", mesh)
    obj.color = (0.2, 0.2, 0.2, 1.0)
    scene.collection.objects.link(obj)
    _label(bpy, scene, "rest length 1.98 m", (OFFSET - SPACING + 0.45, 0.0, -LENGTH + 0.06),
           (0.2, 0.2, 0.2, 1.0), size=0.16)


def _camera(bpy, scene):
    data = bpy.data.cameras.new("camera")
    data.type = "ORTHO"
    data.ortho_scale = 15.2
    camera = bpy.data.objects.new("camera", data)
    camera.location = (0.15, -10.0, -1.0)
    camera.rotation_euler = (np.pi / 2, 0.0, 0.0)
    scene.collection.objects.link(camera)
    scene.camera = camera
    render = scene.render
    render.engine = "BLENDER_WORKBENCH"
    render.resolution_x, render.resolution_y = 1800, 600
    render.resolution_percentage = 100
    shading = scene.display.shading
    shading.light = "FLAT"
    shading.color_type = "OBJECT"
    scene.world = bpy.data.worlds.new("world")
    scene.world.color = (1.0, 1.0, 1.0)
    scene.view_settings.view_transform = "Standard"  # plain colours, not AgX's pastel


def measure(obj):
    """Length [m] of the rope's polyline and its tip's height [m] below the pin."""
    n = len(obj.data.splines[0].points)
    buf = np.empty(4 * n, dtype=np.float32)
    obj.data.splines[0].points.foreach_get("co", buf)
    co = buf.reshape(n, 4)[:, :3].astype(np.float64)
    length = float(np.linalg.norm(np.diff(co, axis=0), axis=1).sum())
    return length, float(co[0, 2] - co[-1, 2])


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m demo", description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=str(ROOT / "out"), help="output folder")
    parser.add_argument("--frames", type=int, default=150, help="frames to simulate (24 fps)")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    sys.path.insert(0, str(ROOT))
    import bpy

    import xpbd_addon

    xpbd_addon.register()
    scene, ropes, swinging = build_scene(bpy, args.frames)
    start = time.perf_counter()
    ghosts = [f for f in GHOSTS if f < args.frames]
    for frame in range(1, args.frames + 1):
        scene.frame_set(frame)
        if frame in ghosts:
            for obj in swinging:
                _ghost(bpy, scene, obj, 0.35 + 0.5 * (1 - ghosts.index(frame) / len(ghosts)))
    elapsed = time.perf_counter() - start
    print(f"simulated {args.frames} frames of {len(ropes) + len(swinging)} ropes in "
          f"{elapsed:.2f} s (the first frame includes numba's compile or cache load)")
    print(f"{'alpha [m/N]':>12} {'length [m]':>11} {'stretch':>8} {'tip drop [m]':>13} "
          f"{'expected stretch':>17}")
    for i, (obj, alpha) in enumerate(zip(ropes, ALPHAS, strict=True)):
        length, drop = measure(obj)
        _label(bpy, scene, f"{length:.2f} m ({100 * (length / LENGTH - 1):+.1f} %)",
               (OFFSET + (i - 1) * SPACING - 0.75, 0.0, -drop - 0.3), COLORS[i])
        # At rest, link k from the bottom carries k points: stretch = alpha m g sum(k).
        expected = alpha * MASS * 9.81 * sum(range(1, POINTS)) / LENGTH
        print(f"{alpha:>12g} {length:>11.4f} {100 * (length / LENGTH - 1):>7.2f}% "
              f"{drop:>13.4f} {100 * expected:>16.2f}%")
    blend = out / "xpbd_demo.blend"
    png = out / "xpbd_demo.png"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    scene.render.filepath = str(png)
    bpy.ops.render.render(write_still=True)
    print(f"saved {blend}\nrendered {png}")
    xpbd_addon.unregister()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
