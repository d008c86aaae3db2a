"""The writer of curve ropes: legacy ``Curve`` splines (poly, NURBS, Bezier), each spline's
points in bulk; Bezier handles keep their rest offsets from their point."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..read import pins, rest
from ..read.geometry import Layout, read_curve_points, read_curve_tilt
from . import curve_tilt, tears


def write_curve_points(curve: Any, layout: Layout, local: np.ndarray, rest: np.ndarray) -> None:
    """Move every control point to ``local`` (object space [m], float32 C-contiguous [N, 4]:
    co and the NURBS weight w, as ``spline.points`` stores them). Bezier handles keep their
    rest offsets from ``rest`` ([N, CURVE_REST_STRIDE], see ``read_curve_points``)."""
    # One buffer for all splines; each spline takes a contiguous slice, so the per-spline
    # cost is one foreach_set call and no copy.
    bezier_arrays: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
    for spline, (start, n, bezier) in zip(curve.splines, layout.splines, strict=True):
        if bezier:
            if bezier_arrays is None:
                co3 = np.ascontiguousarray(local[:, 0:3])
                bezier_arrays = (co3,
                                 np.ascontiguousarray(co3 + (rest[:, 4:7] - rest[:, 0:3])),
                                 np.ascontiguousarray(co3 + (rest[:, 7:10] - rest[:, 0:3])))
            co3, left, right = bezier_arrays
            points = spline.bezier_points
            points.foreach_set("co", co3[start:start + n].ravel())
            points.foreach_set("handle_left", left[start:start + n].ravel())
            points.foreach_set("handle_right", right[start:start + n].ravel())
        else:
            spline.points.foreach_set("co", local[start:start + n].ravel())
    curve.update_tag()


def write_curve_tilt(curve: Any, layout: Layout, tilt: np.ndarray) -> None:
    """Set every control point's tilt to ``tilt`` [rad] (N,) (a rod's, ``curve_tilt``)."""
    values = np.ascontiguousarray(tilt, dtype=np.float32)
    for spline, (start, n, bezier) in zip(curve.splines, layout.splines, strict=True):
        points = spline.bezier_points if bezier else spline.points
        points.foreach_set("tilt", values[start:start + n])


def write_rod_tilt(curve: Any, rope: Any, world: np.ndarray, frame: Any) -> None:
    """A rod's tilt at ``frame`` (``curve_tilt.written``) into the curve of ``rope`` (a
    ``sim.RopeSim`` whose points were just written with the object matrix ``world``); a
    plain rope's tilt is never written."""
    if rope.rest_tilt is not None and rope.track.start_model.rod_layout is not None:
        write_curve_tilt(curve, rope.layout, curve_tilt.written(
            rope.track, rope.rest_xyz, rope.rest_tilt, rope.layout.splines, world, frame))


def write_curve_rest(curve: Any, layout: Layout, rest_local: np.ndarray) -> None:
    """Put the stored rest shape back exactly, handles included, and the stored tilt where
    one is stored and the points' differs (a rod wrote its own; a rope never does)."""
    tilt = rest.load_tilt(curve, layout)
    if tilt is not None and not np.array_equal(read_curve_tilt(curve, layout),
                                               tilt.astype(np.float32)):
        write_curve_tilt(curve, layout, tilt)
    for spline, (start, n, bezier) in zip(curve.splines, layout.splines, strict=True):
        r = np.ascontiguousarray(rest_local[start:start + n], dtype=np.float32)
        if bezier:
            points = spline.bezier_points
            points.foreach_set("co", np.ascontiguousarray(r[:, 0:3]).ravel())
            points.foreach_set("handle_left", np.ascontiguousarray(r[:, 4:7]).ravel())
            points.foreach_set("handle_right", np.ascontiguousarray(r[:, 7:10]).ravel())
        else:
            spline.points.foreach_set("co", np.ascontiguousarray(r[:, 0:4]).ravel())
    curve.update_tag()


class CurveWriter:
    """A legacy curve's spline points (``kinds.Writer``)."""

    __slots__ = ()
    point_width = 4

    def hooks(self, obj: Any, layout: Layout) -> list[Any]:
        return pins.curve_hooks(obj, layout)  # type: ignore[return-value]

    def read_local(self, obj: Any, layout: Layout) -> np.ndarray:
        return read_curve_points(obj.data, layout)

    def pin_targets(self, obj: Any, depsgraph: Any, rest_local: np.ndarray,
                    pinned_ids: np.ndarray, hooks: list[Any], render: bool) -> np.ndarray:
        return pins.curve_targets(obj, depsgraph, rest_local, pinned_ids, hooks, render)

    def write(self, data: Any, layout: Layout, buffer: np.ndarray,
              rest_local: np.ndarray) -> None:
        write_curve_points(data, layout, buffer, rest_local)

    def write_rest(self, data: Any, layout: Layout, rest_local: np.ndarray) -> None:
        write_curve_rest(data, layout, rest_local)

    def prepare_tears(self, obj: Any, layout: Layout) -> np.ndarray | None:
        return tears.prepare_curve(obj, layout)

    def show_tears(self, obj: Any, layout: Layout, frames: np.ndarray,
                   radii: np.ndarray | None, current: int) -> None:
        tears.show_curve(obj, layout, frames, radii, current)

    def restore_tears(self, obj: Any, layout: Layout) -> None:
        tears.restore_curve(obj, layout)
