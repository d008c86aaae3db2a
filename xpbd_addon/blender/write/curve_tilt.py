"""A rod's roll as a curve's tilt, in and out (docs/physics.md, Rods: the curve's tilt).

Blender shows a legacy curve's normal (the side a flat bevel or extrusion faces) by the
rule of its Minimum twist mode (blenkernel curve_poly.cc; checked against a flat extrusion's
mesh in bpy 4.2 and 5.0): the tangent at an inner point is the mean of its two segments'
unit directions, at an end its end segment's; the first normal is (t.y, -t.x, 0) normalized,
(1, 0, 0) for a tangent within 1e-4 of vertical; each next normal is the previous one carried
by the least rotation between consecutive tangents; then the point's tilt [rad] turns it
about the tangent (right-handed).

A rod's material normal at a point is the mean frame of its two segments
(``kernels_rod._frame_between``), at an end its end segment's normal. The tilt written is the
angle from Blender's normal to it about the tangent. Only open Poly splines are exact:
Bezier and NURBS splines get the same per-control-point values, and Blender interpolates
them along the curve it draws between them; a cyclic spline is taken as open (Blender
closes the loop of its normals another way).

Nothing here imports bpy: positions are arrays, splines ``(start, count, bezier)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...core.rod import point_normals


def _unit(v: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(v, axis=-1, keepdims=True)
    return v / np.where(n > 0.0, n, 1.0)


def _transport(a: np.ndarray, b: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Rows of u carried by the least rotation from unit a to unit b (Rodrigues with
    k = a x b, c = a . b: u c + k x u + k (k . u) / (1 + c))."""
    c = (a * b).sum(axis=-1, keepdims=True)
    k = np.cross(a, b)
    f = (k * u).sum(axis=-1, keepdims=True) / np.maximum(1.0 + c, 1e-12)
    return c * u + np.cross(k, u) + k * f


def blender_frames(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(tangents, untilted normals), each (n, 3), of an open poly spline through ``points``
    (n >= 2, object space [m]) by Blender's Minimum twist rule (module docstring)."""
    d = _unit(np.diff(points, axis=0))
    tangents = np.concatenate([d[:1], _unit(d[:-1] + d[1:]), d[-1:]])
    t = tangents[0]
    first = (np.array([1.0, 0.0, 0.0]) if abs(t[0]) + abs(t[1]) < 1e-4
             else _unit(np.array([t[1], -t[0], 0.0])))
    normals = np.empty_like(tangents)
    normals[0] = first
    # a sequential carry: each normal depends on the one before (plain floats are faster
    # than numpy calls on rows of three)
    n = first.tolist()
    tan = tangents.tolist()
    for i in range(1, len(tan)):
        a, b = tan[i - 1], tan[i]
        c = a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
        k = (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])
        f = (k[0] * n[0] + k[1] * n[1] + k[2] * n[2]) / max(1.0 + c, 1e-12)
        n = [c * n[0] + k[1] * n[2] - k[2] * n[1] + k[0] * f,
             c * n[1] + k[2] * n[0] - k[0] * n[2] + k[1] * f,
             c * n[2] + k[0] * n[1] - k[1] * n[0] + k[2] * f]
        normals[i] = n
    return tangents, _unit(normals)


def tilts(local: np.ndarray, world: np.ndarray, normals: np.ndarray,
          splines: Any) -> np.ndarray:
    """(N,) [rad] the tilt at each control point that turns Blender's normal of the splines
    through ``local`` (object space [m], (N, 3)) onto ``normals`` (world directions (N, 3),
    ``point_normals``) under the object matrix ``world`` (4, 4): the signed angle about each
    point's tangent, continuous along each spline (its first in (-pi, pi])."""
    to_local = np.linalg.inv(np.asarray(world, dtype=np.float64)[:3, :3])
    m = normals @ to_local.T  # a direction's object-space image (normals are directions)
    out = np.zeros(len(local))
    for start, count, _bezier in splines:
        if count < 2:
            continue
        span = slice(start, start + count)
        tangent, normal = blender_frames(np.asarray(local[span], dtype=np.float64))
        mm = m[span] - (m[span] * tangent).sum(axis=1, keepdims=True) * tangent
        sin = (np.cross(normal, mm) * tangent).sum(axis=1)
        out[span] = np.unwrap(np.arctan2(sin, (normal * mm).sum(axis=1)))
    return out


def reference_normals(x: np.ndarray, splines: Any) -> np.ndarray:
    """(N, 3) a rod's segment normals at roll 0 at positions ``x`` [m] (``core.rod.
    rod_layout``'s rest frames: world z off the first segment, x for one within 0.9 of
    vertical, carried along by the least rotation), each spline walked in point order."""
    m1 = np.zeros_like(x)
    for start, count, _bezier in splines:
        if count < 2:
            continue
        t = _unit(np.diff(x[start:start + count], axis=0))
        up = np.array([0.0, 0.0, 1.0]) if abs(t[0, 2]) < 0.9 else np.array([1.0, 0.0, 0.0])
        n = _unit(up - up.dot(t[0]) * t[0])
        m1[start] = n
        for e in range(1, count - 1):
            n = _transport(t[e - 1], t[e], n)
            n = _unit(n - n.dot(t[e]) * t[e])
            m1[start + e] = n
    return m1


def walk(splines: Any, count: int) -> tuple[np.ndarray, np.ndarray]:
    """(particles, starts) of the splines walked in point order (as a curve rope's Model
    walks them)."""
    starts = [0]
    for _start, n, _bezier in splines:
        starts.append(starts[-1] + int(n))
    return np.arange(count, dtype=np.int64), np.asarray(starts, dtype=np.int64)


def rest_roll(local: np.ndarray, world: np.ndarray, tilt: np.ndarray,
              splines: Any) -> np.ndarray:
    """(N,) [rad] the ``core.Rod`` roll of a curve rope modelled at ``local`` (object space
    [m], (N, 3)) with the points' ``tilt`` [rad], placed by ``world`` (4, 4): the tilt less
    the one the rod's roll-0 frames would show, so that the rod's frames at rest show the
    modelled tilt (exactly where the tilt is the same along a spline; a segment holds one
    roll, the mean of its points')."""
    local = np.asarray(local, dtype=np.float64)
    x = local @ np.asarray(world)[:3, :3].T + np.asarray(world)[:3, 3]
    particles, starts = walk(splines, len(local))
    zero = tilts(local, world, point_normals(x, reference_normals(x, splines), particles,
                                             starts), splines)
    return np.asarray(tilt, dtype=np.float64) - zero


def written(track: Any, rest_local: np.ndarray, rest_tilt: np.ndarray, splines: Any,
            world: np.ndarray, frame: Any, *, local: np.ndarray | None = None) -> np.ndarray:
    """(N,) [rad] the tilt a rod's curve shows at ``frame`` (``sim.Frame``: world positions
    [m], ``rod`` its frames, None at the start frame) written with the object matrix
    ``world`` (4, 4) from ``track.write_buffer``: the angle to the rod's material normals
    (``tilts``) plus what the modelled ``rest_tilt`` [rad] differs from the rod's rest
    frames' own (a segment holds one roll: the part of a tilt that varies along the rope
    faster than that), so the rest shape shows its modelled tilt exactly. ``local``: the
    points written (object space [m], (N, 3)), if not ``track.write_buffer``'s (a bake's)."""
    if frame.rod is None:
        return np.asarray(rest_tilt, dtype=np.float64)
    layout = track.start_model.rod_layout
    base = np.asarray(track.model_world, dtype=np.float64)
    rest_x = rest_local @ base[:3, :3].T + base[:3, 3]
    at_rest = tilts(rest_local, base, point_normals(rest_x, layout.rest_state.normal,
                                                    layout.particles, layout.starts), splines)
    local = np.asarray(track.write_buffer[:, 0:3] if local is None else local,
                       dtype=np.float64)
    now = tilts(local, world, point_normals(frame.x, frame.rod.normal, layout.particles,
                                            layout.starts), splines)
    return now + (rest_tilt - at_rest)


def world_tilt(track: Any, rest_local: np.ndarray, rest_tilt: np.ndarray, splines: Any,
               frame: Any) -> np.ndarray | None:
    """(N,) [rad] the tilt a world-space copy of a rod's curve (a cache's Curves, at the
    origin) needs at ``frame`` (``sim.Frame``) to show the rod's material normals: as
    ``written``, with Blender's normals of the splines through the world positions; None for
    a plain rope."""
    normals = rod_normals(track, frame)
    if normals is None:
        return None
    layout = track.start_model.rod_layout
    base = np.asarray(track.model_world, dtype=np.float64)
    rest_x = rest_local @ base[:3, :3].T + base[:3, 3]
    at_rest = tilts(rest_local, base, point_normals(rest_x, layout.rest_state.normal,
                                                    layout.particles, layout.starts), splines)
    now = tilts(np.asarray(frame.x, dtype=np.float64), np.eye(4), normals, splines)
    return now + (rest_tilt - at_rest)


def rod_normals(track: Any, frame: Any) -> np.ndarray | None:
    """(N, 3) a rod's material normal at every particle at ``frame`` (``sim.Frame``: world
    positions [m], ``rod`` its frames, None at the start frame: the rest frames), world;
    None for a plain rope. What bones baked from a rod take their roll from."""
    layout = track.start_model.rod_layout
    if layout is None:
        return None
    frames = frame.rod if frame.rod is not None else layout.rest_state
    return point_normals(np.asarray(frame.x, dtype=np.float64), frames.normal,
                         layout.particles, layout.starts)


def roll_of(rope: Any, world: np.ndarray) -> Any:
    """``stiffness.model_arguments``' ``roll`` of ``rope`` (a ``sim.RopeSim``) placed by
    ``world`` (4, 4): 0 without a stored tilt (a mesh, an old store), else a callable giving
    ``rest_roll`` (made only where the rope is a rod)."""
    tilt = rope.rest_tilt
    if tilt is None:
        return 0.0
    return lambda: rest_roll(rope.rest_xyz, world, tilt, rope.layout.splines)
