"""The ropes' stages of a substep in a frame with contacts, one substep per kernel call.

``solver`` runs a frame with contacts as a pipeline of named stages per substep:

    ropes.solve(substep, moved)      predict x + h v + h^2 (g + a_i), project every rope's
                                     constraints, v = (x - x_prev) / h (the kernels fuse them)
    frame.project(x, v, substep)     contacts: ropes with each other, then colliders
    ropes.stretched(moved)           did the contacts stretch some rope by > RESOLVE_STRAIN?
    ropes.resolve(moved)             then its stretch constraints once more (``kernels_resolve``)
    frame.project_again(...)         and the contacts again, without friction
    ropes.take_moved(moved)          what the contacts moved goes back to the lane buffer

``RopeSubsteps`` picks the ropes' kernels once per frame (by solver, lane count and threads)
and keeps the frame's per-substep scratch; the kernels are called by name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from . import kernels_held, kernels_resolve, kernels_sleep
from .frame import lane_blocks, lane_order
from .kernels import lane_gather, lane_substeps, lane_substeps_parallel, sweep_substeps
from .kernels_direct import direct_substeps_parallel, direct_substeps_single
from .kernels_direct_io import direct_substep_io, direct_substep_io_single, gather_moved

if TYPE_CHECKING:
    from ..layout.plan import SolvePlan
    from ..model import Model
    from ..workspace import Workspace

RESOLVE_STRAIN = 0.01
"""The rope's re-solve after the contacts runs in a substep only for the ropes in which the
contacts changed some segment's length by more than this fraction of its rest length (a
resting rope, whose contacts lift it by g h^2 evenly, skips it)."""


def holds_contacts(model: Model, plan: SolvePlan) -> bool:
    """Whether the solve of ``plan`` holds the contacts between ropes (``kernels_held``):
    the direct solver's lanes, Self Collision and two ropes or more; elsewhere there can be
    none, and the solve's kernels compile without that code."""
    lanes = plan.lanes
    return (lanes is not None and plan.lane_solver == "direct" and bool(model.self_collision)
            and len(lanes.rope_block) > 1)


class RopeSubsteps:
    """The rope solve of one frame with contacts, a substep at a time (see the module).

    The lane kernels keep x, v of the chains in the workspace's lane buffer between calls;
    ``solve`` leaves them in x, v too, and ``take_moved`` copies back what the contacts
    changed. Without contacts each call continues exactly where the last stopped, so a frame
    is bit-identical to the frame-at-once kernels (``kernels_frame``)."""

    __slots__ = ("model", "plan", "workspace", "x", "v", "gravity", "accelerations", "h",
                 "velocity_scale", "strain_limit", "multipliers", "mode", "resolves",
                 "before_contacts", "resolve_moves", "active_blocks", "active_ropes",
                 "awake_blocks", "awake", "blocks", "lane_order", "holds", "fresh")

    def __init__(self, model: Model, plan: SolvePlan, workspace: Workspace, x: np.ndarray,
                 v: np.ndarray, gravity: np.ndarray, accelerations: np.ndarray, h: float,
                 velocity_scale: float, threads: bool, *, fresh: bool = True) -> None:
        self.model, self.plan, self.workspace = model, plan, workspace
        self.fresh = fresh
        """The frame's first substep estimates the ropes' tension from x, v
        (``kernels_chain.estimate_tension``); False: it starts from the tension the lane
        buffer holds (``kernels_frame.put_tension`` wrote the state's)"""
        self.x, self.v = x, v
        """The state's positions [m] and velocities [m/s], (N, 3), updated in place"""
        self.gravity = gravity
        """(3,) [m/s^2]"""
        self.accelerations = accelerations
        """(N, 3) [m/s^2] external accelerations besides gravity, for the sweep (the lanes
        have theirs in the buffer)"""
        self.h, self.velocity_scale = h, velocity_scale
        """Substep [s]; exp(-damping h) / h [1/s]"""
        self.strain_limit = -1.0 if model.strain_limit is None else model.strain_limit
        self.multipliers = (workspace.sweep_multipliers if plan is model.plan
                            else workspace.reference_multipliers)
        lanes = plan.lanes
        self.mode = "none"
        """Which lane kernels run: "none" (no lanes), "fused" (direct, one thread, copies of
        x, v fused in), "awake_threads" (direct on threads, sleeping blocks skipped),
        "direct" (one rope per block on threads), "sweep" or "sweep_threads"."""
        if lanes is not None:
            if plan.lane_solver == "direct" and not threads:
                self.mode = "fused"
            elif plan.lane_solver == "direct":
                self.mode = "awake_threads" if lanes.layout.lanes > 1 else "direct"
            else:
                self.mode = "sweep_threads" if threads else "sweep"
        self.resolves = lanes is not None and plan.lane_solver == "direct"
        """The re-solve after the contacts runs (the direct solve's lanes only)"""
        self.holds = True if holds_contacts(model, plan) else None
        """True where contacts between ropes are held in the ropes' solve
        (``kernels_held``), None where there can be none (one rope, no self-collision, the
        sweep): the solve's kernels then compile without that code"""
        self.before_contacts = np.empty_like(x)
        """(N, 3) [m] x before the substep's contacts (what they stretched is measured)"""
        self.resolve_moves = np.empty(len(x))
        """(N,) [m] how far the re-solve moved each particle"""
        blocks = 0 if lanes is None else len(lanes.layout.block_length)
        ropes = 0 if lanes is None else len(lanes.rope_block)
        self.active_blocks = np.zeros(blocks, dtype=np.uint8)
        """(B,) flags of the blocks the re-solve runs"""
        self.active_ropes = np.zeros(ropes, dtype=np.uint8)
        """(R,) flags of the ropes it keeps"""
        self.awake_blocks = np.ones(blocks, dtype=np.uint8)
        """(B,) flags of the blocks with a rope awake (``kernels_sleep``)"""
        self.awake = np.ones(len(x), dtype=np.uint8)
        """(N,) flags of the particles awake"""
        self.blocks = lane_blocks(plan) if lanes is not None else ()
        self.lane_order = lane_order(plan) if lanes is not None else ()
        """The fused kernel's ``groups.blocks`` and ``groups.lane_order`` (made once)"""
        if lanes is not None and self.mode != "fused":
            lane_gather(workspace.lane_particles, lanes.order_base, lanes.order_particles, x,
                        v, lanes.layout.lanes)

    def accelerate(self, accelerations: np.ndarray, moved: np.ndarray, *,
                   velocities_changed: bool) -> None:
        """The next substeps' external accelerations [m/s^2] (N, 3) besides gravity (the
        caller's, plus the air's drag of this substep's start and a rod's frame pull,
        ``core.substep_forces``), into the lane buffer
        and for the sweep. ``velocities_changed``: v was changed in place (a damping map),
        so every particle goes back into the lane buffer (flagged in ``moved``)."""
        self.accelerations = accelerations
        self.workspace.put_accelerations(self.plan, accelerations)
        if velocities_changed:
            moved[:] = 1
            self.take_moved(moved)

    def solve(self, substep: int, moved: np.ndarray) -> None:
        """Predict (gravity and the external accelerations), project every rope's
        constraints and update the velocities, for ``substep`` (0-based) of the frame: the
        chains in the lanes, then the rest of the graph swept. ``moved`` (N,) uint8: the
        particles the last substep's contacts moved (the fused kernel copies them in and
        the flags are cleared)."""
        model, plan, workspace = self.model, self.plan, self.workspace
        x, v, lanes = self.x, self.v, plan.lanes
        if lanes is not None:
            layout = lanes.layout
            buffer, edges = workspace.lane_particles, workspace.lane_edges
            first = substep == 0
            fresh = first and self.fresh
            common = (buffer, edges, layout.block_particle_offset, layout.block_edge_offset,
                      layout.block_length)
            if self.mode == "fused":
                # the particles the last substep's contacts moved go in (all of them at first)
                run_io = direct_substep_io_single if layout.lanes == 1 else direct_substep_io
                run_io(buffer, edges, self.blocks, self.gravity, self.h, model.iterations,
                       self.strain_limit, self.velocity_scale, self.lane_order, x, v, moved,
                       first, (self.awake_blocks, self.awake), self.holds, fresh)
                moved[:] = 0
            else:
                if self.mode == "awake_threads":
                    # (the blocks whose ropes all sleep are skipped)
                    kernels_sleep.direct_substep_awake_parallel(
                        *common, lanes.block_leading, lanes.block_bending, self.gravity,
                        self.h, fresh, model.iterations, self.strain_limit,
                        self.velocity_scale, self.awake_blocks, self.holds)
                elif self.mode == "direct":
                    run_direct = (direct_substeps_single if layout.lanes == 1
                                  else direct_substeps_parallel)
                    run_direct(*common, lanes.block_leading, lanes.block_bending,
                               self.gravity, self.h, 1, fresh, None, self.holds,
                               model.iterations, self.strain_limit, self.velocity_scale)
                else:
                    run = lane_substeps_parallel if self.mode == "sweep_threads" else lane_substeps
                    run(*common, self.gravity, self.h, 1, self.velocity_scale)
                kernels_sleep.lane_scatter_awake(buffer, lanes.order_base,
                                                 lanes.order_particles, x, v, layout.lanes,
                                                 self.awake)
        if len(plan.sweep_particles):
            sweep_substeps(x, v, model.particle_inv_mass, plan.sweep_particles,
                           plan.sweep_edges, plan.sweep_rest_length, plan.sweep_compliance,
                           self.gravity, self.accelerations, self.h, 1, model.iterations,
                           self.velocity_scale, workspace.sweep_scratch, self.multipliers)
        if self.resolves:
            np.copyto(self.before_contacts, x)

    def hold(self, pairs: np.ndarray, clearance: tuple[np.ndarray, np.ndarray],
             reach: float) -> None:
        """The rope-rope contacts of ``pairs`` (segment pairs) that touch at x (within
        ``reach`` [m], ``contacts.frame.FrameContacts.hold_reach``) held in the next solves
        (``kernels_held``: the re-solve after the contacts and the next substep's), in place
        of those held before; ``clearance``: the margins that let pairs be passed over
        (``FrameContacts.hold_pairs``)."""
        lanes = self.plan.lanes
        if self.holds is None or lanes is None:
            return
        model, workspace = self.model, self.workspace
        self.release()
        if len(pairs):
            if not workspace.hold_scratch:
                workspace.hold_scratch = kernels_held.hold_scratch(model.edge_index, lanes)
            kernels_held.hold_contacts(
                self.x, model.particle_inv_mass, model.particle_radius, model.edge_index,
                pairs, clearance, lanes.particle_rope, workspace.lane_edges,
                workspace.lane_holds, workspace.hold_scratch, kernels_held.HOLD_STIFFNESS,
                reach, model.self_friction, lanes.layout.lanes)

    def release(self) -> None:
        """Every contact held let go (the frame's end: the next starts from x, v alone)."""
        lanes = self.plan.lanes
        holds = self.workspace.lane_holds
        if lanes is None or not holds[0]:
            return
        kernels_held.clear(self.workspace.lane_edges, holds, lanes.layout.lanes)

    def stretched(self, moved: np.ndarray) -> bool:
        """Whether the contacts, which moved the particles flagged in ``moved``, changed
        some rope's segment by more than ``RESOLVE_STRAIN`` of its rest length (those ropes
        and their blocks are flagged for ``resolve``)."""
        if not self.resolves:
            return False
        model, lanes = self.model, self.plan.lanes
        assert lanes is not None
        topology = model.contact_topology
        return bool(kernels_resolve.ropes_stretched_beyond(
            self.x, self.before_contacts, moved, RESOLVE_STRAIN, topology.segment_start,
            topology.segments, model.edge_index, model.edge_rest_length, lanes.particle_rope,
            lanes.rope_block, self.active_ropes, self.active_blocks))

    def resolve(self, moved: np.ndarray, threads: bool) -> np.ndarray:
        """The stretch constraints once more on the contact-corrected positions (friction
        cannot drag a rope beyond its length), for the ropes ``stretched`` flagged
        (``kernels_resolve``). Clears ``moved``; returns how far each particle moved [m]."""
        model, lanes, workspace = self.model, self.plan.lanes, self.workspace
        assert lanes is not None
        layout = lanes.layout
        gather_moved(workspace.lane_particles, lanes.order_base, lanes.order_particles, moved,
                     self.x, self.v, layout.lanes)
        moved[:] = 0
        if layout.lanes == 1:
            run_resolve = kernels_resolve.direct_resolve_single
        elif threads:
            run_resolve = kernels_resolve.direct_resolve_parallel
        else:
            run_resolve = kernels_resolve.direct_resolve
        run_resolve(workspace.lane_particles, workspace.lane_edges,
                    layout.block_particle_offset, layout.block_edge_offset,
                    layout.block_length, lanes.block_leading, self.h, model.iterations,
                    self.strain_limit, self.velocity_scale, self.active_blocks, self.holds)
        kernels_resolve.scatter_ropes(workspace.lane_particles, lanes.order_base,
                                      lanes.order_particles, lanes.block_start,
                                      self.active_blocks, lanes.particle_rope,
                                      self.active_ropes, layout.lanes, self.x, self.v,
                                      self.resolve_moves, self.awake)
        return self.resolve_moves

    def take_moved(self, moved: np.ndarray) -> None:
        """The particles the contacts moved (``moved`` (N,) uint8 flags) back into the lane
        buffer for the next substep, and the flags cleared; the fused kernel does it itself
        at its next call (the flags are kept for it)."""
        lanes = self.plan.lanes
        if self.mode == "fused":
            return
        if lanes is not None:
            gather_moved(self.workspace.lane_particles, lanes.order_base,
                         lanes.order_particles, moved, self.x, self.v, lanes.layout.lanes)
        moved[:] = 0
