"""Readouts: what the numbers a user types do to the rope on the frame shown, for
the panel's Readouts: its length against its rest length, the largest stretch and tension
and where, kinetic and potential energy, what the frame cost and whether it came from the
cache.

Cost. The frame engine only notes what it showed (``note``: a reference to the cached frame,
whose segment tensions it keeps anyway, ``sim.Frame.tension``) and how long the frame took;
the numbers are computed when the panel draws (``readout``, numpy over the rope's points,
once per shown frame), so playback without the panel open pays nothing for them and with it
one computation per frame (``tests/blender/test_readouts.py`` measures both).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Readout:
    """The numbers of one shown frame of a rope (world space)."""

    frame: int
    """The frame shown [frame]"""
    length: float
    """The rope's length [m]: the sum of its segments' lengths (torn ones left out)"""
    rest_length: float
    """The sum of the same segments' rest lengths [m]"""
    stretch: float
    """The largest stretch of a segment over its rest length (0.01 = 1 %; segments of rest
    length 0 left out)"""
    stretch_segment: int
    """Which segment (index into the rope's edges), -1 if none"""
    tension: float
    """The largest segment tension [N] (NaN where the solver keeps none: the sweep)"""
    tension_segment: int
    """Which segment, -1 if none"""
    kinetic: float
    """Kinetic energy of the free points [J]"""
    gravity_energy: float
    """Gravitational potential energy of the free points [J], zero at the world origin"""
    elastic: float
    """Elastic energy of the segments [J]: the sum of alpha T^2 / 2 (0 where rigid)"""
    ms: float
    """Wall time [ms] the frame engine spent simulating this frame (its run's step)"""
    cached: bool
    """The frame was shown from the cache (simulated before), not simulated just now"""

    @property
    def potential(self) -> float:
        """Potential energy [J]: gravitational + elastic."""
        return self.gravity_energy + self.elastic


@dataclass
class Shown:
    """What the frame engine last showed of a rope (``note``)."""

    rope: weakref.ref
    """The ``sim.RopeSim`` it belongs to, weakly (a simulation dropped or replaced is not
    kept alive, with its cache, by its readout)"""
    state: Any
    """The ``sim.Frame`` shown"""
    frame: int
    """Its frame number [frame]"""
    cached: bool
    """It came from the cache"""
    readout: Readout | None = None
    """Computed on the first ``readout`` call, then kept"""


SHOWN: dict[int, Shown] = {}
"""The last frame shown of each rope object, by session_uid (``note``): one frame's arrays
each; emptied with the simulations (``clear``, a new file)."""


def note(members: list, states: list, frame: int, cached: bool) -> None:
    """Keep what was just shown of each member (``(obj, rope)``, its ``sim.Frame``)."""
    for (obj, rope), state in zip(members, states, strict=True):
        SHOWN[obj.session_uid] = Shown(weakref.ref(rope), state, frame, cached)


def clear() -> None:
    """Forget every readout (new file, add-on off)."""
    SHOWN.clear()


def readout(obj: Any, rope: Any) -> Readout | None:
    """The readout of the frame last shown of ``obj``, simulated by ``rope`` (its live
    ``sim.RopeSim``), or None (nothing shown yet, or by another simulation)."""
    shown = SHOWN.get(obj.session_uid)
    if shown is None or shown.rope() is not rope:
        return None
    if shown.readout is None:
        shown.readout = compute(rope, shown.state, shown.frame, shown.cached)
    return shown.readout


def _model_arrays(rope: Any) -> tuple[np.ndarray, np.ndarray]:
    """Rest length [m] and compliance [m/N] of every segment of the rope's layout, from its
    current Model where that has them all, else from its start Model (segments torn since)."""
    edges = len(rope.layout.edges)
    model = rope.model if rope.model.edge_count == edges else rope.start_model
    return model.edge_rest_length, model.edge_compliance


def compute(rope: Any, state: Any, frame: int, cached: bool) -> Readout:
    """The readout of ``state`` (a ``sim.Frame`` of ``rope``, a ``sim.RopeSim``)."""
    x, v = state.x, state.v
    edges = np.asarray(rope.layout.edges, dtype=np.int64).reshape(-1, 2)
    rest, alpha = _model_arrays(rope)
    keep = np.ones(len(edges), dtype=bool) if state.torn is None else ~state.torn
    lengths = np.linalg.norm(x[edges[:, 0]] - x[edges[:, 1]], axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        stretch = np.where(keep & (rest > 0.0), (lengths - rest) / rest, -np.inf)
    k_stretch = int(np.argmax(stretch)) if len(stretch) else -1
    tension = state.tension
    if tension is None:
        k_tension, largest, elastic = -1, float("nan"), float("nan")
    else:
        loads = np.where(keep, tension, -np.inf)
        k_tension = int(np.argmax(loads)) if len(loads) else -1
        largest = float(loads[k_tension]) if k_tension >= 0 else 0.0
        elastic = float(0.5 * np.sum(np.where(keep, alpha * tension * tension, 0.0)))
    inv_mass = rope.model.particle_inv_mass
    mass = np.divide(1.0, inv_mass, out=np.zeros_like(inv_mass), where=inv_mass > 0.0)
    g = np.asarray(rope.gravity, dtype=np.float64)
    return Readout(
        frame=frame,
        length=float(lengths[keep].sum()),
        rest_length=float(rest[keep].sum()),
        stretch=float(stretch[k_stretch]) if k_stretch >= 0 and np.isfinite(
            stretch[k_stretch]) else 0.0,
        stretch_segment=k_stretch if k_stretch >= 0 and np.isfinite(stretch[k_stretch])
        else -1,
        tension=largest,
        tension_segment=k_tension,
        kinetic=float(0.5 * np.sum(mass * np.einsum("ij,ij->i", v, v))),
        gravity_energy=float(-np.sum(mass * (x @ g))),
        elastic=elastic,
        ms=float(state.ms),
        cached=cached,
    )


def lines(r: Readout) -> list[str]:
    """The panel's lines for a readout."""
    change = (r.length / r.rest_length - 1.0) if r.rest_length > 0.0 else 0.0
    out = [f"Length {r.length:.4g} m, rest {r.rest_length:.4g} m ({100 * change:+.2f} %)"]
    if r.stretch_segment >= 0:
        out.append(f"Largest stretch {100 * r.stretch:+.3f} % at segment {r.stretch_segment}")
    if np.isnan(r.tension):
        out.append("Tension: not kept by the Gauss-Seidel solver")
    elif r.tension_segment >= 0:
        out.append(f"Largest tension {r.tension:.4g} N at segment {r.tension_segment}")
    out.append(f"Kinetic energy {r.kinetic:.4g} J")
    elastic = "" if np.isnan(r.elastic) else f" + elastic {r.elastic:.3g} J"
    out.append(f"Potential energy: gravity {r.gravity_energy:.4g} J (0 at z = 0){elastic}")
    source = "from the cache" if r.cached else "simulated"
    out.append(f"Frame {r.frame}: {source}, {r.ms:.2f} ms to simulate")
    return out
