"""Compliance alpha is a physical number: it, not the substep count, sets the stiffness.

Plain PBD (Müller et al. 2007) has no such number. Its stiffness parameter k in [0, 1] scales
each projection, and the effective stiffness after n iterations is 1 - (1 - k)^n: the same rope
is limp at 5 iterations and board-stiff at 50, and changes again with the timestep. XPBD
(Macklin et al. 2016) divides the compliance by h^2 (alpha_tilde = alpha / h^2), which cancels
the timestep out of the update: a constraint under tension T settles at a stretch of alpha * T
whatever the substep count S. These tests hang a chain (top pinned, 1 kg particles), let it
settle, and check exactly that: each segment stretched by alpha * T (T the weight below it),
the same for S = 10, 20 and 40 at dt = 1/24 s, and proportional to alpha at fixed S.
"""

import numpy as np
import pytest

from xpbd_addon.core import step

from .ropes import hanging_chain

G = 9.81
DT = 1.0 / 24.0
COUNT = 12
SEGMENT = 0.5


def settled_stretch(compliance: float, substeps: int) -> np.ndarray:
    """Stretch of each segment [m] after 20 s of damped settling."""
    model = hanging_chain(COUNT, SEGMENT, compliance, damping=2.0)
    state = model.state()
    for _ in range(int(20 / DT)):
        step(model, state, DT, substeps, gravity=(0.0, 0.0, -G))
    assert np.abs(state.v).max() < 1e-6, "the chain has not come to rest"
    return np.linalg.norm(np.diff(state.x, axis=0), axis=1) - SEGMENT


def weight_below(count: int) -> np.ndarray:
    """Tension [N] in each segment from the top: the weight of the particles below it."""
    return G * np.arange(count - 1, 0, -1, dtype=float)


@pytest.mark.parametrize("substeps", [10, 20, 40])
def test_each_segment_stretches_by_alpha_times_tension(substeps):
    alpha = 1e-3
    stretch = settled_stretch(alpha, substeps)
    np.testing.assert_allclose(stretch, alpha * weight_below(COUNT), rtol=0.02)


def test_stretch_hardly_depends_on_substeps():
    coarse = settled_stretch(1e-3, 10)
    fine = settled_stretch(1e-3, 40)
    # Quadrupling the substeps changes the total stretch by under 2 % (PBD: a different rope).
    assert abs(coarse.sum() / fine.sum() - 1.0) < 0.02


def test_stretch_scales_with_alpha():
    soft = settled_stretch(2e-3, 20)
    stiff = settled_stretch(5e-4, 20)
    assert soft.sum() / stiff.sum() == pytest.approx(4.0, rel=0.02)


def test_damping_does_not_change_the_equilibrium():
    alpha = 1e-3
    model_a = hanging_chain(COUNT, SEGMENT, alpha, damping=0.5)
    model_b = hanging_chain(COUNT, SEGMENT, alpha, damping=5.0)
    results = []
    for model in (model_a, model_b):
        state = model.state()
        for _ in range(int(60 / DT)):
            step(model, state, DT, 20)
        results.append(state.x)
    np.testing.assert_allclose(results[0], results[1], atol=1e-6)
