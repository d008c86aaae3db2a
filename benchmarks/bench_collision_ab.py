"""Collisions, an earlier commit against the working tree in one process, alternating.

This VM's speed drifts by a third from hour to hour and by 10-20 % from minute to minute,
more than most single changes gain; two runs of ``bench_collision`` minutes apart do not
tell them apart. Here the package of ``--ref`` (a git commit, extracted into a temporary
directory and imported as ``xpbd_ref``: the package uses relative imports only) and the
working tree's run the same scene in turns, 5 times each; the first turn is a warm-up and
each frame's figure is its minimum over the other 4 (the noise only ever adds time).

    python -m benchmarks collision_ab --ref=COMMIT [--scene=terrain|crossed|sphere]
        [--frames=48]
"""

from __future__ import annotations

import importlib
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks import bench_collision as scene  # noqa: E402

TURNS = 5


def _option(name: str, default: str) -> str:
    for argument in sys.argv[1:]:
        if argument.startswith(f"--{name}="):
            return argument.split("=", 1)[1]
    return default


def _package_at(ref: str, into: Path) -> str:
    """Extract xpbd_addon at ``ref`` as the package ``xpbd_ref`` under ``into``."""
    target = into / "xpbd_ref"
    target.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "xpbd_addon"],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(target), "--strip-components=1"], input=archive,
                   check=True)
    sys.path.insert(0, str(into))
    return "xpbd_ref"


def cores_ab(ref: str, into: Path) -> dict:
    """{ref: that commit's ``core`` (extracted under ``into``), "working tree": this one's}."""
    return {ref: importlib.import_module(f"{_package_at(ref, into)}.core"),
            "working tree": importlib.import_module("xpbd_addon.core")}


def _runner(package: str, layout: str):
    core = importlib.import_module(f"{package}.core")
    collision = importlib.import_module(f"{package}.core.collision")
    vertices, triangles = scene.uv_sphere() if layout == "sphere" else scene.terrain()
    colliders = [collision.Collider(vertices, triangles), collision.Plane((0, 0, -0.6))]
    template = scene.ropes(layout, True)
    x = template.state().x.copy()

    def frames(count: int) -> tuple[list[float], str]:
        model = core.Model(x, template.edge_index, np.full(template.particle_count, 100.0),
                           1e-7, radius=scene.RADIUS, self_collision=True, damping=0.2)
        state = model.state()
        times = []
        for _ in range(count):
            start = time.perf_counter()
            core.step(model, state, scene.DT, scene.SUBSTEPS, colliders=colliders)
            times.append((time.perf_counter() - start) * 1e3)
        # what the scene ends as: kinetic energy [J] (0.01 kg a point) and the largest strain
        edges = model.edge_index
        length = np.linalg.norm(state.x[edges[:, 0]] - state.x[edges[:, 1]], axis=1)
        strain = float((length / model.edge_rest_length - 1.0).max())
        kinetic = 0.5 * 0.01 * float((state.v ** 2).sum())
        return times, f"kinetic {kinetic:.2e} J, largest strain {100 * strain:.3f} %"

    return frames


def main() -> None:
    ref = _option("ref", "HEAD")
    layout = _option("scene", "terrain")
    count = int(_option("frames", "48"))
    with tempfile.TemporaryDirectory() as directory:
        runners = {ref: _runner(_package_at(ref, Path(directory)), layout),
                   "working tree": _runner("xpbd_addon", layout)}
        results: dict[str, list[list[float]]] = {name: [] for name in runners}
        ends: dict[str, str] = {}
        for turn in range(TURNS):
            for name, run in runners.items():
                times, ends[name] = run(count)
                if turn:
                    results[name].append(times)
    print(f"\n{layout}, {count} frames from release, per-frame minimum of {TURNS - 1} turns"
          " (ms per frame: mean / second half / last quarter)\n")
    for name, runs in results.items():
        ms = np.min(np.array(runs), axis=0)
        print(f"{name:>14}: {ms.mean():.2f} / {ms[len(ms) // 2:].mean():.2f} / "
              f"{ms[3 * len(ms) // 4:].mean():.2f}   frames: "
              + " ".join(f"{value:.0f}" for value in ms) + f"\n{'':>16}at the end: {ends[name]}")


if __name__ == "__main__":
    main()
