"""A writer per geometry kind: how a rope of one kind of Blender data reads its stored points,
finds its pins' targets and writes its frames back. The kind is decided once per rope
(``writer_for``, when its simulation is made); nothing after asks which kind it is.

    mesh.py    a mesh's vertices (``Mesh.attributes["position"]``)
    curve.py   a legacy curve's spline points (poly, NURBS, Bezier with handles)
    hair.py    where a writer for hair ``Curves`` objects goes (not simulated yet)

A new kind is a module with a class that has the members of ``Writer`` and one entry in
``WRITERS``.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from ..errors import RopeError
from ..read.geometry import Layout
from .curve import CurveWriter
from .mesh import MeshWriter


class Writer(Protocol):
    """What the frame engine needs of a kind of geometry (world space [m] in, the data's
    object space out; float32 where Blender stores float32)."""

    point_width: int
    """Columns of the write buffer [N, point_width] that ``write`` takes (3: xyz; 4: xyz and
    the NURBS weight, as ``spline.points`` stores them)"""

    def hooks(self, obj: Any, layout: Layout) -> list[Any]:
        """Modifiers that move stored points (curve Hooks), read once per rope."""

    def read_local(self, obj: Any, layout: Layout) -> np.ndarray:
        """The points as stored, float32, [N, stride] (the rest shape's layout)."""

    def pin_targets(self, obj: Any, depsgraph: Any, rest_local: np.ndarray,
                    pinned_ids: np.ndarray, hooks: list[Any], render: bool) -> np.ndarray:
        """World positions [m] of the pinned points at the evaluated frame, [P, 3]."""

    def write(self, data: Any, layout: Layout, buffer: np.ndarray,
              rest_local: np.ndarray) -> None:
        """Move the points to ``buffer`` (object space [m], float32 [N, point_width])."""

    def write_rest(self, data: Any, layout: Layout, rest_local: np.ndarray) -> None:
        """Put the stored rest shape back exactly."""

    def prepare_tears(self, obj: Any, layout: Layout) -> np.ndarray | None:
        """Ready the rope to show tears (Tear Force > 0); returns what ``show_tears`` needs
        of the modelled shape (a curve's point radii [m]), or None."""

    def show_tears(self, obj: Any, layout: Layout, frames: np.ndarray,
                   radii: np.ndarray | None, current: int) -> None:
        """Show the segments torn by frame ``current`` (``tears.tear_frames``: the frame
        each tore at)."""

    def restore_tears(self, obj: Any, layout: Layout) -> None:
        """Show no tear."""


WRITERS: dict[str, Writer] = {"MESH": MeshWriter(), "CURVE": CurveWriter()}
"""The writer of each object type a rope can be (``Object.type``)."""


def writer_for(kind: str) -> Writer:
    """The writer of a rope whose data is of ``kind`` (``Layout.kind``)."""
    writer = WRITERS.get(kind)
    if writer is None:
        raise RopeError(f"A {kind.lower()} object cannot be a rope: use a mesh with edges or "
                        "a curve")
    return writer
