"""Rods: ropes that keep the shape they were modelled in and carry an orientation.

A plain rope's bending pulls every point towards straight. A ``Rod`` (``Model(..., rod=)``)
gives each segment a material frame and measures bending against the modelled shape's own
bend, in the frame of each point, so a curl stays a curl and turns with the rope; the frames
twist with a torsional stiffness GJ; a pinned end holds its frame's roll and can turn it
(``step(..., pin_turns=)``), and the turn travels down the rope; and bending or twisting
beyond a yield curvature becomes the rod's new rest shape (plasticity).

The kernels and their equations are in ``solve.kernels_rod``; the frames are solved after
the positions every substep, one substep behind (docs/physics.md, Rods). What a rod carries
from frame to frame (the frames, their twist rates, the rest shape plasticity has changed)
is ``RodState``, kept on ``State.rod``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from . import groups

POISSON_FACTOR = 1.3
"""1 + nu: EI / GJ of a solid round rod of an isotropic material with Poisson's ratio 0.3"""

MAX_TWIST_STIFFNESS = 1e12
"""[N m^2] The largest GJ a rod twists with: a greater one, given or derived from a tiny
bending compliance, acts as this one. The twist is rigid long before (a rope's GJ is about
1e-3, a 2 cm steel bar's 1e3; a bent rod moves the same to every printed digit from 1e7
on), and from about 1e24 the twist solve overflowed into NaN."""

MIN_TWIST_RADIUS = 1e-3
"""[m] The least radius a segment's rotational inertia is computed with (a rope of radius 0
still turns with a finite twist rate)."""

SHORT_SEGMENT = 1e-4
"""A rod refuses a segment shorter than this fraction of its rope's longest (two points
modelled on one spot): its frame and twist are undefined there"""

MIN_AUTO_SUBSTEP = 1e-4
"""[s] The shortest substep ``least_substeps`` asks for (10,000 substeps a second)"""

TWISTING_SUBSTEP = 1.0 / 240.0
"""[s] The longest substep of a rod whose twist moves (a finite twist stiffness). A soft rod
whipped into a sharp kink within one substep can gain energy there, which the bounds taken at
the frame's start cannot see. Released curls set moving at random (``bench rod_energy``)
gained in 4 of 332 cases at 3 substeps at 24 fps (1/72 s), 2 of those 4 still at 1/120 s, and
8 of 1,537 other cases drawn at 3 and 5 substeps; at 1/240 s none of them (docs/physics.md).
Every rod with moving twist therefore takes at least 10 substeps a frame at 24 fps."""


def _per_particle(value: Any, name: str, count: int, *, allow_inf: bool = False) -> np.ndarray:
    array = np.asarray(value, dtype=np.float64)
    if array.ndim == 0:
        array = np.full(count, float(array))
    if array.shape != (count,):
        raise ValueError(f"{name}: expected a scalar or shape ({count},), got {array.shape}")
    if np.isnan(array).any() or (not allow_inf and np.isinf(array).any()):
        raise ValueError(f"{name}: expected finite values")
    if (array < 0.0).any():
        raise ValueError(f"{name}: expected values >= 0")
    return array


@dataclass(frozen=True)
class Rod:
    """How a Model's ropes behave as rods (each argument a scalar or one value per particle).

    Args:
        roll: the modelled roll of the frame at each point [rad] (a curve's tilt): the
            frame's normal is the rope's twist-free normal turned by it. 0 by default.
        twist_stiffness: GJ [N m^2] at each point, with twist dynamics (a turn at a held end
            travels down the rod; the twist pulls on the centreline where the rod is bent out
            of its plane). None (default), or nan at a point: that of a solid round rod of
            the bending stiffness, EI / (1 + nu) with Poisson's ratio nu = 0.3, where the
            rope bends. ``inf``, and None where nothing bends: no twist dynamics, the frames
            are only carried along with their segments.
        plastic_yield: the curvature or twist rate [1/m] beyond the rest shape's at which the
            rod yields (its rest shape follows the excess); ``inf`` (default) never. Per
            point it is an angle, this times the point's length.
        plastic_creep: how fast a yielded point's rest shape follows [1/s].
        bend_rest: "modelled" (default): the rest bend is the shape of ``Model``'s rest
            positions; "straight": it is straight (the frames and twist still act); or a
            boolean mask (N,) of the points whose rest bend is modelled.
    """

    roll: Any = 0.0
    twist_stiffness: Any = None
    plastic_yield: Any = np.inf
    plastic_creep: Any = 0.0
    bend_rest: str = "modelled"


@dataclass(frozen=True)
class RodLayout:
    """What the rod kernels need of a Model, made once with it (``rod_layout``)."""

    particles: np.ndarray
    """int64 (P,) every rope's particles in walking order"""
    starts: np.ndarray
    """int64 (R + 1,) rope r is particles[starts[r]:starts[r + 1]]"""
    rest: np.ndarray
    """(P,) [m] rest length of the segment from each position to the next (0 at a rope end)"""
    inertia: np.ndarray
    """(P,) [kg m^2] each segment's rotational inertia about its axis, m r^2 / 2"""
    twist_k: np.ndarray
    """(P,) [N m] twist stiffness GJ / l of each interior point; inf: held"""
    bend_compliance: np.ndarray
    """(N,) [1/(N m)] the Model's bending compliance (0 where it has none)"""
    plastic_yield: np.ndarray
    """(P,) [rad] the bend or twist angle beyond the rest shape at which each interior
    point yields (the curvature times the point's length); inf: never"""
    plastic_creep: np.ndarray
    """(N,) [1/s]"""
    end_segment: np.ndarray
    """int64 (N,) at each rope end's particle, where its end segment's values sit; -1
    elsewhere"""
    rest_state: RodState
    """The frames and rest shape at the Model's rest positions"""


@dataclass(slots=True)
class RodState:
    """What a rod carries from frame to frame (indexed by particle; a segment's values sit
    at its first particle in walking order)."""

    normal: np.ndarray
    """(N, 3) unit normal m1 of each segment's material frame"""
    twist_rate: np.ndarray
    """(N,) [rad/s] how fast each segment turns about its axis"""
    bend_rest: np.ndarray
    """(N, 3) each point's rest bend in its own frame (plasticity changes it)"""
    twist_rest: np.ndarray
    """(N,) [rad] each point's rest twist (plasticity changes it)"""

    def copy(self) -> RodState:
        """An independent copy."""
        return RodState(self.normal.copy(), self.twist_rate.copy(), self.bend_rest.copy(),
                        self.twist_rest.copy())

    def part(self, start: int, stop: int) -> RodState:
        """The rows of particles start .. stop - 1 (copies): one rope of a joint Model."""
        return RodState(self.normal[start:stop].copy(), self.twist_rate[start:stop].copy(),
                        self.bend_rest[start:stop].copy(), self.twist_rest[start:stop].copy())

    @classmethod
    def joined(cls, parts: list[RodState]) -> RodState:
        """The ``parts`` side by side (a joint Model of ropes, in their order)."""
        return cls(np.concatenate([p.normal for p in parts]),
                   np.concatenate([p.twist_rate for p in parts]),
                   np.concatenate([p.bend_rest for p in parts]),
                   np.concatenate([p.twist_rest for p in parts]))


def rod_layout(rod: Rod, rest_x: np.ndarray, inv_mass: np.ndarray, radius: np.ndarray,
               bend_compliance: np.ndarray | None, chains: list[np.ndarray],
               chain_edges: list[np.ndarray], edge_rest: np.ndarray) -> RodLayout:
    """The RodLayout of a Model (its rest positions [m], inverse masses, radii [m], bending
    compliance, chains and rest lengths). Raises ValueError naming the argument."""
    from .solve import kernels_rod as k  # numba only where a rod is made

    count = len(rest_x)
    roll = np.asarray(rod.roll, dtype=np.float64)
    roll = np.full(count, float(roll)) if roll.ndim == 0 else roll
    if roll.shape != (count,) or not np.isfinite(roll).all():
        raise ValueError(f"rod.roll: expected a finite scalar or shape ({count},)")
    # twist_k per length below: GJ / l where given, 1 / ((1 + nu) alpha_b) where derived
    # (GJ = EI / (1 + nu), EI = l / alpha_b), inf (held) where derived and nothing bends
    derived = np.full(count, np.inf)
    if bend_compliance is not None:
        bends = bend_compliance > 0.0
        derived = np.where(bends, 1.0 / (POISSON_FACTOR * np.where(bends, bend_compliance,
                                                                     1.0)), np.inf)
    given = np.full(count, np.nan)
    if rod.twist_stiffness is not None:
        given = np.asarray(rod.twist_stiffness, dtype=np.float64)
        given = np.full(count, float(given)) if given.ndim == 0 else given
        if given.shape != (count,) or (given < 0.0).any():
            raise ValueError(f"rod.twist_stiffness: expected values >= 0 (nan: derived), a "
                             f"scalar or shape ({count},)")
    plastic_yield = _per_particle(rod.plastic_yield, "rod.plastic_yield", count,
                                  allow_inf=True)
    creep_rate = _per_particle(rod.plastic_creep, "rod.plastic_creep", count)
    if isinstance(rod.bend_rest, str):
        if rod.bend_rest not in ("modelled", "straight"):
            raise ValueError(f"rod.bend_rest: expected 'modelled' or 'straight', "
                             f"got {rod.bend_rest!r}")
        modelled = np.full(count, rod.bend_rest == "modelled")
    else:
        modelled = np.asarray(rod.bend_rest)
        if modelled.shape != (count,) or modelled.dtype != np.bool_:
            raise ValueError(f"rod.bend_rest: expected 'modelled', 'straight' or a boolean "
                             f"mask of shape ({count},)")
    ropes = list(chains)
    particles = (np.concatenate(ropes) if ropes else np.zeros(0)).astype(np.int64)
    starts = np.concatenate([[0], np.cumsum([len(c) for c in ropes])]).astype(np.int64)
    rest = np.zeros(len(particles))
    inertia = np.ones(len(particles))
    twist_k = np.full(len(particles), np.inf)
    plastic_angle = np.full(len(particles), np.inf)
    mass = np.divide(1.0, inv_mass, out=np.full(count, np.inf), where=inv_mass > 0.0)
    for r, edges in enumerate(chain_edges):
        first = int(starts[r])
        n = len(edges)
        if n == 0:
            continue
        lengths = edge_rest[edges]
        short = np.flatnonzero(lengths <= SHORT_SEGMENT * lengths.max())
        if len(short):
            raise ValueError(
                f"rod: the segment from particle {int(ropes[r][short[0]])} to "
                f"{int(ropes[r][short[0] + 1])} has (almost) no length: a rod's frame and twist "
                "are undefined there (move one of the two points, or make it a plain rope)")
        rest[first:first + n] = lengths
        chain = ropes[r]
        a, b = chain[:-1], chain[1:]
        segment_mass = np.where(np.isfinite(mass[a]) & np.isfinite(mass[b]),
                                0.5 * (mass[a] + mass[b]),
                                np.where(np.isfinite(mass[a]), mass[a], mass[b]))
        segment_mass = np.where(np.isfinite(segment_mass), segment_mass, 1.0)
        r_seg = np.maximum(0.5 * (radius[a] + radius[b]), MIN_TWIST_RADIUS)
        inertia[first:first + n] = 0.5 * segment_mass * r_seg * r_seg
        if n > 1:
            mean = 0.5 * (lengths[:-1] + lengths[1:])
            yield_curvature = plastic_yield[chain[1:-1]]
            plastic_angle[first + 1:first + n] = np.where(np.isinf(yield_curvature), np.inf,
                                                          yield_curvature * mean)
            length = np.where(mean > 0.0, mean, np.inf)
            gj = given[chain[1:-1]]
            # finite GJ, given or derived, at most MAX_TWIST_STIFFNESS (inf and nan stay)
            per_length = np.where(np.isinf(gj), np.inf,
                                  np.minimum(gj, MAX_TWIST_STIFFNESS) / length)
            from_bending = derived[chain[1:-1]]
            from_bending = np.where(np.isinf(from_bending), np.inf,
                                    np.minimum(from_bending, MAX_TWIST_STIFFNESS / length))
            twist_k[first + 1:first + n] = np.where(np.isnan(gj), from_bending, per_length)
    # the rest frames: the first segment's normal (world z off its tangent, x for a vertical
    # one) carried along the rest shape, each segment turned by its roll
    normal = np.zeros((count, 3))
    twist_rest = np.zeros(count)
    for chain in ropes:
        if len(chain) < 2:
            continue
        t = rest_x[chain[1]] - rest_x[chain[0]]
        t = t / max(np.linalg.norm(t), 1e-300)
        up = np.array([0.0, 0.0, 1.0]) if abs(t[2]) < 0.9 else np.array([1.0, 0.0, 0.0])
        n = up - up.dot(t) * t
        normal[chain[0]] = n / np.linalg.norm(n)
        segment_roll = 0.5 * (roll[chain[:-1]] + roll[chain[1:]])
        twist_rest[chain[1:-1]] = np.diff(segment_roll)
        normal[chain[0]] = k._turn(t, normal[chain[0]], segment_roll[0])
    for r in range(len(ropes)):
        first, last = int(starts[r]), int(starts[r + 1])
        if last - first >= 2:
            k.held_frames(rest_x, particles, first, last, first, normal, twist_rest)
    bend_rest = np.zeros((count, 3))
    if modelled.any():
        k.bend_local(rest_x, particles, starts, rest, normal, bend_rest)
        bend_rest[~modelled] = 0.0
    bend = np.zeros(count) if bend_compliance is None else bend_compliance
    end_segment = np.full(count, -1, dtype=np.int64)
    for chain in ropes:
        if len(chain) >= 2:
            end_segment[chain[0]] = chain[0]
            end_segment[chain[-1]] = chain[-2]
    state = RodState(normal, np.zeros(count), bend_rest, twist_rest)
    return RodLayout(particles, starts, rest, inertia, twist_k, np.ascontiguousarray(bend),
                     plastic_angle, creep_rate, end_segment, state)


def as_pin_turns(value: Any, count: int) -> np.ndarray | None:
    """``step``'s ``pin_turns``: (N,) finite or NaN, or None."""
    if value is None:
        return None
    array = np.asarray(value, dtype=np.float64)
    if array.shape != (count,) or np.isinf(array).any():
        raise ValueError(f"pin_turns: expected shape ({count},) of finite values or nan, "
                         f"got shape {array.shape}")
    return array


class RodFrame:
    """One frame of a rod's stepping (``step`` makes it when the Model has a rod): which
    pinned ends hold their roll and by how much they turn each substep, and scratch."""

    __slots__ = ("layout", "state", "held", "turn", "targets", "scratch", "decay")

    def __init__(self, layout: RodLayout, state: RodState, pinned: np.ndarray,
                 pin_turns: np.ndarray | None, substeps: int, decay: float) -> None:
        count = len(state.normal)
        self.layout = layout
        self.state = state
        self.held = np.zeros(count, dtype=np.bool_)
        """(N,) the pinned rope ends whose roll is held (``pin_turns`` given, not nan)"""
        self.turn = np.zeros(count)
        """(N,) [rad] how far each held end turns in a substep"""
        if pin_turns is not None:
            ends = np.flatnonzero((layout.end_segment >= 0) & pinned & ~np.isnan(pin_turns))
            self.held[ends] = True
            self.turn[ends] = pin_turns[ends] / substeps
        self.targets = np.zeros((count, 3))
        """(N, 3) the bending targets b_p of the substep"""
        self.scratch = np.zeros((7, len(layout.particles)))
        self.decay = decay
        """exp(-damping h): how much of its twist rate a segment keeps per substep"""

    def targets_into(self, x: np.ndarray, lane_particles: np.ndarray, lane_layout: Any) -> None:
        """The bending targets at positions ``x`` (N, 3) [m] into the lane buffer's
        ``BEND_TARGET`` rows (``topology``), held over the substep's solve."""
        from .layout import topology
        from .solve import kernels_rod as k

        layout = self.layout
        k.bend_targets(x, layout.particles, layout.starts, self.state.normal,
                       self.state.bend_rest, self.targets)
        lanes = lane_layout.lanes
        base = lane_layout.particle_base
        chosen = self.targets[lane_layout.particles]
        for c in range(3):
            lane_particles[base + (topology.PARTICLE_BEND_TARGET + c) * lanes] = chosen[:, c]

    def add_frame_pull(self, x: np.ndarray, inv_mass: np.ndarray, out: np.ndarray) -> None:
        """Add the rod's pull on the centreline through its frames (the twist's, and the
        bending target's turn) at positions ``x`` [m] to the accelerations ``out`` (N, 3)
        [m/s^2] (``kernels_rod_pull.add_frame_accelerations``)."""
        from .solve import kernels_rod_pull as k

        layout, state = self.layout, self.state
        k.add_frame_accelerations(x, layout.particles, layout.starts, layout.rest,
                                  state.normal, state.bend_rest, state.twist_rest,
                                  layout.bend_compliance, layout.twist_k, inv_mass, out)

    def _follow(self, frames: RodState, x_start: np.ndarray, x: np.ndarray, h: float) -> None:
        from .solve import kernels_rod as k

        k.follow(x_start, x, *_groups(self.layout, frames, self.state), self.held, self.turn,
                 h, self.decay, self.scratch)

    def follow(self, x_start: np.ndarray, x: np.ndarray, h: float) -> None:
        """The frames after a substep of h [s] from ``x_start`` to ``x`` (N, 3) [m], then
        plasticity."""
        from .solve import kernels_rod as k

        layout, state = self.layout, self.state
        self._follow(state, x_start, x, h)
        if np.isfinite(layout.plastic_yield).any():
            creep = 1.0 - np.exp(-layout.plastic_creep * h)
            k.yield_plastic(x, layout.particles, layout.starts, layout.rest, state.normal,
                            state.bend_rest, state.twist_rest, layout.plastic_yield, creep)


TWIST_PULL_LIMIT = 2.5
"""The largest h omega at which the twist's pull, taken explicitly, is stable (measured on a
coil: ``least_substeps``)"""

TURN_PULL_LIMIT = 4.0
"""The largest h omega ``least_substeps`` allows the bending target's turn pull (unstable
from 5.1 in the curls measured, docs/physics.md)"""


def least_substeps(layout: RodLayout, x: np.ndarray, inv_mass: np.ndarray, dt: float, *,
                   bend_rest: np.ndarray | None = None) -> int:
    """The fewest substeps of a frame of ``dt`` [s] at which the rod's pull on the centreline
    through its frames (taken explicitly, ``kernels_rod_pull.add_frame_accelerations``) is
    stable at positions ``x`` [m] (N, 3), the rest bends ``bend_rest`` (N, 3) in the frames
    (the rod's state; None: the layout's rest shape):

    - the twist's pull: h omega <= ``TWIST_PULL_LIMIT``, omega^2 the largest
      f_p k_p |grad phi_p|_w^2 of any point (f_p ``kink_fade``), |kb|^2 (w_a / (4 l_a^2) +
      w_p (1/(2 l_a) - 1/(2 l_p))^2 + w_b / (4 l_p^2)). Measured on a coil (5 cm radius,
      15 degrees a point, EI 0.1 N m^2): unstable at 20 substeps, stable at 40, where this
      asks for 44;
    - the bending target's turn: h omega <= ``TURN_PULL_LIMIT``, omega^2 the largest
      |b_p|^2 (w_a / L_a^2 + w_p (1/L_a + 1/L_p)^2 + w_b / L_p^2) / (4 alpha_p), with b_p
      the rest bend and L the rest lengths. The pull's Jacobian has a spectral radius of
      0.26-0.29 times that without the 1/4 (finite differences, 60 curls); released curls
      were unstable from h omega = 5.1 (docs/physics.md, Rods);
    - a moving twist (a finite twist stiffness anywhere): h <= ``TWISTING_SUBSTEP``.

    1 where none of these asks for more; at most dt / ``MIN_AUTO_SUBSTEP`` (beyond, an
    unstable pull is stopped by the caller's checks rather than a frame taking forever)."""
    wanted = max(_twist_pull_omega(layout, x, inv_mass) / TWIST_PULL_LIMIT,
                 _turn_pull_omega(layout, inv_mass, bend_rest) / TURN_PULL_LIMIT) * dt
    if np.isfinite(layout.twist_k).any():
        wanted = max(wanted, dt / TWISTING_SUBSTEP)
    if not wanted < dt / MIN_AUTO_SUBSTEP:  # (NaN too)
        return max(1, int(np.ceil(dt / MIN_AUTO_SUBSTEP)))
    return max(1, int(np.ceil(wanted)))


def kink_fade(cosine: np.ndarray) -> np.ndarray:
    """``kernels_rod.kink_fade`` of each kink's ``cosine``."""
    from .solve.kernels_rod import KINK_FADE_FROM

    u = np.clip((KINK_FADE_FROM - cosine) / (1.0 + KINK_FADE_FROM), 0.0, 1.0)
    return (1.0 - u * u) ** 2


def _interior(layout: RodLayout, where: np.ndarray) -> np.ndarray:
    """The rope positions k that are a point between two segments and where ``where`` (P,)."""
    where = where.copy()
    where[layout.starts[:-1]] = False  # a rope's first position is no point between two
    where[np.maximum(layout.starts[1:] - 1, 0)] = False
    return np.flatnonzero(where)


def _twist_pull_omega(layout: RodLayout, x: np.ndarray, inv_mass: np.ndarray) -> float:
    """[1/s] The twist pull's omega at positions ``x`` (``least_substeps``)."""
    k = _interior(layout, np.isfinite(layout.twist_k))
    if not len(k):
        return 0.0
    a, p, b = layout.particles[k - 1], layout.particles[k], layout.particles[k + 1]
    ea, ep = x[p] - x[a], x[b] - x[p]
    la, lp = np.linalg.norm(ea, axis=1), np.linalg.norm(ep, axis=1)
    den = la * lp + (ea * ep).sum(axis=1)
    ok = (la > 0.0) & (lp > 0.0) & (den > 1e-12 * la * lp)
    kb2 = np.zeros(len(k))
    kb2[ok] = (4.0 * (np.cross(ea[ok], ep[ok]) ** 2).sum(axis=1) / den[ok] ** 2)
    cosine = np.divide((ea * ep).sum(axis=1), la * lp, out=np.ones_like(la), where=ok)
    kb2 *= kink_fade(cosine)
    ga = np.divide(0.5, la, out=np.zeros_like(la), where=la > 0.0)
    gp = np.divide(0.5, lp, out=np.zeros_like(lp), where=lp > 0.0)
    weight = inv_mass[a] * ga * ga + inv_mass[p] * (ga - gp) ** 2 + inv_mass[b] * gp * gp
    return float(np.sqrt((layout.twist_k[k] * kb2 * weight).max()))


def _turn_pull_omega(layout: RodLayout, inv_mass: np.ndarray,
                     bend_rest: np.ndarray | None) -> float:
    """[1/s] The bending target's turn pull's omega (``least_substeps``)."""
    if bend_rest is None:
        bend_rest = layout.rest_state.bend_rest
    alpha = layout.bend_compliance[layout.particles]
    k = _interior(layout, alpha > 0.0)
    if not len(k):
        return 0.0
    a, p, b = layout.particles[k - 1], layout.particles[k], layout.particles[k + 1]
    inv_before, inv_after = 1.0 / layout.rest[k - 1], 1.0 / layout.rest[k]
    weight = (inv_mass[a] * inv_before ** 2 + inv_mass[p] * (inv_before + inv_after) ** 2
              + inv_mass[b] * inv_after ** 2)
    bend2 = (bend_rest[p] ** 2).sum(axis=1)
    return float(np.sqrt((bend2 * weight / (4.0 * alpha[k])).max()))


def joined_states(layout: RodLayout | None, parts: list[RodState | None],
                  offsets: Any) -> RodState | None:
    """The rod states ``parts`` of ropes side by side in a joint Model (rope k's particles
    from ``offsets[k]`` to ``offsets[k + 1]``), copied; a rope without one starts from its
    rest frames. None where the joint Model is no rod (``layout`` None) or no rope has one
    yet (``step`` then starts them all from the rest shape)."""
    if layout is None or all(part is None for part in parts):
        return None
    return RodState.joined([
        part.copy() if part is not None else layout.rest_state.part(offsets[k], offsets[k + 1])
        for k, part in enumerate(parts)])


def _groups(layout: RodLayout, frames: RodState, rest_of: RodState) -> tuple:
    """The kernels' argument groups (``core.groups``) of ``layout``: its ropes, its twist,
    and the frames of ``frames`` with the rest shape of ``rest_of``."""
    return (groups.rod_ropes(layout.particles, layout.starts, layout.rest),
            groups.rod_twist(layout.inertia, layout.twist_k, layout.bend_compliance),
            groups.rod_frames(frames.normal, frames.twist_rate, rest_of.bend_rest,
                              rest_of.twist_rest))


def fresh_state(layout: RodLayout, rest_x: np.ndarray, x: np.ndarray) -> RodState:
    """A rod state for a State that has none, at positions ``x`` (N, 3) [m]: the rest
    frames carried from the rest shape to ``x``, at rest."""
    from .solve import kernels_rod as k

    state = layout.rest_state.copy()
    if not np.array_equal(rest_x, x):
        k.follow(rest_x, x, *_groups(layout, state, state), np.zeros(len(x), dtype=np.bool_),
                 np.zeros(len(x)), 1.0, 0.0, np.zeros((7, len(layout.particles))))
    return state


def point_normals(x: np.ndarray, m1: np.ndarray, particles: np.ndarray,
                  starts: np.ndarray) -> np.ndarray:
    """(N, 3) the material normal at every particle of positions ``x`` [m] with segment
    normals ``m1`` (``RodState.normal``; rope r's walk is particles[starts[r]:starts[r+1]]):
    an inner point's is its frame's (the mean of its segments' normals carried to its
    tangent), an end's its end segment's. Zero where no rope passes."""
    from .solve import kernels_rod as k

    out = np.zeros_like(x)
    k.point_normals(x, particles, starts, m1, out)
    return out


def rod_energies(layout: RodLayout, state: RodState, x: np.ndarray) -> tuple[float, float]:
    """(E_b, E_t) [J] of a rod at positions ``x`` (N, 3) [m] (``kernels_rod.rod_energy``)."""
    from .solve import kernels_rod as k

    return k.rod_energy(x, layout.particles, layout.starts, layout.rest, state.normal,
                        state.bend_rest, state.twist_rest, layout.bend_compliance,
                        layout.twist_k)
