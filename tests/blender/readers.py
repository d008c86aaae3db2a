"""Independent readers of exported files, for the export tests: the Khronos glTF validator
(npm ``gltf-validator``, run by node), pygltflib (glTF joints evaluated here from the file's
nodes and animation samplers, no Blender involved) and ufbx (the FBX loader Godot uses, via its
Python bindings) for FBX."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

GLTF_VALIDATOR = "gltf-validator@2.0.0-dev.3.10"
"""The Khronos validator's npm package, pinned."""

VALIDATE_JS = """
const fs = require('fs');
const validator = require('gltf-validator');
const bytes = new Uint8Array(fs.readFileSync(process.argv[2]));
validator.validateBytes(bytes, {maxIssues: 100}).then((report) => {
  console.log(JSON.stringify({errors: report.issues.numErrors,
                              warnings: report.issues.numWarnings,
                              messages: report.issues.messages}));
}).catch((e) => { console.error(e); process.exit(2); });
"""


def validator_dir() -> Path:
    """Where the validator is installed (``npm install --prefix``), outside the clone so
    later runs reuse it; skips the test when npm is missing."""
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "xpbd" / "npm"
    if (cache / "node_modules" / "gltf-validator" / "package.json").exists():
        return cache
    if shutil.which("npm") is None or shutil.which("node") is None:
        pytest.skip("npm/node not installed: the Khronos glTF validator cannot run")
    cache.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["npm", "install", "--prefix", str(cache), GLTF_VALIDATOR],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return cache


def validate_gltf(path: Path, where: Path) -> dict:
    """The Khronos validator's report of ``path``: {'errors', 'warnings', 'messages'}."""
    script = where / "validate.js"
    script.write_text(VALIDATE_JS)
    done = subprocess.run(["node", str(script), str(path)], capture_output=True, text=True,
                          timeout=120, env={**os.environ,
                                            "NODE_PATH": str(where / "node_modules")})
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


# --- glTF with pygltflib ---------------------------------------------------------------------

def _quat_matrix(q: np.ndarray) -> np.ndarray:
    x, y, z, w = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def _sample(times: np.ndarray, values: np.ndarray, time: float, interpolation: str,
            rotation: bool) -> np.ndarray:
    """A glTF sampler's value at ``time`` [s] (STEP or LINEAR; rotations normalised lerp,
    exact on keys and within 1e-6 between frame keys of a rope)."""
    values = values.astype(float)
    k = int(np.searchsorted(times, time + 1e-6)) - 1  # the last key at or before time
    if k < 0:
        return values[0]
    if k >= len(times) - 1 or interpolation == "STEP":
        return values[min(k, len(times) - 1)]
    u = (time - times[k]) / (times[k + 1] - times[k])
    a, b = values[k], values[k + 1]
    if rotation and np.dot(a, b) < 0:
        b = -b
    v = (1 - u) * a + u * b
    return v / np.linalg.norm(v) if rotation else v


class Gltf:
    """A .glb read with pygltflib: nodes, their parents, animations sampled at a time."""

    def __init__(self, path: Path) -> None:
        import pygltflib

        self.doc = pygltflib.GLTF2().load(str(path))
        self.blob = self.doc.binary_blob()
        self.names = [n.name for n in self.doc.nodes]
        self.parent = {c: i for i, n in enumerate(self.doc.nodes) for c in (n.children or [])}

    def accessor(self, index: int) -> np.ndarray:
        acc = self.doc.accessors[index]
        view = self.doc.bufferViews[acc.bufferView]
        width = {"SCALAR": 1, "VEC3": 3, "VEC4": 4}[acc.type]
        assert acc.componentType == 5126  # float
        start = (view.byteOffset or 0) + (acc.byteOffset or 0)
        data = np.frombuffer(self.blob, dtype=np.float32, count=acc.count * width, offset=start)
        return data.reshape(acc.count, width) if width > 1 else data

    def animation(self, name: str):
        return next(a for a in self.doc.animations if a.name == name)

    def animated_nodes(self, animation) -> set[int]:
        return {c.target.node for c in animation.channels}

    def world(self, animation, time: float) -> list[np.ndarray]:
        """World matrices [4, 4] of every node at ``time`` [s] of ``animation``."""
        trs = []
        for n in self.doc.nodes:
            trs.append([np.array(n.translation or [0, 0, 0], float),
                        np.array(n.rotation or [0, 0, 0, 1], float),
                        np.array(n.scale or [1, 1, 1], float)])
        for channel in animation.channels if animation is not None else []:
            sampler = animation.samplers[channel.sampler]
            times = self.accessor(sampler.input)
            values = self.accessor(sampler.output)
            slot = {"translation": 0, "rotation": 1, "scale": 2}[channel.target.path]
            trs[channel.target.node][slot] = _sample(times, values, time,
                                                     sampler.interpolation, slot == 1)
        local = []
        for t, r, s in trs:
            m = np.eye(4)
            m[:3, :3] = _quat_matrix(r) * s
            m[:3, 3] = t
            local.append(m)
        out: list = [None] * len(local)

        def resolve(i: int) -> np.ndarray:
            if out[i] is None:
                p = self.parent.get(i)
                out[i] = local[i] if p is None else resolve(p) @ local[i]
            return out[i]

        for i in range(len(local)):
            resolve(i)
        return out


# glTF is +Y up; Blender +Z up: (x, y, z)_blender = (x, -z, y)_gltf.
GLTF_TO_BLENDER = np.array([[1.0, 0, 0], [0, 0, -1.0], [0, 1.0, 0]])


def gltf_heads(gltf: Gltf, animation, time: float, names: list[str]) -> np.ndarray:
    """World positions (Blender axes) [m] of the nodes ``names`` at ``time`` [s]."""
    world = gltf.world(animation, time)
    heads = np.array([world[gltf.names.index(n)][:3, 3] for n in names])
    return heads @ GLTF_TO_BLENDER.T


# --- FBX with ufbx ---------------------------------------------------------------------------

FBX_READ = """
import gc, json, os, sys
# ufbx 0.0.5's Python bindings crash when the cyclic garbage collector frees their objects:
# no collection here, and a hard exit once the answer is out.
gc.disable()
import ufbx
path, names, times = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
scene = ufbx.load_file(path, target_axes=ufbx.axes_right_handed_z_up, target_unit_meters=1.0)
nodes = {n.name: n for n in scene.nodes}
out = {"nodes": list(nodes), "stacks": [], "parents": {}}
for name in names:
    parent = nodes[name].parent
    out["parents"][name] = parent.name if parent is not None else None
def heads(anim, begin):
    rows = []
    for t in times:
        evaluated = scene.evaluate(anim, begin + t)
        row = []
        for name in names:
            m = evaluated.find_node(name).node_to_world
            row.append([m.c3.x, m.c3.y, m.c3.z])
        rows.append(row)
    return rows
for stack in scene.anim_stacks:
    out["stacks"].append({"name": stack.name, "time_begin": stack.time_begin,
                          "heads": heads(stack.anim, stack.time_begin)})
# what a reader plays by default (ufbx: the file's active take, else the first)
out["default"] = heads(scene.anim, scene.anim.time_begin)
print(json.dumps(out), flush=True)
os._exit(0)
"""


def fbx_read(path: Path, names: list[str], times: list[float]) -> dict:
    """An FBX file as ufbx (the loader Godot uses) reads it, converted to Blender's axes
    (right-handed, Z up) in metres, in a plain Python process (no Blender): node names,
    the parents of ``names``, and per take (anim stack) the world positions [m] of ``names``
    at ``times`` [s] after the take's start: ``{"nodes", "parents", "stacks": [{"name",
    "time_begin", "heads" [T][N][3]}], "default": heads [T][N][3] of the animation ufbx
    plays by default}``."""
    import sys

    done = subprocess.run([sys.executable, "-c", FBX_READ, str(path), json.dumps(names),
                           json.dumps(times)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


# --- a fresh Blender's own importers ---------------------------------------------------------

BLENDER_IMPORT = """
import json, os, sys
import bpy
import addon_utils
path, chains, frames = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
bpy.ops.wm.read_homefile(use_empty=True, use_factory_startup=True)
if path.endswith(".fbx"):
    addon_utils.enable("io_scene_fbx", default_set=False)
    bpy.ops.import_scene.fbx(filepath=path)
else:
    addon_utils.enable("io_scene_gltf2", default_set=False)
    bpy.ops.import_scene.gltf(filepath=path)
scene = bpy.context.scene
out = {}
for rope, chain in chains.items():
    arm = next(o for o in scene.objects if o.type == "ARMATURE" and chain[0] in o.data.bones)
    anim = arm.animation_data
    out[rope] = {"assigned": anim is not None and anim.action is not None,
                 "heads": [], "tails": []}
for frame in frames:
    scene.frame_set(frame)
    for rope, chain in chains.items():
        arm = next(o for o in scene.objects if o.type == "ARMATURE"
                   and chain[0] in o.data.bones)
        m = arm.matrix_world
        out[rope]["heads"].append([list(m @ arm.pose.bones[b].head) for b in chain])
        out[rope]["tails"].append([list(m @ arm.pose.bones[b].tail) for b in chain])
print("RESULT " + json.dumps(out), flush=True)
os._exit(0)  # bpy 4.2 can crash in its exit handlers after a glTF import
"""


def blender_import(path: Path, chains: dict[str, list[str]], frames: list[int]) -> dict:
    """What a fresh Blender (no add-on), importing ``path`` (FBX or glTF) with its own importer
    at its default settings, plays: per rope (``chains``: rope -> its bone names) whether its
    armature got an animation assigned, and the world heads and tails [m] of its bones at
    ``frames``: ``{rope: {"assigned", "heads" [F][B][3], "tails" [F][B][3]}}``."""
    import sys

    done = subprocess.run([sys.executable, "-c", BLENDER_IMPORT, str(path), json.dumps(chains),
                           json.dumps(frames)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    line = next(row for row in done.stdout.splitlines() if row.startswith("RESULT "))
    return json.loads(line[len("RESULT "):])


def usd_cache(obj, path: Path, reader: str) -> dict:
    """Bake every rope to a USD cache at ``path`` (``xpbd.bake_all``, target Cache, ``obj``
    active: its ``cache_path`` names the file) and read the file with usd-core alone: the
    script ``reader`` (``python -c reader path``) prints JSON, returned parsed."""
    import sys

    import bpy

    obj.xpbd.bake.cache_path = str(path)
    bpy.context.view_layer.objects.active = obj
    assert bpy.ops.xpbd.bake_all(target="CACHE") == {"FINISHED"}
    done = subprocess.run([sys.executable, "-c", reader, str(path)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)
