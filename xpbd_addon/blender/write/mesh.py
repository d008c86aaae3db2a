"""The writer of mesh ropes: vertex positions in bulk (``foreach_get`` / ``foreach_set`` of
``Mesh.attributes["position"]``), one float32 [N, 3] array each way."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..read import pins
from ..read.geometry import Layout, read_mesh_positions
from . import tears


def write_mesh_positions(mesh: Any, local: np.ndarray) -> None:
    """Set all vertex positions [m] (object space, float32 [N, 3]) and tag the mesh."""
    mesh.attributes["position"].data.foreach_set("vector", np.ascontiguousarray(
        local, dtype=np.float32).ravel())
    mesh.update()


class MeshWriter:
    """A mesh's vertices (``kinds.Writer``)."""

    __slots__ = ()
    point_width = 3

    def hooks(self, obj: Any, layout: Layout) -> list[Any]:
        return []  # a mesh's hooks move its evaluated vertices, read as pin targets

    def read_local(self, obj: Any, layout: Layout) -> np.ndarray:
        return read_mesh_positions(obj.data)

    def pin_targets(self, obj: Any, depsgraph: Any, rest_local: np.ndarray,
                    pinned_ids: np.ndarray, hooks: list[Any], render: bool) -> np.ndarray:
        return pins.mesh_targets(obj, depsgraph, rest_local, pinned_ids)

    def write(self, data: Any, layout: Layout, buffer: np.ndarray,
              rest_local: np.ndarray) -> None:
        write_mesh_positions(data, buffer)

    def write_rest(self, data: Any, layout: Layout, rest_local: np.ndarray) -> None:
        write_mesh_positions(data, rest_local)

    def prepare_tears(self, obj: Any, layout: Layout) -> np.ndarray | None:
        tears.prepare_mesh(obj, layout)
        return None

    def show_tears(self, obj: Any, layout: Layout, frames: np.ndarray,
                   radii: np.ndarray | None, current: int) -> None:
        tears.show_mesh(obj, layout, frames, radii, current)

    def restore_tears(self, obj: Any, layout: Layout) -> None:
        tears.restore_mesh(obj, layout)
