"""The static description of a particle system (``Model``) and its changing state (``State``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .layout import topology
from .layout.plan import ContactTopology, SolvePlan, contact_topology, solve_plans
from .rod import Rod, RodLayout, RodState, rod_layout
from .validation import as_float_array, as_index_pairs, as_nonnegative_float, as_substeps

if TYPE_CHECKING:
    from .sleep import Rest
    from .workspace import Workspace

__all__ = ["ContactTopology", "Model", "Rod", "SolvePlan", "State"]


@dataclass(slots=True)
class State:
    """Where the particles are and how they move: what changes from frame to frame. Arrays are
    owned by the state and updated in place by ``step``."""

    x: np.ndarray
    """Particle positions [m], shape [particle_count, 3], float64"""
    v: np.ndarray
    """Particle velocities [m/s], shape [particle_count, 3], float64"""
    rod: RodState | None = field(default=None, repr=False, compare=False)
    """A rod's frames, twist rates and rest shape (``rod.RodState``) where the Model has a
    ``rod``: made by the first ``step`` from the rest shape; part of a copy."""
    workspace: Workspace | None = field(default=None, repr=False, compare=False)
    """The solver's scratch and what it carries from frame to frame for this state
    (``workspace.Workspace``): made by the first ``step`` for its Model and made again when
    the state is stepped with another Model. None until then; never part of a copy."""
    rest: Rest | None = field(default=None, repr=False, compare=False)
    """How long each rope has been at rest and which ropes sleep (``sleep.Rest``), set by
    ``step`` in frames with contacts; part of what a cached frame restores (with x and v).
    None: every rope awake, none at rest yet."""
    tension: np.ndarray | None = field(default=None, repr=False, compare=False)
    """(M,) [N] each edge's tension at the end of the last ``step`` (``edge_tension``): the
    next step's direct solve builds its first Newton step's geometric stiffness from it
    (``tension``'s module); part of a copy, and of what a cached frame restores (with x and
    v). None (before a step, or after one of the sweeps, which keep none here): the direct
    solve estimates it from x, v. Carried to a frame that does not start where the last
    ended (x set anew), it is only a worse first guess: the solve converges as from its
    estimate, to the same tolerance."""
    air_work: np.ndarray | None = field(default=None, repr=False, compare=False)
    """(N,) [J] the work the air's drag (``step``'s ``air`` and ``wind``) has done on each
    particle over the steps of this state, summed substep by substep as m a . dx (exact:
    the drag is constant over a substep); None until the air acts. An energy check adds it
    to what the rope may have (wind puts energy in, drag alone takes it out)."""
    spring_work: np.ndarray | None = field(default=None, repr=False, compare=False)
    """(N,) [J] the work that soft pins' targets moving within a frame
    (``soft_pins.SoftPins.start`` to ``targets``) have done on each held particle's spring
    over the steps of this state: summed substep by substep as the spring energy the
    target's move adds at the substep's start positions, 1/2 (|p1 - x|^2 - |p0 - x|^2) /
    alpha (the substep itself, implicit, only takes energy out); None until such a target
    moves. An energy check adds it to what the rope may have."""

    def copy(self) -> State:
        """The same positions, velocities, rod state, rest, tensions, air and spring work
        (copied), without the workspace."""
        return State(self.x.copy(), self.v.copy(),
                     None if self.rod is None else self.rod.copy(),
                     rest=None if self.rest is None else self.rest.copy(),
                     tension=None if self.tension is None else self.tension.copy(),
                     air_work=None if self.air_work is None else self.air_work.copy(),
                     spring_work=None if self.spring_work is None
                     else self.spring_work.copy())


class Model:
    """Static arrays of a rope (or any particle graph) held together by distance constraints.

    What the rope is, never written once made: what ``step`` writes lives in the stepped
    State's ``workspace``, so one Model can be shared by any number of States (and threads).
    A rope that changes while it plays (cut, winched, stiffened) is a new Model,
    ``with_changes``, that its State goes on with.

    Args:
        positions: rest positions [m], shape (N, 3); the state starts here.
        edges: particle index pairs (M, 2), one distance constraint each.
        inv_mass: inverse particle masses [1/kg], shape (N,); 0 pins a particle.
        compliance: alpha [m/N], the inverse stiffness of each constraint, a scalar or (M,).
            A constraint under tension T stretches by alpha * T at equilibrium, whatever the
            substep count. 0 is rigid.
        rest_length: rest length of each edge [m], (M,); defaults to the edge lengths of
            ``positions``.
        damping: velocity damping rate d [1/s]: without other forces a speed decays as
            exp(-d t), like air drag. It only slows motion down; resting shapes (equilibria)
            are the same for every d. 0 is none. A scalar, or (N,) one per particle (a
            damping map): then ``damping`` is the least of them and ``particle_damping``
            holds them all.
        solver: ``"direct"`` (default) solves all distance constraints of each rope (chain)
            together every substep, Newton steps of its implicit system with the geometric
            stiffness of its tension (``kernels_chain``): as stiff as alpha says and stable
            (no energy gain) at any point count, substep count, compliance and mass;
            ``"sweep"`` is plain XPBD, one Gauss-Seidel sweep per substep (stiff long ropes
            stretch).
        iterations: with ``"direct"``, the least number of Newton steps per substep (more
            are taken until every segment's residual is below 0.1 % of its length,
            ``kernels_chain.NEWTON_TOLERANCE``); Gauss-Seidel sweeps per substep, lambda
            accumulating, for what is swept (everything with ``solver="sweep"``; closed loops,
            trees and nets with "direct").
        strain_limit: with ``"direct"``, the most a segment of a rope's part hanging off a pin
            may stretch beyond its rest length plus the stretch its compliance explains, as a
            fraction (0.002 = 0.2 %), enforced after the solve (``kernels_direct.limit_chain``).
            A safety net for contacts (a fast kinematic collider pushing a pinned rope); the
            converged solve holds lengths by itself. None turns it off; rods have none.
        bending_compliance: alpha_b [1/(N m)] of the bending constraint at each point of a
            chain (a scalar or (N,); see ``kernels_direct``): 0 is rigid, larger is softer,
            None (default) is no bending stiffness, a chain. For a material of bending stiffness
            EI [N m^2] use alpha_b = l / EI, l the mean length of the two segments at the point
            (``core.material`` does this). Acts on chains with the direct solver.
        radius: the rope's radius r [m] (half its thickness), a scalar or (N,), >= 0. Contacts
            keep particles r (+ the collider's thickness) from colliders and rope segments
            r_a + r_b apart. 0 (default): points, and no self-collision.
        self_collision: push rope segments apart that come closer than r_a + r_b, within a
            rope and between ropes (``kernels_contact.segment_contacts``). Segments sharing a
            particle or closer than 1.5 (r_a + r_b) along the same rope never collide
            (``contacts.SELF_SKIP``). Needs radius > 0.
        self_friction: friction coefficient between rope segments (sticking and sliding).
        contact_push_speed: the fastest a contact pushes a particle out [m/s] beyond undoing
            what the particle moved into it during the substep: a rope that starts inside a
            collider or another rope leaves it at this speed, without gaining velocity.
        contact_margin: broad-phase margin of collider contacts [m]: triangles within radius
            + margin of a particle's predicted path are its candidates, and the search is
            redone when it strays farther than the margin from that path (``contacts``).
            Also how deep inside a closed collider a particle is still found and pushed out.
        sleep_speed: the speed [m/s] below which ropes at rest go to sleep in frames with
            contacts (``core.sleep``): a rope whose every particle moved less than this
            times the frame's length in each frame for ``sleep.SLEEP_TIME`` (0.5 s) sleeps:
            it is not simulated, and keeps its shape, until a pin of it moves, an awake
            rope or a moving collider comes near, or a setting changes. 0 turns sleeping
            off.

        integrator: how the direct solve steps in time. ``"euler"`` (default): implicit
            Euler, each substep from the last; slow swings lose some amplitude to it
            (docs/physics.md: a 2 m pendulum from 120 degrees keeps 89 after 20 s at S = 20).
            ``"bdf2"``: the second-order backward differentiation formula from a frame's
            second substep on, which keeps nearly all of it (117) at the same stability;
            frames with contacts use implicit Euler.
        rod: a ``rod.Rod``: the chains keep the shape of ``positions`` as their rest bend
            (with ``bending_compliance``), carry a material frame that twists and can turn
            at a pinned end, and can yield (plasticity); its frames follow every
            substep (``substep_forces``), implicit Euler. None (default): ropes, whose
            bending pulls towards straight.

    Raises ValueError naming the argument for wrong shapes, NaN or inf, negative masses,
    compliances, rest lengths or damping, and edge indices out of range.
    """

    # Every attribute is declared here and set in ``__init__`` only: a Model is what the
    # rope is, never a cache (what ``step`` writes lives in the state's workspace).
    __slots__ = ("particle_rest_x", "particle_count", "edge_index", "edge_count",
                 "particle_inv_mass", "edge_compliance", "edge_rest_length", "damping",
                 "particle_damping",
                 "solver", "iterations", "strain_limit", "particle_bend_compliance",
                 "particle_radius", "self_collision", "self_friction", "contact_push_speed",
                 "contact_margin", "integrator", "sleep_speed", "rod", "rod_layout",
                 "decomposition",
                 "reference_plan", "plan", "contact_topology",
                 "__weakref__")  # (the Blender side keeps weak sets of models)

    def __init__(
        self,
        positions: Any,
        edges: Any,
        inv_mass: Any,
        compliance: Any,
        *,
        rest_length: Any = None,
        damping: Any = 0.0,
        solver: str = "direct",
        iterations: int = 1,
        strain_limit: float | None = 0.002,
        bending_compliance: Any = None,
        radius: Any = 0.0,
        self_collision: bool = False,
        self_friction: float = 0.2,
        contact_push_speed: float = 1.0,
        contact_margin: float = 0.005,
        sleep_speed: float = 1e-3,
        integrator: str = "euler",
        rod: Rod | None = None,
        _decomposition: topology.Decomposition | None = None,
    ) -> None:
        # (``_decomposition``: the one of these same edges, from ``with_changes``)
        self.particle_rest_x = as_float_array(positions, "positions", (None, 3))
        """Rest positions [m], shape [particle_count, 3]"""
        self.particle_count = len(self.particle_rest_x)
        """Number of particles N"""
        self.edge_index = as_index_pairs(edges, "edges", self.particle_count)
        """Particle pairs of the distance constraints, shape [edge_count, 2], int64"""
        self.edge_count = len(self.edge_index)
        """Number of distance constraints M"""
        self.particle_inv_mass = as_float_array(
            inv_mass, "inv_mass", (self.particle_count,), nonnegative=True
        )
        """Inverse masses [1/kg], shape [particle_count]; 0 = pinned (kinematic)"""
        compliance_array = as_float_array(compliance, "compliance", np.shape(compliance),
                                          nonnegative=True)
        if compliance_array.ndim == 0:
            compliance_array = np.full(self.edge_count, float(compliance_array))
        elif compliance_array.shape != (self.edge_count,):
            raise ValueError(
                f"compliance: expected a scalar or shape ({self.edge_count},), "
                f"got {compliance_array.shape}"
            )
        self.edge_compliance = compliance_array
        """Compliance alpha of each constraint [m/N], shape [edge_count]"""
        if rest_length is None:
            a, b = self.edge_index[:, 0], self.edge_index[:, 1]
            rest = np.linalg.norm(self.particle_rest_x[a] - self.particle_rest_x[b], axis=1)
        else:
            rest = as_float_array(rest_length, "rest_length", (self.edge_count,), nonnegative=True)
        self.edge_rest_length = np.ascontiguousarray(rest, dtype=np.float64)
        """Rest length of each constraint [m], shape [edge_count]"""
        self.particle_damping: np.ndarray | None = None
        """Each particle's damping rate [1/s], shape [particle_count], where they differ;
        None: every particle has ``damping``"""
        if np.ndim(damping) == 0:
            self.damping = as_nonnegative_float(damping, "damping")
        else:
            rates = as_float_array(damping, "damping", (self.particle_count,),
                                   nonnegative=True)
            self.damping = float(rates.min()) if len(rates) else 0.0
            if len(rates) and rates.max() > self.damping:
                self.particle_damping = rates
        """Velocity damping rate [1/s] of every particle (the least, with a damping map):
        free motion decays as exp(-damping t)"""
        if solver not in ("direct", "sweep"):
            raise ValueError(f"solver: expected 'direct' or 'sweep', got {solver!r}")
        self.solver = solver
        """How chains are solved: "direct" (exact per substep) or "sweep" (Gauss-Seidel)"""
        self.iterations = as_substeps(iterations, "iterations")
        """Solver iterations per substep (Newton steps or Gauss-Seidel sweeps)"""
        self.strain_limit = None if strain_limit is None else as_nonnegative_float(
            strain_limit, "strain_limit")
        """Excess stretch allowed on hanging rope parts (fraction), or None for no limit"""
        if bending_compliance is None:
            self.particle_bend_compliance = None
        else:
            bend = as_float_array(bending_compliance, "bending_compliance",
                                  np.shape(bending_compliance), nonnegative=True)
            if bend.ndim == 0:
                bend = np.full(self.particle_count, float(bend))
            elif bend.shape != (self.particle_count,):
                raise ValueError(f"bending_compliance: expected a scalar or shape "
                                 f"({self.particle_count},), got {bend.shape}")
            self.particle_bend_compliance = bend
        """Bending compliance at each point [1/(N m)], shape [particle_count], or None"""
        radius_array = as_float_array(radius, "radius", np.shape(radius), nonnegative=True)
        if radius_array.ndim == 0:
            radius_array = np.full(self.particle_count, float(radius_array))
        elif radius_array.shape != (self.particle_count,):
            raise ValueError(f"radius: expected a scalar or shape ({self.particle_count},), "
                             f"got {radius_array.shape}")
        self.particle_radius = radius_array
        """Rope radius at each particle [m], shape [particle_count]"""
        if not isinstance(self_collision, (bool, np.bool_)):
            raise ValueError(f"self_collision: expected True or False, got {self_collision!r}")
        self.self_collision = bool(self_collision)
        """Rope-rope contacts on (needs radius > 0)"""
        self.self_friction = as_nonnegative_float(self_friction, "self_friction")
        """Friction coefficient between rope segments"""
        self.contact_push_speed = as_nonnegative_float(contact_push_speed, "contact_push_speed")
        """Largest push-out speed of a contact beyond the substep's approach [m/s]"""
        self.contact_margin = as_nonnegative_float(contact_margin, "contact_margin")
        """Extra broad-phase reach of collider contacts [m]"""
        if integrator not in ("euler", "bdf2"):
            raise ValueError(f"integrator: expected 'euler' or 'bdf2', got {integrator!r}")
        self.integrator = integrator
        """Time integration of the direct solve: "euler" (implicit) or "bdf2" (second order)"""
        self.sleep_speed = as_nonnegative_float(sleep_speed, "sleep_speed")
        """Ropes slower than this [m/s] for ``sleep.SLEEP_TIME`` sleep; 0 = never"""
        self.decomposition = (_decomposition if _decomposition is not None
                              else topology.decompose(self.particle_count, self.edge_index))
        """Chains (ropes) and the rest of the graph, and the sweep order of the constraints"""
        if rod is not None and not isinstance(rod, Rod):
            raise ValueError(f"rod: expected a core.Rod or None, got {type(rod).__name__}")
        if rod is not None and self.solver != "direct":
            raise ValueError("rod: rods need solver='direct'")
        self.rod = rod
        """How the ropes behave as rods (``rod.Rod``), or None: plain ropes"""
        if rod is not None:
            # the strain limit's moves along the rope fight a rest bend (measured: a coiled
            # rod stable without it gains energy with it); a rod's stretch is its solve's
            self.strain_limit = None
        self.rod_layout: RodLayout | None = None if rod is None else rod_layout(
            rod, self.particle_rest_x, self.particle_inv_mass, self.particle_radius,
            self.particle_bend_compliance, self.decomposition.chains,
            self.decomposition.chain_edges, self.edge_rest_length)
        """What the rod kernels need (``rod.rod_layout``), or None"""
        self.reference_plan, self.plan = solve_plans(self)
        """How ``step_sequential`` (everything swept) and ``step`` run this model
        (``layout.plan.SolvePlan``)"""
        self.contact_topology = contact_topology(self)
        """What the contacts derive from the edges and radii"""

    @property
    def pinned(self) -> np.ndarray:
        """Boolean mask of the pinned (inverse mass 0) particles, shape [particle_count]"""
        return self.particle_inv_mass == 0.0

    def state(self) -> State:
        """A new state at the rest positions, at rest."""
        return State(self.particle_rest_x.copy(), np.zeros_like(self.particle_rest_x))

    def with_changes(self, *, removed_edges: Any = None, rest_length: Any = None,
                     compliance: Any = None, inv_mass: Any = None) -> Model:
        """The same rope changed between two frames: a new Model of the same particles (same
        rest positions, masses, radii and settings), whose constraints differ.

        A Model never changes; a rope that is cut, winched or stiffened while it plays is a
        new Model each time, and its State goes on: ``step(new_model, state, ...)`` continues
        from the state's positions and velocities (its workspace is made again for the new
        Model, ``workspace``), with no reset.

        Args:
            removed_edges: the constraints to drop (a cut, a tear): indices into the current
                edges, or a boolean mask of shape (edge_count,).
            rest_length: new rest lengths [m] of the current edges, a scalar or
                (edge_count,) (a winch shortens them over frames), >= 0.
            compliance: new compliances alpha [m/N] of the current edges, a scalar or
                (edge_count,), >= 0.
            inv_mass: new inverse masses [1/kg] (particle_count,), >= 0 (0 = pinned): a point
                grabbed or let go, or a spring's share of a point (``soft_pins``).

        Edge order is kept (minus the removed). Raises ValueError naming the argument.
        """
        keep = np.ones(self.edge_count, dtype=np.bool_)
        if removed_edges is not None:
            removed = np.asarray(removed_edges)
            if removed.dtype == np.bool_:
                if removed.shape != (self.edge_count,):
                    raise ValueError(f"removed_edges: a mask must have shape "
                                     f"({self.edge_count},), got {removed.shape}")
                keep &= ~removed
            else:
                if removed.size and (removed.dtype.kind not in "iu" or removed.ndim != 1
                                     or removed.min() < 0 or removed.max() >= self.edge_count):
                    raise ValueError(f"removed_edges: expected edge indices in 0 .. "
                                     f"{self.edge_count - 1} or a boolean mask")
                keep[removed.astype(np.int64)] = False
        rest = self.edge_rest_length if rest_length is None else _per_edge(
            rest_length, "rest_length", self.edge_count)
        alpha = self.edge_compliance if compliance is None else _per_edge(
            compliance, "compliance", self.edge_count)
        same_edges = bool(keep.all())
        masses = self.particle_inv_mass if inv_mass is None else as_float_array(
            inv_mass, "inv_mass", (self.particle_count,), nonnegative=True)
        return Model(
            self.particle_rest_x, self.edge_index[keep], masses, alpha[keep],
            rest_length=rest[keep], solver=self.solver,
            damping=self.damping if self.particle_damping is None else self.particle_damping,
            iterations=self.iterations, strain_limit=self.strain_limit,
            bending_compliance=self.particle_bend_compliance, radius=self.particle_radius,
            self_collision=self.self_collision, self_friction=self.self_friction,
            contact_push_speed=self.contact_push_speed, contact_margin=self.contact_margin,
            sleep_speed=self.sleep_speed, integrator=self.integrator, rod=self.rod,
            _decomposition=self.decomposition if same_edges else None)

def _per_edge(value: Any, name: str, edge_count: int) -> np.ndarray:
    """A scalar or (edge_count,) array of finite values >= 0, as (edge_count,) float64."""
    array = as_float_array(value, name, np.shape(value), nonnegative=True)
    if array.ndim == 0:
        return np.full(edge_count, float(array))
    if array.shape != (edge_count,):
        raise ValueError(f"{name}: expected a scalar or shape ({edge_count},), got {array.shape}")
    return array
