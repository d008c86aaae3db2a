"""The tension of every constraint after a step: what tearing and breaking attachments read.

XPBD's multiplier lambda of a distance constraint is the impulse of its force over a substep
times the substep: the force is T = -lambda / h^2 [N] (Macklin, Mueller & Chentanez 2016,
"XPBD", eq. 18 with the constraint force f = -grad C^T lambda / h^2; C = |x_a - x_b| - L, so
a stretched constraint, C > 0, has lambda < 0 and pulls with T > 0).

Which multiplier is read depends on the kernel that solved the edge:
- chains with the direct solve (``solve/kernels_chain``): ``EDGE_TENSION`` of the lane buffer, the
  converged lambda of the frame's last substep (a re-solve after contacts does not change it);
- edges of the sequential sweep (closed loops, trees, nets): the workspace's
  ``sweep_multipliers``, the last substep's accumulated lambda;
- chains with the lane sweep (``solver="sweep"``) keep no multiplier: NaN.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .layout.topology import EDGE_TENSION

if TYPE_CHECKING:
    from .model import Model, State


def edge_tension(model: Model, state: State, dt: float, substeps: int) -> np.ndarray:
    """The tension [N] of each edge of ``model`` (M,) at the end of the last ``step`` of
    ``state`` (made with this ``dt`` [s] and ``substeps``): positive pulls the two particles
    together. Zeros before any step; NaN where the solver keeps no multiplier (chains with
    ``solver="sweep"``). ValueError if ``state`` was last stepped with another Model."""
    tension = np.zeros(model.edge_count)
    workspace = state.workspace
    if workspace is None:
        return tension
    if workspace.model is not model:
        raise ValueError("state: it was last stepped with another Model")
    h = dt / substeps
    plan = model.plan
    lanes = plan.lanes
    if lanes is not None:
        layout = lanes.layout
        if plan.lane_solver == "direct":
            # field f of edge e sits at edge_base[e] + f * lanes (topology.LaneLayout)
            field = layout.edge_base + EDGE_TENSION * layout.lanes
            tension[layout.edge_ids] = -workspace.lane_edges[field] / (h * h)
        else:
            tension[layout.edge_ids] = np.nan
    # the sequential sweep's edges, in its order: all of them, or those outside the chains
    swept = (model.decomposition.sweep_edge_ids if lanes is None
             else model.decomposition.general_edges)
    if len(swept):
        tension[swept] = -workspace.sweep_multipliers[:len(swept)] / (h * h)
    return tension
