"""Blender's own solvers set up on a rope object, for ``blender_builtin.py`` (runs inside
bpy): Soft Body and Cloth modifiers, and the XPBD node-group assets of Blender 5.3's
essentials library (Cloth Dynamics, Hair Dynamics). Each ``setup_*`` returns the settings it
left, as the user sees them, for the benchmark's JSON."""

from __future__ import annotations

from pathlib import Path
from typing import Any

ASSET_BLEND = "geometry_nodes_dynamics_assets.blend"


def rna_settings(struct: Any, names: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for n in names:
        v = getattr(struct, n)
        if hasattr(v, "__len__") and not isinstance(v, str):
            v = [round(float(x), 6) for x in v]
        elif isinstance(v, float):
            v = round(v, 6)
        out[n] = v
    return out


def gn_inputs(mod: Any) -> dict[str, Any]:
    """{socket name: identifier} of a Geometry Nodes modifier's group inputs."""
    ids: dict[str, Any] = {}
    for it in mod.node_group.interface.items_tree:
        if it.item_type == "SOCKET" and it.in_out == "INPUT":
            ids.setdefault(it.name, it.identifier)
    return ids


def gn_set(mod: Any, name: str, value: Any = None, attribute: str | None = None) -> None:
    """Set a group input on the modifier (5.3 API: ``mod.properties.inputs.<id>``)."""
    sock = getattr(mod.properties.inputs, gn_inputs(mod)[name])
    if attribute is not None:
        sock.type = "ATTRIBUTE"
        sock.attribute_name = attribute
    else:
        sock.value = value


def gn_settings(mod: Any) -> dict[str, Any]:
    """Every value input of the modifier as the user sees it (name -> value or attribute)."""
    out: dict[str, Any] = {}
    inputs = mod.properties.inputs
    for it in mod.node_group.interface.items_tree:
        if it.item_type != "SOCKET" or it.in_out != "INPUT":
            continue
        sock = getattr(inputs, it.identifier, None)
        if sock is None or "value" not in sock.bl_rna.properties:
            continue
        key = it.name if it.name not in out else f"{it.name} ({it.socket_type[10:]})"
        if getattr(sock, "type", "VALUE") == "ATTRIBUTE":
            out[key] = f"attribute '{sock.attribute_name}'"
            continue
        v = sock.value
        if hasattr(v, "__len__") and not isinstance(v, str):
            v = [round(float(x), 6) for x in v]
        elif isinstance(v, float):
            v = round(v, 6)
        elif v is not None and not isinstance(v, (int, str, bool)):
            v = getattr(v, "name", str(v))
        out[key] = v
    return out


def append_node_group(name: str) -> Any:
    import bpy

    path = Path(bpy.utils.system_resource("DATAFILES")) / "assets" / "nodes" / ASSET_BLEND
    with bpy.data.libraries.load(str(path), link=False) as (src, dst):
        if name not in src.node_groups:
            raise RuntimeError(f"node group {name!r} not in {path}")
        dst.node_groups = [name]
    return dst.node_groups[0]


def setup_soft_body(obj: Any, frames: int) -> dict[str, Any]:
    mod = obj.modifiers.new("Softbody", "SOFT_BODY")
    sb = obj.soft_body
    sb.use_goal = True
    sb.vertex_group_goal = "pin"
    # Blender scales the goal group's weights by "Default" (goal_default, 0.7 out of the box):
    # with 0.7 the weight-1 top point is only a 0.7-strength goal and the ropes fall away
    # (checked with bpy 5.0.1), so the pin needs Default = 1 (weight 1 -> snapped to its goal).
    sb.goal_default = 1.0
    mod.point_cache.frame_end = max(mod.point_cache.frame_end, frames)
    return rna_settings(
        sb,
        [
            "mass",
            "friction",
            "speed",
            "use_goal",
            "vertex_group_goal",
            "goal_default",
            "goal_min",
            "goal_max",
            "goal_spring",
            "goal_friction",
            "use_edges",
            "pull",
            "push",
            "damping",
            "bend",
            "spring_length",
            "use_stiff_quads",
            "use_self_collision",
            "use_edge_collision",
            "use_auto_step",
            "step_min",
            "step_max",
            "error_threshold",
        ],
    )


def setup_cloth(obj: Any, frames: int) -> dict[str, Any]:
    mod = obj.modifiers.new("Cloth", "CLOTH")
    cs = mod.settings
    cs.vertex_group_mass = "pin"  # Shape > Pin Group
    mod.point_cache.frame_end = max(mod.point_cache.frame_end, frames)
    s = rna_settings(
        cs,
        [
            "quality",
            "mass",
            "air_damping",
            "vertex_group_mass",
            "pin_stiffness",
            "tension_stiffness",
            "compression_stiffness",
            "shear_stiffness",
            "bending_stiffness",
            "bending_model",
            "tension_damping",
            "compression_damping",
            "shear_damping",
            "bending_damping",
            "use_internal_springs",
            "use_pressure",
            "use_dynamic_mesh",
            "time_scale",
        ],
    )
    s.update(
        rna_settings(
            mod.collision_settings,
            ["use_collision", "use_self_collision", "collision_quality", "distance_min"],
        )
    )
    return s


def setup_cloth_dynamics(obj: Any, substeps: int, steps: int | None) -> dict[str, Any]:
    mod = obj.modifiers.new("Cloth Dynamics", "NODES")
    mod.node_group = append_node_group("Cloth Dynamics (Experimental)")
    gn_set(mod, "Pin Group", attribute="pin")  # the vertex group, read as an attribute
    gn_set(mod, "Substeps", substeps)
    if steps is not None:
        gn_set(mod, "Constraint Steps", steps)
    return gn_settings(mod)


def setup_hair_dynamics(obj: Any, substeps: int, steps: int | None) -> dict[str, Any]:
    mod = obj.modifiers.new("Hair Dynamics", "NODES")
    mod.node_group = append_node_group("Hair Dynamics")
    gn_set(mod, "Mode", "Physics (Experimental)")  # the default, 'Animation', does not simulate
    gn_set(mod, "Substeps", substeps)
    if steps is not None:
        gn_set(mod, "Constraint Steps", steps)
    return gn_settings(mod)
