"""One short rope on a collider, an earlier commit against the working tree in one process.

    python -m benchmarks small_contacts_ab --ref=COMMIT

A 12-point rope dropped on the collision benchmark's terrain (2k triangles), static and
moving (the terrain's end positions lifted by 0.1 mm every other frame): a frame costs a few
tenths of a millisecond, so what each kernel call costs from Python (its arguments' typing
and unboxing, the groups of ``core.groups``) shows here, where ``collision_ab``'s big scenes
hide it. The two packages run 120 frames in turns, 6 times; each frame's figure is its
minimum over the turns (the noise only adds time), and the final positions must be the same
bits. The moving terrain again at 80,802 triangles (a character's mesh: a moving collider
pays for its triangles' swept boxes every frame). Then the rope Add > Curve > XPBD Rope
makes (20 points, S = 10, in the air), hanging from its pin over a ground plane 2.5 m below
that it never reaches: what the frame of a first rope costs in Blender, where the ground and
the air make it a substep per call.
"""

from __future__ import annotations

import importlib
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks import bench_collision as scene  # noqa: E402
from benchmarks.bench_collision_ab import _option, _package_at  # noqa: E402

FRAMES, TURNS, POINTS = 120, 6, 12
BIG_CELLS, BIG_TERRAIN = 201, "80,802"
"""The terrain a moving collider is measured on again, as large as a character's mesh"""


def _runner(package: str, moving: bool, cells: int = 31):
    core = importlib.import_module(f"{package}.core")
    collision = importlib.import_module(f"{package}.core.collision")
    vertices, triangles = scene.terrain(cells)
    mesh = collision.Collider(vertices, triangles)
    x = np.zeros((POINTS, 3))
    x[:, 0], x[:, 2] = np.linspace(-0.3, 0.3, POINTS), 0.3
    edges = np.stack([np.arange(POINTS - 1), np.arange(1, POINTS)], axis=1)

    def frames(count: int) -> tuple[np.ndarray, np.ndarray]:
        model = core.Model(x, edges, np.full(POINTS, 100.0), 1e-7, radius=0.01, damping=0.2)
        state = model.state()
        times = []
        for frame in range(count):
            colliders = [mesh.moved(mesh.vertices, mesh.vertices + (0.0, 0.0, 1e-4 * (frame % 2)))
                         if moving else mesh]
            start = time.perf_counter()
            core.step(model, state, 1.0 / 24.0, 10, colliders=colliders)
            times.append(time.perf_counter() - start)
        return np.array(times), state.x.copy()

    return frames


def _added_rope(package: str):
    """The Add-menu rope (``preparation.default_request``) in the air over a ground."""
    core = importlib.import_module(f"{package}.core")
    request = importlib.import_module(f"{package}.preparation").default_request()
    ground = [core.Plane((0.0, 0.0, -2.5))]

    def frames(count: int) -> tuple[np.ndarray, np.ndarray]:
        state = request.model.state()
        times = []
        for _ in range(count):
            start = time.perf_counter()
            core.step(request.model, state, 1.0 / 24.0, request.substeps, colliders=ground,
                      air=core.Air())
            times.append(time.perf_counter() - start)
        return np.array(times), state.x.copy()

    return frames


def main() -> None:
    ref = _option("ref", "HEAD")
    old = _package_at(ref, Path(tempfile.mkdtemp()))
    print(f"One rope a scene, {FRAMES} frames, per-frame minimum of {TURNS} "
          f"turns (ms per frame: mean / second half)\n")
    scenes = {  # name: the runner for a package
        "static": lambda package: _runner(package, False),
        "moving": lambda package: _runner(package, True),
        f"moving, {BIG_TERRAIN} triangles": lambda package: _runner(package, True, BIG_CELLS),
        "the Add-menu rope in the air over a ground": _added_rope,
    }
    for scene_name, runner in scenes.items():
        a, b = runner(old), runner("xpbd_addon")
        a(5), b(5)  # (compiled, cached)
        times_a, times_b = [], []
        for _ in range(TURNS):
            (ta, xa), (tb, xb) = a(FRAMES), b(FRAMES)
            times_a.append(ta)
            times_b.append(tb)
            assert np.array_equal(xa, xb), "the two commits differ"
        best_a, best_b = 1e3 * np.min(times_a, axis=0), 1e3 * np.min(times_b, axis=0)
        half = FRAMES // 2
        print(f"{scene_name}: {ref}: {best_a.mean():.4f} / "
              f"{best_a[half:].mean():.4f}   working tree: {best_b.mean():.4f} / "
              f"{best_b[half:].mean():.4f}   (same bits)")


if __name__ == "__main__":
    main()
