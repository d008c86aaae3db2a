"""The writers of the key bakes (``job.BakeJob.write``): point keyframes of curves, shape
keys of meshes and curves, and the tears of a rope with a Tear Force (tears.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from . import action_compat

if TYPE_CHECKING:
    from .recording import Recording

SHAPE_KEY_PREFIX = "xpbd "
"""Name prefix of the per-frame shape keys of a mesh bake."""


def write_curve_keys(record: Recording) -> None:
    """Key every free control point's co (and Bezier handles) on every recorded frame, and a
    rod's tilt at every control point (``Recording.tilt``)."""
    obj, rope = record.obj, record.rope
    frames = record.frames()
    local = np.stack(record.local)  # [F, N, 3]
    rest_local = rope.rest_local
    obj.xpbd.bake.kind = "CURVE_KEYS"
    factory = action_compat.new_action(obj.data, f"{obj.name} XPBD Bake")
    obj.xpbd.bake.action = factory.action
    pinned = record.always_pinned if record.always_pinned is not None else rope.pinned
    for s, (start, n, bezier) in enumerate(rope.layout.splines):
        points = "bezier_points" if bezier else "points"
        channels = [("co", None)]
        if bezier:
            channels += [("handle_left", rest_local[:, 4:7] - rest_local[:, 0:3]),
                         ("handle_right", rest_local[:, 7:10] - rest_local[:, 0:3])]
        # One F-Curve per coordinate is what Blender animates; there is no bulk creation.
        for j in np.flatnonzero(~pinned[start:start + n]):
            p = start + int(j)
            for prop, offset in channels:
                path = f"splines[{s}].{points}[{int(j)}].{prop}"
                for c in range(3):
                    values = local[:, p, c] if offset is None else local[:, p, c] + offset[p, c]
                    action_compat.write_keys(factory.new(path, c), frames, values)
    if record.tilt:
        # unwrapped in time: the keys turn the short way between frames
        tilt = np.unwrap(np.stack(record.tilt), axis=0)  # [F, N]
        for s, (start, n, bezier) in enumerate(rope.layout.splines):
            points = "bezier_points" if bezier else "points"
            for j in range(n):
                action_compat.write_keys(factory.new(f"splines[{s}].{points}[{j}].tilt", 0),
                                         frames, tilt[:, start + j])


def write_shape_keys(record: Recording) -> None:
    """One shape key per recorded frame, each keyed to 1 on its frame and 0 on the frames
    next to it (LINEAR: in between, the mix of the two neighbouring frames). Meshes, and
    curves whose splines are all Bezier or all poly/NURBS (Bezier key points have handles,
    set in bulk only when every point has them; ``check_bakeable`` refuses a mix)."""
    obj = record.obj
    frames = record.frames()
    rest_local = record.rope.rest_local
    bezier = obj.type == "CURVE" and record.rope.layout.splines[0][2]
    obj.xpbd.bake.kind = "SHAPE_KEYS"
    basis = obj.shape_key_add(name="Basis", from_mix=False)

    def fill(block: Any, co: np.ndarray) -> None:
        block.data.foreach_set("co", np.ascontiguousarray(co, dtype=np.float32).ravel())
        if bezier:  # handles follow their point with the rest offsets, as live
            for name, cols in (("handle_left", slice(4, 7)), ("handle_right", slice(7, 10))):
                handle = co + (rest_local[:, cols] - rest_local[:, 0:3])
                block.data.foreach_set(name, np.ascontiguousarray(handle, np.float32).ravel())

    fill(basis, rest_local[:, 0:3])
    key = obj.data.shape_keys
    names = []
    for frame, local in zip(frames, record.local, strict=True):
        block = obj.shape_key_add(name=f"{SHAPE_KEY_PREFIX}{int(frame)}", from_mix=False)
        fill(block, local)
        names.append(block.name)
    factory = action_compat.new_action(key, f"{obj.name} XPBD Bake")
    obj.xpbd.bake.action = factory.action
    last = len(frames) - 1
    for k, name in enumerate(names):
        # Before the first frame the first key holds (constant extrapolation), after the
        # last the last one: the rope rests at its start shape and ends at its end shape.
        ks = [i for i in (k - 1, k, k + 1) if 0 <= i <= last]
        values = np.array([1.0 if i == k else 0.0 for i in ks])
        fcurve = factory.new(f'key_blocks["{name}"].value', 0)
        action_compat.write_keys(fcurve, frames[ks], values)


def write_tears(record: Recording) -> None:
    """The recorded tears into the baked rope: a mesh's tear attribute (its "XPBD Tear"
    modifier hides the edges from their frame on), a keyframed curve's point radii keyed
    to 0 from the tear (tears.py)."""
    if record.tear_frames is None:
        return
    from ..write import tears as tear

    obj, rope = record.obj, record.rope
    frames = record.tear_frames
    if obj.type == "MESH":
        tear.show_mesh(obj, rope.layout, frames, None, 0)
        return
    if obj.xpbd.bake.curve_format != "KEYFRAMES" or rope.radii is None:
        return  # curve shape keys hold positions only: the tear is not shown
    factory, _created = action_compat.ensure_action(obj.data, f"{obj.name} XPBD Bake")
    closes: dict[int, float] = {}  # point -> the first frame its radius is 0
    for e in np.flatnonzero(frames < tear.NEVER):
        for p in rope.layout.edges[e].tolist():
            closes[p] = min(closes.get(p, tear.NEVER), float(frames[e]))
    for p, frame in sorted(closes.items()):
        s, j = _spline_point(rope.layout, p)
        points = "bezier_points" if rope.layout.splines[s][2] else "points"
        fcurve = factory.new(f"splines[{s}].{points}[{j}].radius", 0)
        action_compat.write_keys(fcurve, np.array([record.first, frame], dtype=np.float64),
                                 np.array([rope.radii[p], 0.0]), interpolation="CONSTANT")


def _spline_point(layout: Any, particle: int) -> tuple[int, int]:
    """(spline index, point index in it) of a curve particle."""
    for s, (start, n, _bezier) in enumerate(layout.splines):
        if start <= particle < start + n:
            return s, particle - start
    raise IndexError(particle)


