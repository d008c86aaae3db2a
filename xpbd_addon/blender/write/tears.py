"""How a torn rope looks, live, in renders and in the bake (``Object.xpbd.tear_force``).

The simulation removes a segment from the Model once its tension passes Tear Force
(``engine.Run.step``); what is shown is made from the frame at which each segment tore
(``tear_frames``, +inf for never), so it holds for any frame reached in any order:

- meshes: a Geometry Nodes modifier "XPBD Tear" (first in the stack) deletes the edges whose
  edge attribute ``xpbd_tear_frame`` is at or before the scene's frame. The attribute is
  data, the modifier is Blender's own: the bake plays the tear without the add-on, and the
  vertices stay (nothing the simulation writes changes size).
- curves: a legacy curve cannot be split without changing its topology, so the two points of
  a torn segment get radius 0 from the tear on: the rope's bevel closes to nothing there,
  and the render shows the gap. Their radii are keyed in the bake. The modelled radii are
  kept on the curve (``RADII``), so Reset, Free Bake and turning the rope off put them back,
  also after the file was saved with a tear showing.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..read.geometry import Layout
from ..read.rest import holder

ATTRIBUTE = "xpbd_tear_frame"
"""Mesh edge attribute: the frame at which the edge tore [frame]; NEVER if it did not."""
MODIFIER = "XPBD Tear"
"""Name of the Geometry Nodes modifier (and of its node group) that hides torn edges."""
NEVER = 1.0e30
"""The tear frame of an edge that never tore."""
RADII = "xpbd_rest_radius"
"""ID property of a tearing curve, where its rest shape is kept (``rest.holder``): its
modelled point radii [m]."""


def _kept_radii(curve: Any) -> Any:
    """The curve's kept radii (``RADII``) or None; where older versions of the add-on kept them
    (a custom property) if nothing is kept where they are now."""
    group = holder(curve)
    kept = None if group is None else group.get(RADII)
    return kept if kept is not None else curve.get(RADII)


def tear_frames(cache: dict[int, Any], edge_count: int) -> np.ndarray:
    """The first cached frame at which each edge is torn (``Frame.torn``), NEVER otherwise
    [frame], float32 [edge_count]."""
    frames = np.full(edge_count, NEVER, dtype=np.float32)
    last = None
    for frame in sorted(cache):
        torn = cache[frame].torn
        # a frame without a new tear shares its mask with the frame before (engine.Run.step):
        # only the frames where segments tore cost an array pass
        if torn is not None and torn is not last:
            new = torn & (frames == NEVER)
            frames[new] = frame
        last = torn
    return frames


def _node_group() -> Any:
    """The node group deleting edges whose ``ATTRIBUTE`` is at or before the scene frame."""
    import bpy

    found: Any = bpy.data.node_groups.get(MODIFIER)
    if found is not None and found.bl_idname == "GeometryNodeTree":
        return found
    group: Any = bpy.data.node_groups.new(MODIFIER, "GeometryNodeTree")
    group.interface.new_socket("Geometry", in_out="INPUT", socket_type="NodeSocketGeometry")
    group.interface.new_socket("Geometry", in_out="OUTPUT", socket_type="NodeSocketGeometry")
    nodes: Any = group.nodes
    links = group.links
    source, sink = nodes.new("NodeGroupInput"), nodes.new("NodeGroupOutput")
    attribute = nodes.new("GeometryNodeInputNamedAttribute")
    attribute.data_type = "FLOAT"
    attribute.inputs["Name"].default_value = ATTRIBUTE
    time = nodes.new("GeometryNodeInputSceneTime")
    compare = nodes.new("FunctionNodeCompare")
    compare.data_type, compare.operation = "FLOAT", "LESS_EQUAL"
    delete = nodes.new("GeometryNodeDeleteGeometry")
    delete.domain, delete.mode = "EDGE", "EDGE_FACE"
    links.new(attribute.outputs["Attribute"], compare.inputs[0])
    links.new(time.outputs["Frame"], compare.inputs[1])
    links.new(source.outputs[0], delete.inputs["Geometry"])
    links.new(compare.outputs["Result"], delete.inputs["Selection"])
    links.new(delete.outputs["Geometry"], sink.inputs[0])
    return group


def prepare_curve(obj: Any, layout: Layout) -> np.ndarray:
    """Ready a curve for tearing (once, when a simulation with a Tear Force is built): keep
    its modelled radii. Returns them [m] (float32 [N])."""
    stored = _kept_radii(obj.data)
    radii = modelled_radii(obj.data, layout)
    if stored is None or len(stored) != layout.particle_count:
        holder(obj.data, create=True)[RADII] = radii.tolist()
    return radii


def prepare_mesh(obj: Any, layout: Layout) -> None:
    """Ready a mesh for tearing: the tear attribute on its edges and the modifier that
    deletes the torn ones."""
    mesh = obj.data
    if ATTRIBUTE not in mesh.attributes:
        mesh.attributes.new(ATTRIBUTE, "FLOAT", "EDGE")
        mesh.attributes[ATTRIBUTE].data.foreach_set(
            "value", np.full(len(mesh.edges), NEVER, dtype=np.float32))
    modifier = obj.modifiers.get(MODIFIER)
    if modifier is None:
        modifier = obj.modifiers.new(MODIFIER, "NODES")
        modifier.node_group = _node_group()
        if len(obj.modifiers) > 1:  # before Skin, Subdivision...: it deletes input edges
            import bpy

            with bpy.context.temp_override(object=obj):
                bpy.ops.object.modifier_move_to_index(modifier=MODIFIER, index=0)


def restore_curve(obj: Any, layout: Layout) -> None:
    """Show no tear on a curve: its modelled radii back."""
    stored = _kept_radii(obj.data)
    if stored is not None and len(stored) == layout.particle_count:
        set_curve_radii(obj.data, layout, np.array(stored, dtype=np.float32))


def restore_mesh(obj: Any, layout: Layout) -> None:
    """Show no tear on a mesh: its edges all there."""
    attribute = obj.data.attributes.get(ATTRIBUTE)
    if attribute is not None:
        show_mesh(obj, layout, np.full(len(attribute.data), NEVER, dtype=np.float32), None, 0)


def show_mesh(obj: Any, layout: Layout, frames: np.ndarray, radii: np.ndarray | None,
              current: int) -> None:
    """Show the tears of ``frames`` (``tear_frames``) on a mesh: the frame each edge tore at,
    which its modifier compares with the current frame (``current`` and ``radii`` unused)."""
    attribute = obj.data.attributes.get(ATTRIBUTE)
    if attribute is not None and len(attribute.data) == len(frames):
        old = np.empty(len(frames), dtype=np.float32)
        attribute.data.foreach_get("value", old)
        if not np.array_equal(old, frames):
            attribute.data.foreach_set("value", frames)
            obj.data.update()


def show_curve(obj: Any, layout: Layout, frames: np.ndarray, radii: np.ndarray | None,
               current: int) -> None:
    """Show the tears of ``frames`` (``tear_frames``) on a curve at frame ``current``: the
    points of a torn segment at radius 0. ``radii``: the modelled point radii [m]."""
    if radii is not None:
        set_curve_radii(obj.data, layout, gap_radii(layout, radii, frames <= current))


def gap_radii(layout: Layout, radii: np.ndarray, torn: np.ndarray) -> np.ndarray:
    """``radii`` [N] with both points of every torn edge (``torn`` [M]) at 0."""
    out = radii.copy()
    out[layout.edges[torn].ravel()] = 0.0
    return out


def modelled_radii(curve: Any, layout: Layout) -> np.ndarray:
    """The curve's point radii [m] as modelled (float32 [N]): those kept while it shows a tear
    (``RADII``), else its own."""
    stored = _kept_radii(curve)
    if stored is not None and len(stored) == layout.particle_count:
        return np.array(stored, dtype=np.float32)
    return curve_radii(curve, layout)


def curve_radii(curve: Any, layout: Layout) -> np.ndarray:
    """Every control point's radius [m] (float32 [N])."""
    out = np.empty(layout.particle_count, dtype=np.float32)
    for spline, (start, n, bezier) in zip(curve.splines, layout.splines, strict=True):
        points = spline.bezier_points if bezier else spline.points
        points.foreach_get("radius", out[start:start + n])
    return out


def set_curve_radii(curve: Any, layout: Layout, radii: np.ndarray) -> None:
    """Set every control point's radius [m] when it differs from what is there."""
    if np.array_equal(curve_radii(curve, layout), radii):
        return
    for spline, (start, n, bezier) in zip(curve.splines, layout.splines, strict=True):
        points = spline.bezier_points if bezier else spline.points
        points.foreach_set("radius", np.ascontiguousarray(radii[start:start + n]))
    curve.update_tag()
