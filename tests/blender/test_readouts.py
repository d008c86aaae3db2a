"""Readouts (issue 34, part 1): the panel's numbers of a rope against values known by hand,
and that the numbers every frame keeps are kept once and drawn without stepping (their
cost: `python3 build.py bench readouts`).

A rope of N points hanging from its pinned top point, settled: segment k carries the weight
of the N - 1 - k points below it, T_k = (N - 1 - k) m g, so the top tension is the weight
below, (N - 1) m g; each segment stretches by alpha T_k, so the rope is longer than its rest
length by alpha * sum T = alpha m g N (N - 1) / 2; at rest its kinetic energy is 0.
"""

from __future__ import annotations

import pytest

from xpbd_addon.blender.frame import readouts, sim

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


@pytest.mark.parametrize("count, points", [(1, 200), (100, 20)])
def test_tensions_are_kept_once_a_frame_and_a_readout_is_drawn_without_stepping(
        scene, monkeypatch, count, points):
    """Playback of ``count`` ropes of ``points`` points (100 ropes: one batch): every stepped
    frame keeps its segment tensions once (the frame engine's ``Run._tensions``), panel drawn
    or not, and drawing the panel's readout reads that frame's state: it never steps the
    solver. What both cost is a benchmark (``python3 build.py bench readouts``,
    docs/benchmarks.md)."""
    from xpbd_addon import core
    from xpbd_addon.blender.frame import engine

    made = [ropes.mesh_rope(scene, n=points, length=0.02 * points, name=f"rope_{k}")
            for k in range(count)]
    for k, obj in enumerate(made):
        obj.location = (0.0, 0.05 * k, 0.0)
    scene.frame_end = 24
    ropes.play(scene, 1, 3)
    sim.clear()
    kept = []
    tensions = engine.Run._tensions

    def counted(self, *args):
        kept.append(scene.frame_current)
        return tensions(self, *args)

    monkeypatch.setattr(engine.Run, "_tensions", counted)
    step = core.step
    for frame in range(1, 25):
        scene.frame_set(frame)
        readouts.SHOWN[made[0].session_uid].readout = None  # drawn afresh this frame

        def stepping(*args, **kwargs):
            raise AssertionError("drawing a readout stepped the solver")

        monkeypatch.setattr(core, "step", stepping)
        shown = _shown(made[0])
        text = readouts.lines(shown)
        monkeypatch.setattr(core, "step", step)
        assert shown.frame == frame and not shown.cached and text
    assert kept == list(range(2, 25))  # frame 1 is the start: nothing stepped
