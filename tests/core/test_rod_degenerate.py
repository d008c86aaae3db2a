"""A rod with a segment of no length (two points on one spot: what adding points to a curve
and resetting gives, or a modeller's doubled vertex): its frame and twist are undefined there,
so the rod is refused with a message naming the points (a plain rope takes it), and nothing
about a rod's shape may hang a frame (the auto substeps once asked for millions) or put a NaN
into the rod's tables."""

from __future__ import annotations

import math

import numpy as np
import pytest

from xpbd_addon.core import Model, Rod, step
from xpbd_addon.core.material import RopeMaterial, rope_parameters
from xpbd_addon.core.rod import MIN_AUTO_SUBSTEP, least_substeps

from .test_rod import _curl_shape


def _doubled_end(points=20, gap=0.0, *, plastic=False, rod=True):
    """A curl drawn out of its plane, its last point doubled ``gap`` [m] from the one before
    (0: on the same spot), twisting; with plasticity or without (yield inf)."""
    x = _curl_shape(points, 4.0)
    x = np.vstack([x, x[-1] + [gap, 0.0, 0.0]])
    edges = [(i, i + 1) for i in range(len(x) - 1)]
    inv_mass, compliance, bending = rope_parameters(x, edges, RopeMaterial(0.1, None, 0.05))
    inv_mass[0] = 0.0
    spec = Rod(twist_stiffness=0.01, plastic_yield=2.0 if plastic else np.inf,
               plastic_creep=10.0 if plastic else 0.0)
    return Model(x, edges, inv_mass, compliance, bending_compliance=bending, radius=0.01,
                 rod=spec if rod else None)


@pytest.mark.parametrize("gap", [0.0, 1e-9])
def test_a_rod_with_two_points_on_one_spot_is_refused_by_name(gap):
    with pytest.raises(ValueError, match=r"rod: the segment from particle 19 to 20 has"):
        _doubled_end(gap=gap)
    model = _doubled_end(gap=gap, rod=False)  # a plain rope takes it
    state = model.state()
    step(model, state, 1.0 / 24.0, 10)
    assert np.isfinite(state.x).all()


@pytest.mark.parametrize("plastic", [False, True])
def test_a_rods_tables_hold_no_nan(plastic):
    layout = _doubled_end(gap=0.01, plastic=plastic).rod_layout
    for table in (layout.plastic_yield, layout.twist_k, layout.inertia, layout.rest):
        assert not np.isnan(table).any()


def test_the_auto_substeps_are_bounded():
    """Whatever the shape a rod is brought into (here its last segment a nanometre long, a
    point pushed onto the one before), a frame asks for at most dt / MIN_AUTO_SUBSTEP
    substeps, not millions."""
    model = _doubled_end(gap=0.01)
    x = model.particle_rest_x.copy()
    x[-1] = x[-2] + [1e-9, 1e-9, 0.0]
    dt = 1.0 / 24.0
    cap = math.ceil(dt / MIN_AUTO_SUBSTEP)
    assert least_substeps(model.rod_layout, x, model.particle_inv_mass, dt) == cap
    # its rest shape (a 1 cm segment at the end) asks for what it needs, below the cap
    assert least_substeps(model.rod_layout, model.particle_rest_x, model.particle_inv_mass,
                          dt) < cap / 2
