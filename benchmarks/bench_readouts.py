"""What the panel's readouts cost, in real Blender (the bpy wheel).

Playback of ``count`` ropes of ``points`` points, released horizontally (1 x 200 and, as one
batch, 100 x 20), 120 frames at 24 fps. Reported, medians over the frames:

    frame      the whole scene.frame_set(f)
    kept       what every frame pays, panel drawn or not: the segment tensions kept with
               the frame (the frame engine's ``Run._tensions``), and its share of the frame
    drawn      what the panel's readout of one rope adds when it is drawn, and its share of
               a 24 fps frame (41.7 ms)

with the first rope's top tension and stretch at the last frame (it swings: a physical scene).

    python benchmarks/bench_readouts.py        (or: python3 build.py bench readouts)
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
FRAMES = 120


def _rope(bpy, scene, points: int, k: int):
    """A mesh rope of ``points`` points, 2 cm apart along +x, its first point pinned."""
    line = [(0.02 * i, 0.05 * k, 0.0) for i in range(points)]
    mesh = bpy.data.meshes.new(f"rope_{k}")
    mesh.from_pydata(line, [(i, i + 1) for i in range(points - 1)], [])
    obj = bpy.data.objects.new(f"rope_{k}", mesh)
    scene.collection.objects.link(obj)
    obj.vertex_groups.new(name="pin").add([0], 1.0, "REPLACE")
    obj.xpbd.pin_group = "pin"
    obj.xpbd.enabled = True
    return obj


def measure(bpy, count: int, points: int) -> dict:
    from xpbd_addon.blender.frame import engine, readouts, sim

    bpy.ops.wm.read_homefile(use_empty=True, use_factory_startup=True)
    scene = bpy.context.scene
    scene.frame_end = FRAMES
    made = [_rope(bpy, scene, points, k) for k in range(count)]
    for frame in (1, 2, 3):  # compiled, caches warm
        scene.frame_set(frame)
    sim.clear()
    kept_ms: list[float] = []
    tensions = engine.Run._tensions

    def timed(self, *args):
        began = time.perf_counter()
        out = tensions(self, *args)
        kept_ms.append(1e3 * (time.perf_counter() - began))
        return out

    engine.Run._tensions = timed
    frame_ms, drawn_ms = [], []
    try:
        for frame in range(1, FRAMES + 1):
            began = time.perf_counter()
            scene.frame_set(frame)
            frame_ms.append(1e3 * (time.perf_counter() - began))
            readouts.SHOWN[made[0].session_uid].readout = None  # drawn afresh this frame
            began = time.perf_counter()
            shown = readouts.readout(made[0], sim.REGISTRY[made[0].session_uid])
            readouts.lines(shown)
            drawn_ms.append(1e3 * (time.perf_counter() - began))
    finally:
        engine.Run._tensions = tensions
    whole, kept, drawn = (float(np.median(v)) for v in (frame_ms[1:], kept_ms, drawn_ms))
    budget = 1e3 / scene.render.fps
    return dict(ropes=count, points=points, frame_ms=whole, kept_ms=kept,
                kept_share=kept / whole, drawn_ms=drawn, drawn_share=drawn / budget,
                tension=shown.tension, stretch=shown.stretch)


def main() -> int:
    import bpy

    sys.path.insert(0, str(ROOT))
    import xpbd_addon

    xpbd_addon.register()
    try:
        for count, points in ((1, 200), (100, 20)):
            r = measure(bpy, count, points)
            print(f"{count} x {points} points: frame {r['frame_ms']:.3f} ms; tensions kept "
                  f"{r['kept_ms']:.4f} ms ({100 * r['kept_share']:.2f} % of the frame); a "
                  f"readout drawn {r['drawn_ms']:.3f} ms ({100 * r['drawn_share']:.2f} % of a "
                  f"24 fps frame); first rope at frame {FRAMES}: top tension "
                  f"{r['tension']:.3f} N, stretch {100 * r['stretch']:.3f} %", flush=True)
    finally:
        xpbd_addon.unregister()
    return 0


if __name__ == "__main__":
    sys.exit(main())
