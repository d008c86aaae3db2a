"""Chain links: a link object instanced on every segment of a curve rope, by a Geometry Nodes
modifier (``add_links``), so a chain renders as links and plays without the add-on once
baked (the modifier is Blender's own; it follows whatever moves the curve's points).

Each link sits at its segment's midpoint, its long axis along the segment; its flat side
faces the curve's normal (Blender's Minimum Twist normal: transported along the curve, so
it does not spin as the rope swings), and every other link is turned 90 degrees about the
rope's axis, as the links of a chain are. The link's long axis is its longest bounding-box
dimension and its flat side's normal its shortest, read when the links are added.

The node tree, one per link object:

    curve (its curve component) -> capture Normal (points)
          -> Curve to Mesh (no profile: one edge a segment)
          -> capture, per edge: align long axis to P2 - P1, thin axis to the normal,
             turn by (index mod 2) 90 degrees about the long axis
          -> Mesh to Points (edges: their midpoints) -> Instance on Points (the link)
"""

from __future__ import annotations

import math
from typing import Any

import bpy

MODIFIER = "XPBD Chain Links"
"""The modifier's name on the rope (``add_links`` replaces one of that name)"""

_AXES = ("X", "Y", "Z")


def link_axes(link: Any) -> tuple[str, str]:
    """(long, thin): the link object's longest and shortest bounding-box dimensions' axes."""
    dimensions = list(link.dimensions)
    long = max(range(3), key=lambda k: dimensions[k])
    thin = min((k for k in range(3) if k != long), key=lambda k: dimensions[k])
    return _AXES[long], _AXES[thin]


def add_links(rope: Any, link: Any) -> Any:
    """Instance ``link`` on every segment of the curve object ``rope`` (see the module) with
    a Geometry Nodes modifier, replacing an earlier one; returns the modifier. The curve's
    bevel is set to 0: the links replace the tube (a bevelled curve reaches the modifier
    as the tube's mesh, with no segments left to place links on)."""
    rope.data.bevel_depth = 0.0
    tree = _node_group(link)
    old = rope.modifiers.get(MODIFIER)
    if old is not None:
        rope.modifiers.remove(old)
    modifier = rope.modifiers.new(MODIFIER, "NODES")
    modifier.node_group = tree
    return modifier


def _node_group(link: Any) -> Any:
    """The node group instancing ``link`` (one per link object, made again each time: its
    axes follow the link's shape now). The link is the Object Info node's object, not a
    modifier input (Blender 5.3 refuses ID properties on a modifier from Python)."""
    name = f"XPBD Chain Links: {link.name}"
    groups: Any = bpy.data.node_groups
    tree: Any = groups.get(name)
    if tree is None:
        tree = groups.new(name, "GeometryNodeTree")
        interface = tree.interface
        interface.new_socket("Geometry", in_out="INPUT", socket_type="NodeSocketGeometry")
        interface.new_socket("Geometry", in_out="OUTPUT", socket_type="NodeSocketGeometry")
    tree.nodes.clear()
    long, thin = link_axes(link)
    nodes, links = tree.nodes, tree.links
    group_in = nodes.new("NodeGroupInput")
    group_out = nodes.new("NodeGroupOutput")

    # the curve alone (a bevelled one arrives as a mesh: no links then, rather than links on
    # the tube's edges), its normal at its points carried onto the mesh of its segments
    curve = nodes.new("GeometryNodeSeparateComponents")
    links.new(group_in.outputs[0], curve.inputs[0])
    normal = nodes.new("GeometryNodeInputNormal")
    carry_normal = _capture(nodes, links, curve.outputs["Curve"], normal.outputs[0], "POINT",
                            "VECTOR")
    to_mesh = nodes.new("GeometryNodeCurveToMesh")
    links.new(carry_normal.outputs["Geometry"], to_mesh.inputs["Curve"])

    # per edge: the link's rotation
    ends = nodes.new("GeometryNodeInputMeshEdgeVertices")
    direction = nodes.new("ShaderNodeVectorMath")
    direction.operation = "SUBTRACT"
    links.new(ends.outputs["Position 2"], direction.inputs[0])
    links.new(ends.outputs["Position 1"], direction.inputs[1])
    along = nodes.new("FunctionNodeAlignRotationToVector")
    along.axis = long
    links.new(direction.outputs[0], along.inputs["Vector"])
    facing = nodes.new("FunctionNodeAlignRotationToVector")
    facing.axis = thin
    facing.pivot_axis = long
    links.new(along.outputs[0], facing.inputs["Rotation"])
    links.new(_output(carry_normal), facing.inputs["Vector"])
    index = nodes.new("GeometryNodeInputIndex")
    parity = _math(nodes, links, "MODULO", index.outputs[0], 2.0)
    angle = _math(nodes, links, "MULTIPLY", parity.outputs[0], math.pi / 2)
    turn = nodes.new("FunctionNodeAxisAngleToRotation")
    turn.inputs["Axis"].default_value = tuple(1.0 if a == long else 0.0 for a in _AXES)
    links.new(angle.outputs[0], turn.inputs["Angle"])
    alternate = nodes.new("FunctionNodeRotateRotation")
    alternate.rotation_space = "LOCAL"
    links.new(facing.outputs[0], alternate.inputs["Rotation"])
    links.new(turn.outputs[0], alternate.inputs["Rotate By"])
    carry_rotation = _capture(nodes, links, to_mesh.outputs[0], alternate.outputs[0], "EDGE",
                              "ROTATION")

    # the links at the segments' midpoints
    midpoints = nodes.new("GeometryNodeMeshToPoints")
    midpoints.mode = "EDGES"
    links.new(carry_rotation.outputs["Geometry"], midpoints.inputs["Mesh"])
    info = nodes.new("GeometryNodeObjectInfo")
    info.transform_space = "ORIGINAL"
    info.inputs["Object"].default_value = link
    instances = nodes.new("GeometryNodeInstanceOnPoints")
    links.new(midpoints.outputs[0], instances.inputs["Points"])
    links.new(info.outputs["Geometry"], instances.inputs["Instance"])
    links.new(_output(carry_rotation), instances.inputs["Rotation"])
    links.new(instances.outputs[0], group_out.inputs[0])
    return tree


def _capture(nodes: Any, links: Any, geometry: Any, value: Any, domain: str,
             data_type: str) -> Any:
    """A Capture Attribute node of one ``value`` on ``domain`` (Blender 4.2+: capture items)."""
    node = nodes.new("GeometryNodeCaptureAttribute")
    node.domain = domain
    node.capture_items.new(data_type, "Value")
    links.new(geometry, node.inputs["Geometry"])
    links.new(value, node.inputs["Value"])  # (by name: 5.3 put a Selection input first)
    return node


def _output(capture: Any) -> Any:
    """The captured field of a ``_capture`` node."""
    return capture.outputs["Value"]


def _math(nodes: Any, links: Any, operation: str, value: Any, constant: float) -> Any:
    node = nodes.new("ShaderNodeMath")
    node.operation = operation
    links.new(value, node.inputs[0])
    node.inputs[1].default_value = constant
    return node
