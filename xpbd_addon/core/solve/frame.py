"""A frame without contacts: all substeps in one kernel call per block of ropes.

Each substep is predict x + h v + h^2 (g + a_i), project the constraints, v = (x - x_prev) / h;
the lane kernels (``kernels_frame``) run all of a frame's substeps block by block, copying x, v
in and out, and the rest of the graph is swept (``kernels.sweep_substeps``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .. import groups
from .kernels import sweep_substeps
from .kernels_frame import (
    direct_frame,
    direct_frame_parallel,
    direct_frame_single,
    sweep_frame,
    sweep_frame_parallel,
)

if TYPE_CHECKING:
    from ..layout.plan import SolvePlan
    from ..model import Model
    from ..workspace import Workspace


def solve_frame(model: Model, plan: SolvePlan, workspace: Workspace, x: np.ndarray,
                v: np.ndarray, gravity: np.ndarray, accelerations: np.ndarray, h: float,
                substeps: int, velocity_scale: float, threads: bool, *,
                fresh: bool = True) -> None:
    """All ``substeps`` of h [s] of a frame on x [m], v [m/s] (N, 3), in place: the chains in
    the lanes (on threads with ``threads``), then the rest swept. ``gravity`` (3,) and
    ``accelerations`` (N, 3) [m/s^2] (the lanes have theirs in the workspace's buffer);
    velocity_scale = exp(-damping h) / h [1/s]. ``fresh``: the direct solve estimates the
    ropes' tension from x, v first; False: it starts from the lane buffer's tension field
    (``kernels_frame.put_tension``)."""
    lanes = plan.lanes
    if lanes is not None:
        layout = lanes.layout
        buffers = (workspace.lane_particles, workspace.lane_edges, layout.block_particle_offset,
                   layout.block_edge_offset, layout.block_length)
        io = (lanes.order_base, lanes.order_particles, lanes.block_start, x, v)
        if plan.lane_solver == "direct":
            if layout.lanes == 1:
                run_direct = direct_frame_single
            else:
                run_direct = direct_frame_parallel if threads else direct_frame
            run_direct(workspace.lane_particles, workspace.lane_edges, lane_blocks(plan), gravity,
                       h, substeps, model.integrator == "bdf2", model.iterations,
                       -1.0 if model.strain_limit is None else model.strain_limit,
                       velocity_scale, lane_order(plan), x, v, fresh)
        else:
            run = sweep_frame_parallel if threads else sweep_frame
            run(*buffers, gravity, h, substeps, velocity_scale, *io)
    if len(plan.sweep_particles):
        sweep_substeps(x, v, model.particle_inv_mass, plan.sweep_particles, plan.sweep_edges,
                       plan.sweep_rest_length, plan.sweep_compliance, gravity, accelerations, h,
                       substeps, model.iterations, velocity_scale, workspace.sweep_scratch,
                       workspace.sweep_multipliers if plan is model.plan
                       else workspace.reference_multipliers)


def lane_blocks(plan: SolvePlan) -> tuple:
    """The plan's lane blocks as the kernels take them (``groups.blocks``)."""
    lanes = plan.lanes
    assert lanes is not None
    layout = lanes.layout
    return groups.blocks(layout.block_particle_offset, layout.block_edge_offset,
                         layout.block_length, lanes.block_leading, lanes.block_bending)


def lane_order(plan: SolvePlan) -> tuple:
    """The plan's lane particles in buffer order as the kernels take them
    (``groups.lane_order``)."""
    lanes = plan.lanes
    assert lanes is not None
    return groups.lane_order(lanes.order_base, lanes.order_particles, lanes.block_start)
