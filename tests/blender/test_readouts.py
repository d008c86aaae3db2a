"""Readouts (issue 34, part 1): the panel's numbers of a rope against values known by hand,
and what they cost.

A rope of N points hanging from its pinned top point, settled: segment k carries the weight
of the N - 1 - k points below it, T_k = (N - 1 - k) m g, so the top tension is the weight
below, (N - 1) m g; each segment stretches by alpha T_k, so the rope is longer than its rest
length by alpha * sum T = alpha m g N (N - 1) / 2; at rest its kinetic energy is 0.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

from xpbd_addon.blender import readouts, sim

from . import ropes

N, LENGTH, MASS, ALPHA, G = 11, 1.0, 0.05, 1e-3, 9.81
"""Points, rest length [m], vertex mass [kg], compliance [m/N], gravity [m/s^2]."""


def _shown(obj):
    return readouts.readout(obj, sim.REGISTRY[obj.session_uid])


def _hanging(scene, **settings):
    rope = ropes.mesh_rope(scene, n=N, length=LENGTH, axis=2, name="hanging")
    rope.xpbd.vertex_mass = MASS
    rope.xpbd.compliance = ALPHA
    rope.xpbd.damping = 5.0  # settles within the 3 s played
    for name, value in settings.items():
        setattr(rope.xpbd, name, value)
    return rope


@pytest.mark.parametrize("bending", [False, True])
def test_a_hanging_rope_reads_its_weight_as_top_tension_and_alpha_sum_t_as_stretch(
        scene, bending):
    rope = _hanging(scene, use_bending=bending)
    ropes.play(scene, 1, 72)
    r = _shown(rope)
    weight_below = (N - 1) * MASS * G
    print(f"top tension {r.tension:.5f} N (weight below {weight_below:.5f} N), stretch "
          f"{r.length - r.rest_length:.6f} m (alpha sum T {ALPHA * MASS * G * N * (N - 1) / 2:.6f}"
          f" m), kinetic {r.kinetic:.2e} J")
    assert r.frame == 72 and not r.cached and r.ms > 0.0
    assert r.tension_segment == 0
    # With Bending its constraint (a difference of rest-scaled tangents, docs/physics.md)
    # also resists the difference in stretch between neighbouring segments: it carries
    # 0.1 % of the load here (4.9001 N at the top instead of 4.9049 N)
    assert r.tension == pytest.approx(weight_below, rel=2e-3 if bending else 1e-4)
    assert r.rest_length == pytest.approx(LENGTH, rel=1e-6)
    assert r.length - r.rest_length == pytest.approx(ALPHA * MASS * G * N * (N - 1) / 2,
                                                     rel=1e-2)
    assert r.stretch_segment == 0  # the top segment carries the most
    assert r.stretch == pytest.approx(ALPHA * weight_below / (LENGTH / (N - 1)), rel=1e-2)
    assert r.kinetic < 1e-6
    heights = ropes.world_points(rope)[1:, 2]
    assert r.gravity_energy == pytest.approx(MASS * G * heights.sum(), rel=1e-6)  # m g z
    assert r.elastic == pytest.approx(0.5 * ALPHA * sum(((N - 1 - k) * MASS * G) ** 2
                                                        for k in range(N - 1)), rel=1e-2)
    # shown again from the cache: the same numbers, and it says so
    scene.frame_set(71)
    scene.frame_set(72)
    again = _shown(rope)
    assert again.cached and again.tension == r.tension and again.ms == r.ms
    text = "\n".join(readouts.lines(again))
    assert "from the cache" in text and "at segment 0" in text


def test_readouts_cost_nothing_while_not_drawn_and_little_when_drawn(scene):
    """Playback of a 200-point rope: the simulation's time per frame (the frame engine's
    own measure) and what the panel's readout adds per frame when it is drawn."""
    rope = ropes.mesh_rope(scene, n=200, length=4.0, name="long")
    scene.frame_end = 120
    ropes.play(scene, 1, 3)  # compiled, cache warm
    sim.clear()
    simulated, drawn = [], []
    for frame in range(1, 121):
        scene.frame_set(frame)
        simulated.append(_shown(rope).ms if frame > 1 else 0.0)
        shown = readouts.SHOWN[rope.session_uid]
        shown.readout = None  # as if drawn for the first time this frame
        began = time.perf_counter()
        readouts.lines(_shown(rope))
        drawn.append(1e3 * (time.perf_counter() - began))
    step, draw = float(np.median(simulated[1:])), float(np.median(drawn))
    frame_time = 1e3 / scene.render.fps
    # what every frame pays for the readouts, panel drawn or not: the segment tensions kept
    # with the frame (core.edge_tension of the frame's Model and State)
    from xpbd_addon import core

    model = sim.REGISTRY[rope.session_uid].model
    state = model.state()
    core.step(model, state, 1.0 / scene.render.fps, 10)
    began = time.perf_counter()
    for _ in range(100):
        core.edge_tension(model, state, 1.0 / scene.render.fps, 10)
    kept = 1e3 * (time.perf_counter() - began) / 100
    print(f"200 points: simulating a frame {step:.3f} ms; every frame keeps its tensions "
          f"{kept:.4f} ms; drawn, the readout {draw:.3f} ms ({100 * draw / frame_time:.2f} % "
          f"of the {frame_time:.1f} ms a frame lasts at {scene.render.fps} fps)")
    assert draw < 0.01 * frame_time
    assert kept < 0.1 * step
