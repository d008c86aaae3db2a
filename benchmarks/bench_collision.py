"""Collisions, headless: ms per frame of 100 ropes x 100 points with self-collision and a
10k-triangle collider, S = 20, 24 fps.

Scenes (the ropes are dropped, timed from release until they have settled):

* terrain: a 4 m x 4 m height field of 10,082 triangles (an open mesh, a shell), the 100
  ropes (1 m, radius 5 mm) dropped side by side 4 cm apart; they land and settle in the
  bumps.
* crossed: the same terrain, the ropes dropped in two crossed layers (50 along x and 50
  along y, 2 cm apart), so they land on each other: 2,500 crossings, rope-rope contacts
  everywhere.
* sphere: a closed UV sphere of 9,898 triangles (r = 0.5 m), the 100 ropes dropped over
  it side by side 2 cm apart (a closed mesh: signed distances, pseudo-normals); they drape
  and slide off the sides.

Each scene first runs for a few frames on another model (a warm-up: the contact kernels
load when the ropes land), then is timed over 48 frames from release.

Columns: everything on; everything but sleeping (``Model.sleep_speed`` = 0: every rope
simulated every substep); without self-collision; without the collider (ground plane only);
no contacts at all (the solver alone, for reference). Also the broad-phase refreshes per
frame, candidate counts and how many ropes sleep once settled. Prints a Markdown table and
writes out/bench_collision.json.

    python -m benchmarks.bench_collision [--quick]
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from xpbd_addon.core import Model, step  # noqa: E402
from xpbd_addon.core import contacts as contacts_module  # noqa: E402
from xpbd_addon.core.collision import Collider, Plane  # noqa: E402

SUBSTEPS = 20
DT = 1.0 / 24.0
ROPES, POINTS, RADIUS = 100, 100, 0.005
WARM_UP_FRAMES = 10


def terrain(cells=71, size=4.0):
    """A height field of 2 cells^2 triangles (cells = 71: 10,082) over [-size/2, size/2]^2."""
    u = np.linspace(-size / 2, size / 2, cells + 1)
    x, y = np.meshgrid(u, u, indexing="ij")
    z = 0.08 * np.sin(3.0 * x) * np.cos(2.0 * y) + 0.04 * np.sin(7.0 * x + 1.0)
    vertices = np.stack([x, y, z], axis=-1).reshape(-1, 3)
    i, j = np.meshgrid(np.arange(cells), np.arange(cells), indexing="ij")
    a = (i * (cells + 1) + j).reshape(-1)
    b, c, d = a + cells + 1, a + cells + 2, a + 1
    triangles = np.concatenate([np.stack([a, b, c], 1), np.stack([a, c, d], 1)])
    return vertices, triangles


def uv_sphere(rings=50, segments=101, radius=0.5):
    """A closed UV sphere: 2 segments (rings - 1) triangles (50 x 101: 9,898 ~ 10k)."""
    theta = np.linspace(0.0, np.pi, rings + 1)[1:-1]
    phi = np.linspace(0.0, 2 * np.pi, segments, endpoint=False)
    t, p = np.meshgrid(theta, phi, indexing="ij")
    ring = np.stack([np.sin(t) * np.cos(p), np.sin(t) * np.sin(p), np.cos(t)], -1).reshape(-1, 3)
    vertices = radius * np.concatenate([[[0, 0, 1]], ring, [[0, 0, -1]]])
    top, bottom = 0, len(vertices) - 1
    k = np.arange(segments)
    triangles = [np.stack([np.full(segments, top), 1 + k, 1 + (k + 1) % segments], 1)]
    for r in range(rings - 2):
        a = 1 + r * segments + k
        b = 1 + r * segments + (k + 1) % segments
        triangles += [np.stack([a, a + segments, b], 1),
                      np.stack([b, a + segments, b + segments], 1)]
    last = 1 + (rings - 2) * segments
    triangles.append(np.stack([last + k, np.full(segments, bottom), last + (k + 1) % segments], 1))
    return vertices, np.concatenate(triangles)


def ropes(layout: str, self_collision: bool) -> Model:
    s = np.linspace(-0.5, 0.5, POINTS)
    x = np.zeros((ROPES, POINTS, 3))
    if layout == "terrain":
        x[:, :, 0] = s
        x[:, :, 1] = (np.arange(ROPES)[:, None] - ROPES / 2) * 0.04
        x[:, :, 2] = 0.3
    elif layout == "crossed":  # two crossed layers: they land on each other
        half = ROPES // 2
        offsets = (np.arange(half) - half / 2) * 0.02
        x[:half, :, 0] = s
        x[:half, :, 1] = offsets[:, None]
        x[:half, :, 2] = 0.3
        x[half:, :, 1] = s
        x[half:, :, 0] = offsets[:, None]
        x[half:, :, 2] = 0.35
    else:  # side by side over the sphere
        x[:, :, 0] = s
        x[:, :, 1] = (np.arange(ROPES)[:, None] - ROPES / 2) * 0.02
        x[:, :, 2] = 0.55
    base = (np.arange(ROPES) * POINTS)[:, None]
    edges = np.stack([base + np.arange(POINTS - 1), base + np.arange(1, POINTS)], -1)
    return Model(x.reshape(-1, 3), edges.reshape(-1, 2), np.full(ROPES * POINTS, 100.0), 1e-7,
                 radius=RADIUS, self_collision=self_collision, damping=0.2)


def run(layout: str, frames: int, *, self_collision: bool, mesh: bool, contacts: bool = True,
        sleep: bool = True):
    vertices, triangles = uv_sphere() if layout == "sphere" else terrain()
    collider = Collider(vertices, triangles)
    colliders = ([collider] if mesh else []) + [Plane((0, 0, -0.6))]
    # warm-up: the same scene for a few frames on another model, so that every kernel it
    # uses (the contacts' only once the ropes land) is loaded before the timing starts
    warm = ropes(layout, self_collision and contacts)
    warm_state = warm.state()
    for _ in range(WARM_UP_FRAMES):
        step(warm, warm_state, DT, SUBSTEPS, colliders=colliders if contacts else ())
    model = ropes(layout, self_collision and contacts)
    if not sleep:
        model.sleep_speed = 0.0
    state = model.state()
    times, refreshes, candidates, pairs, asleep = [], [], [], [], []
    original = contacts_module.FrameContacts.__init__

    def spy(self, *args, **kwargs):
        original(self, *args, **kwargs)
        spy.last = self

    contacts_module.FrameContacts.__init__ = spy
    try:
        for _ in range(frames):
            start = time.perf_counter()
            step(model, state, DT, SUBSTEPS, colliders=colliders if contacts else ())
            times.append(time.perf_counter() - start)
            last = getattr(spy, "last", None)
            if contacts and last is not None:
                refreshes.append(last.refreshes)
                candidates.append(last.colliders.lists.live if last.colliders.scene else 0)
                pairs.append(len(last.pairs))
                asleep.append(last.sleeping)
    finally:
        contacts_module.FrameContacts.__init__ = original
    assert np.all(np.isfinite(state.x))
    ms = np.array(times) * 1e3
    settled = ms[len(ms) // 2:]
    resting = ms[3 * len(ms) // 4:]
    return {
        "triangles": int(len(collider.triangles)) if mesh else 0,
        "ms_mean": float(ms.mean()), "ms_settled": float(settled.mean()),
        "ms_last_quarter": float(resting.mean()),
        "ms_max": float(ms.max()),
        "refreshes_per_frame": float(np.mean(refreshes)) if refreshes else 0.0,
        "candidates_mean": float(np.mean(candidates)) if candidates else 0.0,
        "segment_pairs_mean": float(np.mean(pairs)) if pairs else 0.0,
        "asleep_last_quarter": float(np.mean(asleep[3 * len(asleep) // 4:])) if asleep else 0.0,
    }


def main() -> None:
    quick = "--quick" in sys.argv
    frames = 12 if quick else 48
    rows = {}
    for layout in ("terrain", "crossed", "sphere"):
        rows[layout] = {
            "all": run(layout, frames, self_collision=True, mesh=True),
            "all, no sleeping": run(layout, frames, self_collision=True, mesh=True, sleep=False),
            "no self-collision": run(layout, frames, self_collision=False, mesh=True),
            "ground plane only": run(layout, frames, self_collision=True, mesh=False),
            "no contacts": run(layout, frames, self_collision=False, mesh=False, contacts=False),
        }
    print(f"\n100 ropes x 100 points (r = {RADIUS} m), S = {SUBSTEPS}, {frames} frames at 24 fps"
          " from release; ms per frame (mean over all / over the second half, settled / over"
          " the last quarter; max)\n")
    print("| scene | contacts | triangles | ms/frame | settled | last quarter | max "
          "| broad-phase redos/frame | candidates | segment pairs | ropes asleep (last quarter) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for layout, columns in rows.items():
        for name, r in columns.items():
            print(f"| {layout} | {name} | {r['triangles']} | {r['ms_mean']:.1f} | "
                  f"{r['ms_settled']:.1f} | {r['ms_last_quarter']:.1f} | {r['ms_max']:.1f} | "
                  f"{r['refreshes_per_frame']:.1f} | "
                  f"{r['candidates_mean']:.0f} | {r['segment_pairs_mean']:.0f} | "
                  f"{r['asleep_last_quarter']:.0f} |")
    out = ROOT / "out"
    out.mkdir(exist_ok=True)
    (out / "bench_collision.json").write_text(json.dumps(
        {"ropes": ROPES, "points": POINTS, "radius": RADIUS, "substeps": SUBSTEPS,
         "frames": frames, "scenes": rows}, indent=2))


if __name__ == "__main__":
    main()
