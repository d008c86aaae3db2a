"""Record what the Blender side plays and bakes, to compare two versions of the code bit for bit.

    .venv/bin/python tools/frames_ab.py record OUT.npz [--tree PATH]
    .venv/bin/python tools/frames_ab.py compare A.npz B.npz

``record`` runs real Blender (the bpy module) headless with the add-on imported from
``--tree`` (default: this checkout) and stores, for a few scenes, the points every rope shows
at every frame: played forward, reached by jumps in a fixed shuffled order, and baked (keys
and shape keys read back at each frame). ``compare`` says whether two recordings are the same
bits, and where they first differ. It is how a restructuring of the frame logic shows that it
changed nothing a user sees (run ``record`` on the old commit's checkout and on the new one).

The scenes: a mesh rope pinned to an animated empty, dropping on a moving box and the ground;
two curve ropes (poly and Bezier) that collide with each other over a sphere (simulated as
one group); a rope whose pin moves while it swings (no colliders).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np


def _scenes(bpy, ropes):  # noqa: ANN001 - bpy and the test builders, imported late
    """Build every scene's objects in the current (empty) scene; returns the rope objects."""
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, 40
    # 1. mesh rope on an animated empty, a moving box and the ground
    empty = bpy.data.objects.new("hand", None)
    scene.collection.objects.link(empty)
    empty.location = (0.0, 0.0, 2.0)
    empty.keyframe_insert("location", frame=1)
    empty.location = (0.6, 0.2, 2.3)
    empty.keyframe_insert("location", frame=30)
    mesh = ropes.mesh_rope(scene, n=24, length=1.5, name="mesh_rope")
    mesh.parent = empty
    mesh.xpbd.radius = 0.02
    mesh.xpbd.use_ground = True
    mesh.xpbd.ground_height = 0.4
    bpy.ops.mesh.primitive_cube_add(size=0.5, location=(0.8, 0.0, 1.1))
    box = bpy.context.object
    box.name = "box"
    box.keyframe_insert("location", frame=1)
    box.location = (0.3, 0.1, 1.3)
    box.keyframe_insert("location", frame=40)
    # 2. two curve ropes colliding with each other over a sphere
    bpy.ops.mesh.primitive_uv_sphere_add(radius=0.4, location=(0.9, 0.0, -1.0))
    bpy.context.object.name = "sphere"
    a = ropes.curve_rope(scene, "POLY", n=20, length=1.9, name="rope_a")
    b = ropes.curve_rope(scene, "BEZIER", n=16, length=1.9, name="rope_b")
    a.location = (0.0, 0.0, -0.4)
    b.location = (0.05, 0.3, -0.3)
    b.rotation_euler = (0.0, 0.0, -0.35)
    for obj in (a, b):
        obj.xpbd.radius = 0.03
        obj.xpbd.use_self_collision = True
    # 3. a swinging rope whose pin moves, no colliders
    free = ropes.curve_rope(scene, "NURBS", n=14, length=1.2, name="swing")
    free.location = (-2.0, 0.0, 1.0)
    free.keyframe_insert("location", frame=1)
    free.location = (-2.0, 0.5, 1.2)
    free.keyframe_insert("location", frame=20)
    free.xpbd.use_collision = False
    return [mesh, a, b, free]


def record(out: Path, tree: Path) -> None:
    sys.path.insert(0, str(tree))
    sys.path.insert(1, str(Path(__file__).resolve().parents[1]))
    import bpy

    import xpbd_addon
    from tests.blender import ropes  # the test scenes' builders

    xpbd_addon.register()
    bpy.ops.wm.read_homefile(use_empty=True, use_factory_startup=True)
    scene = bpy.context.scene
    scene.frame_set(1)
    objects = _scenes(bpy, ropes)
    recorded: dict[str, np.ndarray] = {}

    def grab(tag: str) -> None:
        depsgraph = bpy.context.evaluated_depsgraph_get()
        for obj in objects:
            points = ropes.world_points(obj)
            if obj.type == "MESH" and obj.data.shape_keys is not None:
                # a shape-key bake plays in the evaluated mesh, not in the data
                evaluated = obj.evaluated_get(depsgraph).data
                local = np.empty(3 * len(evaluated.vertices), dtype=np.float32)
                evaluated.vertices.foreach_get("co", local)
                matrix = np.array(obj.matrix_world)
                points = local.reshape(-1, 3).astype(np.float64) @ matrix[:3, :3].T
                points += matrix[:3, 3]
            recorded[f"{tag}/{obj.name}"] = points.copy()

    for frame in range(1, 41):
        scene.frame_set(frame)
        grab(f"play/{frame:03d}")
    order = np.random.default_rng(7).permutation(np.arange(1, 41))
    # the registry of simulations: blender/frame/sim.py, or blender/frame/sim.py in older trees
    import importlib

    for name in ("xpbd_addon.blender.frame.sim", "xpbd_addon.blender.sim"):
        try:
            importlib.import_module(name).clear()
            break
        except ModuleNotFoundError:
            continue
    for frame in order:
        scene.frame_set(int(frame))
        grab(f"jump/{int(frame):03d}")
    for obj in objects:
        bpy.ops.object.select_all(action="DESELECT")
        obj.select_set(True)
        bpy.context.view_layer.objects.active = obj
        if not obj.xpbd.bake.baked:
            result = bpy.ops.xpbd.bake()
            assert result == {"FINISHED"}, (obj.name, result)
    for frame in range(1, 41):
        scene.frame_set(frame)
        grab(f"bake/{frame:03d}")
    np.savez_compressed(out, **recorded)
    print(f"recorded {len(recorded)} arrays into {out}")


def compare(a: Path, b: Path) -> int:
    first, second = np.load(a), np.load(b)
    if sorted(first.files) != sorted(second.files):
        print("different sets of recordings")
        return 1
    differ = [k for k in sorted(first.files) if not np.array_equal(first[k], second[k])]
    if not differ:
        print(f"same bits: {len(first.files)} recordings")
        return 0
    worst = max(float(np.abs(first[k] - second[k]).max()) for k in differ)
    print(f"{len(differ)} of {len(first.files)} recordings differ (first: {differ[0]}; "
          f"largest difference {worst:.3g} m)")
    return 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record")
    rec.add_argument("out", type=Path)
    rec.add_argument("--tree", type=Path, default=Path(__file__).resolve().parents[1])
    cmp_ = sub.add_parser("compare")
    cmp_.add_argument("a", type=Path)
    cmp_.add_argument("b", type=Path)
    args = parser.parse_args()
    if args.command == "record":
        record(args.out, args.tree.resolve())
        return 0
    return compare(args.a, args.b)


if __name__ == "__main__":
    sys.exit(main())
