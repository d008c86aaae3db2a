"""A stiff single-link pendulum keeps the period of the ideal one, T = 2 pi sqrt(L / g)."""

import math

import numpy as np
import pytest

from xpbd_addon.core import Model, step

G = 9.81


def measured_period(length: float, amplitude: float, dt: float, substeps: int) -> float:
    bob = [length * math.sin(amplitude), 0.0, -length * math.cos(amplitude)]
    model = Model([[0.0, 0.0, 0.0], bob], [[0, 1]], [0.0, 1.0], 0.0)
    state = model.state()
    times, xs = [0.0], [state.x[1, 0]]
    for frame in range(int(12 / dt)):
        step(model, state, dt, substeps, gravity=(0.0, 0.0, -G))
        times.append((frame + 1) * dt)
        xs.append(state.x[1, 0])
    x = np.array(xs)
    t = np.array(times)
    # Downward zero crossings of the bob's x, linearly interpolated between frames.
    k = np.flatnonzero((x[:-1] > 0.0) & (x[1:] <= 0.0))
    crossings = t[k] + (t[k + 1] - t[k]) * x[k] / (x[k] - x[k + 1])
    assert len(crossings) >= 4
    return float(np.mean(np.diff(crossings)))


@pytest.mark.parametrize("substeps", [10, 20])
def test_small_angle_period(substeps):
    length, amplitude = 1.0, 0.05
    ideal = 2.0 * math.pi * math.sqrt(length / G)
    period = measured_period(length, amplitude, 1.0 / 60.0, substeps)
    assert period == pytest.approx(ideal, rel=0.005)


def test_stiff_link_keeps_its_length_while_swinging():
    model = Model([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]], [[0, 1]], [0.0, 1.0], 0.0)
    state = model.state()
    for _ in range(120):
        step(model, state, 1.0 / 60.0, 20)
        assert np.linalg.norm(state.x[1]) == pytest.approx(1.0, abs=1e-3)
