"""Contact scenes stepped by another commit's core and by this checkout's: the same bits?

    .venv/bin/python benchmarks/bench_contacts_ab.py REF

``step_ab`` compares frames without contacts; this steps the collision benchmark's scenes
(ropes on the terrain, two crossed layers, ropes on the sphere; direct and sweep, with and
without threads, colliders moving after frame 20) and a pinned rope with bending swept by a
moving collider (BDF2), with the core at REF (``git archive``) and the working tree's, and
prints per scene whether x and v are the same bits after every frame, and how far the ropes
moved (a scene that does nothing would prove nothing). Exit status 1 if any differs.
"""

from __future__ import annotations

import importlib
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import bench_collision as scene  # noqa: E402
from benchmarks.bench_collision_ab import _package_at  # noqa: E402


def scenes(pkg: str) -> dict:
    """x, v after every frame of each contact scene, stepped by the package ``pkg``."""
    core = importlib.import_module(f"{pkg}.core")
    collision = importlib.import_module(f"{pkg}.core.collision")
    solver = importlib.import_module(f"{pkg}.core.solver")
    out = {}
    for layout in ("terrain", "crossed", "sphere"):
        vertices, triangles = scene.uv_sphere(20, 31) if layout == "sphere" else scene.terrain(31)
        colliders = [collision.Collider(vertices, triangles), collision.Plane((0, 0, -0.6))]
        template = scene.ropes(layout, True)
        x = template.state().x.copy()
        for threads in (False, True):
            for solver_kind in ("direct", "sweep"):
                model = core.Model(x, template.edge_index, np.full(template.particle_count, 100.0),
                                   1e-7, radius=scene.RADIUS, self_collision=True, damping=0.2,
                                   solver=solver_kind)
                plan = model.plan if hasattr(model, "plan") else model._plan
                state = model.state()
                frames = []
                for f in range(30 if not threads else 8):
                    lift = (0.0, 0.0, 0.01 * (f % 3))  # the terrain moves from frame 20 on
                    moving = ([colliders[0].moved(colliders[0].vertices,
                                                  colliders[0].vertices + lift)]
                              + colliders[1:]) if f >= 20 else colliders
                    solver._advance(model, state, scene.DT, 10, (0.0, 0.0, -9.81), None, plan,
                                    parallel=threads, colliders=moving)
                    frames.append((state.x.copy(), state.v.copy()))
                out[(layout, threads, solver_kind)] = frames
    # a pinned hanging rope swept by a moving box, bdf2 + strain limit, and sleeping ropes
    n = 40
    xs = np.zeros((n, 3))
    xs[:, 2] = np.linspace(0, -1.5, n)
    w = np.full(n, 20.0)
    w[0] = 0
    e = np.array([(i, i + 1) for i in range(n - 1)])
    model = core.Model(xs, e, w, 1e-8, radius=0.01, integrator="bdf2", bending_compliance=0.5)
    state = model.state()
    box_v, box_t = scene.uv_sphere(10, 15, 0.2)
    frames = []
    for f in range(40):
        c0 = box_v + (-0.6 + 0.05 * f, 0.0, -0.8)
        c1 = box_v + (-0.6 + 0.05 * (f + 1), 0.0, -0.8)
        core.step(model, state, scene.DT, 12,
                  colliders=[collision.Collider(c0, box_t, vertices_end=c1)])
        frames.append((state.x.copy(), state.v.copy()))
    out["swept"] = frames
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__)
        return 2
    with tempfile.TemporaryDirectory() as folder:
        before = scenes(_package_at(argv[0], Path(folder)))
        after = scenes("xpbd_addon")
    differ = 0
    for key, frames in before.items():
        same = all(np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
                   for a, b in zip(frames, after[key], strict=True))
        moved = np.abs(frames[-1][0] - frames[0][0]).max()
        print(key, "same bits" if same else "DIFFERENT", f"(moved {moved:.3f} m)")
        differ += not same
    print("all the same bits" if not differ else f"{differ} scenes differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
