"""The tension of every constraint after a step: what tearing and breaking attachments read,
and what the next step's direct solve starts from.

XPBD's multiplier lambda of a distance constraint is the impulse of its force over a substep
times the substep: the force is T = -lambda / h^2 [N] (Macklin, Mueller & Chentanez 2016,
"XPBD", eq. 18 with the constraint force f = -grad C^T lambda / h^2; C = |x_a - x_b| - L, so
a stretched constraint, C > 0, has lambda < 0 and pulls with T > 0).

``step`` keeps the tensions in ``State.tension`` (``after_step``) where the direct solve
runs (``carries``). Which multiplier is read depends on the kernel that solved the edge:
- chains with the direct solve (``solve/kernels_chain``): ``EDGE_TENSION`` of the lane buffer,
  the converged lambda of the frame's last substep (a re-solve after contacts does not
  change it), over that substep's own step (2 h / 3 for the BDF2 substeps);
- edges of the sequential sweep (closed loops, trees, nets): the workspace's
  ``sweep_multipliers``, the last substep's accumulated lambda;
- chains with the lane sweep (``solver="sweep"``) keep no multiplier: NaN.

The next step's direct solve builds the geometric stiffness of its first Newton step from
the state's tensions (``carry_into``) instead of estimating them from x, v: the frame then
costs what any other substeps cost (the estimate took an elimination of every rope and one
or two more Newton steps). A cache that keeps ``State.copy()`` keeps them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from .layout.plan import SolvePlan
    from .model import Model, State
    from .workspace import Workspace


_kernels: tuple[Any, Any] | None = None
"""(``put_tension``, ``take_tension``) of ``solve.kernels_frame``, imported on first use
(numba loads with them; an import statement in each call cost a 12-point frame 2 %)"""


def _tension_kernels() -> tuple[Any, Any]:
    global _kernels
    if _kernels is None:
        from .solve.kernels_frame import put_tension, take_tension

        _kernels = (put_tension, take_tension)
    return _kernels


def edge_tension(model: Model, state: State, dt: float, substeps: int) -> np.ndarray:
    """The tension [N] of each edge of ``model`` (M,) at the end of the last ``step`` of
    ``state`` (made with this ``dt`` [s] and ``substeps``): positive pulls the two particles
    together: the tensions the state carries (``State.tension``, a copy of a state's
    included), else what the workspace holds. Zeros before any step; NaN where the solver
    keeps no multiplier (chains with ``solver="sweep"``). ValueError if ``state`` was last
    stepped with another Model."""
    workspace = state.workspace
    if workspace is not None and workspace.model is not model:
        raise ValueError("state: it was last stepped with another Model")
    if state.tension is not None and state.tension.shape == (model.edge_count,):
        return np.array(state.tension, dtype=np.float64)
    if workspace is None:
        return np.zeros(model.edge_count)
    return after_step(model, model.plan, workspace, dt / substeps)


def after_step(model: Model, plan: SolvePlan, workspace: Workspace, h: float, *,
               lane_step: float | None = None) -> np.ndarray:
    """The tension [N] of each edge (M,) after a step of ``plan`` with substeps of ``h``
    [s] (see the module); ``lane_step`` [s]: the direct solve's last substep, where it is
    not h (2 h / 3 after BDF2 substeps)."""
    lanes = plan.lanes
    # the sequential sweep's edges, in its order: all of them, or those outside the chains
    swept = (model.decomposition.sweep_edge_ids if lanes is None
             else model.decomposition.general_edges)
    # (every edge is written below when the lanes hold them all)
    tension = np.zeros(model.edge_count) if len(swept) else np.empty(model.edge_count)
    if lanes is not None:
        layout = lanes.layout
        if plan.lane_solver == "direct":
            _tension_kernels()[1](workspace.lane_edges, layout.edge_base, layout.edge_ids,
                                  layout.lanes, h if lane_step is None else lane_step, tension)
        else:
            tension[layout.edge_ids] = np.nan
    if len(swept):
        multipliers = (workspace.sweep_multipliers if plan is model.plan
                       else workspace.reference_multipliers)
        tension[swept] = -multipliers[:len(swept)] / (h * h)
    return tension


def carries(plan: SolvePlan) -> bool:
    """Whether a step of ``plan`` keeps its tensions in the State: only the direct solve
    starts from them (the sweeps reset lambda every substep), and ``edge_tension`` reads
    the others from the workspace."""
    return plan.lanes is not None and plan.lane_solver == "direct"


def carry_into(model: Model, plan: SolvePlan, workspace: Workspace,
               tension: np.ndarray | None, step: float, *, may_sleep: bool) -> bool:
    """The carried ``tension`` (M,) [N] (``State.tension``) into the direct solve's lane
    buffer for a first substep of ``step`` [s]. True if it was: the solve then starts from
    it; False (no tension carried, another shape, or some lane edge's tension not finite):
    it estimates the tension from x, v. Then, where ropes ``may_sleep`` through the frame
    (the State has a ``rest``), the field starts at 0: those are not solved, and keep 0,
    not what an earlier frame left in the workspace (a frame depends on its State alone)."""
    if not carries(plan):
        return False
    assert plan.lanes is not None
    put = _tension_kernels()[0]
    layout = plan.lanes.layout
    if (tension is not None and tension.ndim == 1 and tension.shape[0] == model.edge_count
            and tension.dtype.char == "d"):
        if not (tension.flags.c_contiguous and tension.flags.writeable):
            tension = np.array(tension)  # (as the kernel is compiled for: no variant of its own)
        if put(workspace.lane_edges, layout.edge_base, layout.edge_ids, layout.lanes, tension,
               step):
            return True
    if may_sleep:
        put(workspace.lane_edges, layout.edge_base, layout.edge_ids, layout.lanes,
            np.zeros(model.edge_count), step)
    return False
