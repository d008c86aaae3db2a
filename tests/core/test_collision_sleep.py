"""Ropes at rest sleep (``core.sleep``): they keep their shape, cost almost nothing, and
wake for anything that would move them.

A user sees no difference: a sleeping rope rests where it would rest awake, a rope dropped
on sleeping ones lands on them as on awake ones, a rope released at rest on a slope slides,
a rope hanging off a pin follows the pin once it moves, and a frame computed from a cached
state (x, v and ``State.rest``) equals the frame played in order. ``rested`` starts ropes
as if they had been at rest for ``SLEEP_TIME`` already (they sleep from the first frame).
"""

from __future__ import annotations

import numpy as np
import pytest

from xpbd_addon.core import Model, step
from xpbd_addon.core import contacts as contacts_module
from xpbd_addon.core.collision import Collider, Plane, as_colliders
from xpbd_addon.core.sleep import SLEEP_TIME, Rest, balance_key
from xpbd_addon.core.solver import _advance

from .colliders import box, icosphere, segment_distance
from .test_collision_carry import play_one

R = 0.005
DT = 1.0 / 24.0
SUBSTEPS = 10
POINTS = 30


def ground_ropes(count=6, *, falling=False, sleep_speed=1e-3, friction=0.5):
    """``count`` parallel ropes lying on the ground (z = R) 3 cm apart; with ``falling``,
    one more across them, 0.3 m up, that lands on them after about 6 frames."""
    s = np.linspace(-0.2, 0.2, POINTS)
    ropes = []
    for k in range(count):
        ropes.append(np.stack([s, np.full(POINTS, 0.03 * (k - count / 2)), np.full(POINTS, R)],
                              -1))
    if falling:
        ropes.append(np.stack([np.full(POINTS, 0.02), s, np.full(POINTS, 0.3)], -1))
    x = np.concatenate(ropes)
    base = np.arange(len(ropes))[:, None] * POINTS
    edges = np.stack([base + np.arange(POINTS - 1), base + np.arange(1, POINTS)], -1)
    model = Model(x, edges.reshape(-1, 2), np.full(len(x), float(POINTS)), 1e-8, radius=R,
                  self_collision=True, self_friction=0.3, damping=0.5, sleep_speed=sleep_speed)
    ground = [Plane((0.0, 0.0, 0.0), static_friction=friction, dynamic_friction=friction)]
    return model, ground


def rested(model, colliders, ropes, gravity=(0.0, 0.0, -9.81)):
    """A state at the rest positions whose ``ropes`` (indices, POINTS particles each) count
    as quiet for ``SLEEP_TIME``: they sleep from the first frame on unless woken."""
    state = model.state()
    still = np.zeros(model.particle_count)
    for rope in ropes:
        still[rope * POINTS:(rope + 1) * POINTS] = SLEEP_TIME
    meshes, planes = as_colliders(colliders)
    count = model.particle_count
    state.rest = Rest(still, np.zeros(count), np.zeros(count, dtype=np.uint8),
                      balance_key(model, np.array(gravity), None, meshes, planes))
    return state


def play(model, frames, colliders, *, state=None, pins=None, parallel=None):
    """States after each frame and how many ropes fell asleep in each (``parallel``: the
    solver's threads forced on or off, else ``step``'s choice)."""
    state = model.state() if state is None else state
    states, asleep, woken = [], [], []
    original = contacts_module.FrameContacts.__init__

    def spy(self, *args, **kwargs):
        original(self, *args, **kwargs)
        frames_seen.append(self)

    contacts_module.FrameContacts.__init__ = spy
    try:
        for frame in range(frames):
            frames_seen: list = []
            targets = None if pins is None else pins(frame)
            if parallel is None:
                step(model, state, DT, SUBSTEPS, colliders=colliders, pin_targets=targets)
            else:
                _advance(model, state, DT, SUBSTEPS, (0.0, 0.0, -9.81), targets, model.plan,
                         parallel=parallel, colliders=colliders)
            states.append((state.x.copy(), state.v.copy()))
            asleep.append(frames_seen[0].sleeping)
            woken.append(frames_seen[0].woken)
    finally:
        contacts_module.FrameContacts.__init__ = original
    play.woken = woken  # (the last call's: how many ropes woke within each frame)
    return states, asleep


def test_ropes_at_rest_sleep_where_they_would_rest_awake():
    model, ground = ground_ropes()
    states, asleep = play(model, 20, ground)
    awake_model, _ = ground_ropes(sleep_speed=0.0)
    awake_states, never = play(awake_model, 20, ground)
    assert sum(never) == 0
    # every rope sleeps once at rest: dead still (the ground's contacts are exact), two
    # frames count for 0.5 s (``sleep.STILL``)
    assert asleep[1] == 0 and asleep[2] == 6
    for (x, _), (x_awake, _) in zip(states, awake_states, strict=True):
        assert np.abs(x - x_awake).max() < 1e-9
    np.testing.assert_allclose(states[-1][0][:, 2], R, atol=0.1 * R)


def test_a_rope_dropped_on_sleeping_ropes_wakes_them_and_lands_on_them():
    model, ground = ground_ropes(falling=True)
    states, asleep = play(model, 30, ground, state=rested(model, ground, range(6)))
    assert min(asleep[:4]) == 6  # the ground ropes slept while it fell
    assert max(asleep[5:8]) == 0  # and woke when it came near (it lands in frame 6)
    awake_model, _ = ground_ropes(falling=True, sleep_speed=0.0)
    awake_states, _ = play(awake_model, 30, ground)
    # the ropes under it rest and sleep again while it settles on them
    first = next(frame for frame in range(6, 30) if asleep[frame])
    for frame, ((x, _), (x_awake, _)) in enumerate(zip(states, awake_states, strict=True)):
        # as if nothing had slept; then within the creep (2-7 mm/s) it stops
        assert np.abs(x - x_awake).max() <= (0.0 if frame < first else 1e-3)
    # it lies on them, no segment through another
    x = states[-1][0]
    top = x[6 * POINTS:]
    assert top[:, 2].max() > 2.5 * R
    under = x[:6 * POINTS].reshape(6, POINTS, 3)
    for rope in under:
        gap = segment_distance(np.repeat(rope[:-1], POINTS - 1, 0),
                               np.repeat(rope[1:], POINTS - 1, 0),
                               np.tile(top[:-1], (POINTS - 1, 1)),
                               np.tile(top[1:], (POINTS - 1, 1)))
        assert gap.min() > 1.8 * R


def test_a_rope_released_at_rest_on_a_slope_slides_as_it_would_awake():
    tilt = np.radians(20.0)  # tan 20 deg = 0.36 > friction 0.1: it slides
    normal = (0.0, -np.sin(tilt), np.cos(tilt))
    s = np.linspace(-0.2, 0.2, POINTS)
    along = np.array([0.0, np.cos(tilt), np.sin(tilt)])
    x = np.stack([s, np.zeros(POINTS), np.zeros(POINTS)], -1) + R * np.array(normal)
    edges = np.stack([np.arange(POINTS - 1), np.arange(1, POINTS)], -1)
    slope = [Plane((0.0, 0.0, 0.0), normal, static_friction=0.1, dynamic_friction=0.1)]
    runs = []
    for speed in (1e-5, 0.0):
        model = Model(x, edges, np.full(POINTS, float(POINTS)), 1e-8, radius=R,
                      sleep_speed=speed)
        runs.append(play(model, 12, slope))
    (states, asleep), (awake_states, _) = runs
    assert sum(asleep) == 0
    for (x_sleep, v_sleep), (x_awake, v_awake) in zip(states, awake_states, strict=True):
        np.testing.assert_array_equal(x_sleep, x_awake)
        np.testing.assert_array_equal(v_sleep, v_awake)
    assert (states[-1][0] - x).mean(axis=0) @ along < -0.05  # slid down the slope


def test_a_sleeping_rope_follows_its_pin_once_the_pin_moves():
    points = 20
    x = np.zeros((points, 3))
    x[:, 2] = 1.0 - 0.02 * np.arange(points)  # hanging straight down from the pin
    edges = np.stack([np.arange(points - 1), np.arange(1, points)], -1)
    w = np.full(points, float(points))
    w[0] = 0.0
    ground = [Plane((0.0, 0.0, 0.0))]  # far below: contacts on, none touching

    def pins(frame):
        target = x.copy()
        target[0, 0] += 0.0 if frame < 20 else 0.01 * (frame - 19)  # moves from frame 20
        return target

    states, asleep = play(Model(x, edges, w, 1e-8, radius=R, damping=2.0), 34, ground,
                          pins=pins)
    assert asleep[19] == 1  # still while the pin stood still
    assert max(asleep[20:]) == 0
    awake_states, _ = play(Model(x, edges, w, 1e-8, radius=R, damping=2.0, sleep_speed=0.0),
                           34, ground, pins=pins)
    for (x_sleep, _), (x_awake, _) in zip(states, awake_states, strict=True):
        assert np.abs(x_sleep - x_awake).max() < 1e-9
    assert states[-1][0][points - 1, 0] > 0.01  # the free end followed


@pytest.mark.parametrize("what_moves", ["its end", "its pin"])
def test_a_rope_lying_across_sleeping_ropes_wakes_those_its_moving_part_reaches(what_moves):
    """A rope lies across six sleeping ropes on the ground. When only its free end moved in
    the last frame (it slid off the pile's last rope), that end wakes the rope under it and
    no other: its resting part presses on the rest as it did while they slept (one moving
    rope used to wake every rope it lay on, so a pile with one creeping end never slept).
    When its pinned end moves, all of it may move: it wakes every rope it lies on. The
    ropes left asleep do not move."""
    count = 6
    s = np.linspace(-0.2, 0.2, POINTS)
    ropes = [np.stack([s, np.full(POINTS, 0.03 * (k - count / 2)), np.full(POINTS, R)], -1)
             for k in range(count)]
    ropes.append(np.stack([np.full(POINTS, 0.02), s, np.full(POINTS, 3 * R)], -1))
    x = np.concatenate(ropes)
    base = np.arange(len(ropes))[:, None] * POINTS
    edges = np.stack([base + np.arange(POINTS - 1), base + np.arange(1, POINTS)], -1)
    w = np.full(len(x), float(POINTS))
    top = count * POINTS  # the crossing rope's first particle, at y = -0.2
    pinned_end = top + POINTS - 1  # its last, at y = +0.2
    w[pinned_end] = 0.0
    model = Model(x, edges.reshape(-1, 2), w, 1e-8, radius=R, self_collision=True,
                  self_friction=0.3, damping=0.5)
    ground = [Plane((0.0, 0.0, 0.0), static_friction=0.5, dynamic_friction=0.5)]
    state = rested(model, ground, range(count))
    targets = None
    if what_moves == "its end":
        state.rest.speed[top:top + 3] = 0.05  # [m/s] 2 mm in the last frame
    else:
        targets = x.copy()
        targets[pinned_end, 0] += 0.002
    before = state.x.copy()
    awake = play_one(model, state, ground, pin_targets=targets).awake_ropes[:count]
    if what_moves == "its end":
        # the rope under the moving end (y = -0.09, within reach of its first run of
        # particles) wakes; the others, 3 cm and more farther on, sleep
        assert awake.tolist() == [1, 0, 0, 0, 0, 0]
    else:
        assert awake.all()
    for rope in np.nonzero(awake == 0)[0]:
        rows = slice(rope * POINTS, (rope + 1) * POINTS)
        np.testing.assert_array_equal(state.x[rows], before[rows])


def test_a_frame_from_a_restored_state_equals_the_frame_played_in_order():
    model, ground = ground_ropes(falling=True)
    state = rested(model, ground, range(6))
    states, rests = [], []
    for _ in range(40):
        rests.append(state.rest.copy())
        step(model, state, DT, SUBSTEPS, colliders=ground)
        states.append((state.x.copy(), state.v.copy(), state.tension.copy()))
    asleep = [int(r.asleep.sum()) // POINTS for r in rests[1:]] + [int(state.rest.asleep.sum())]
    assert asleep[2] == 6 and asleep[5] == 0 and 0 < asleep[20] < 7, asleep
    for frame in (2, 3, 4, 5, 8, 19, 20, 27, 35, 39):
        fresh, _ = ground_ropes(falling=True)  # nothing carried from frame to frame
        state = fresh.state()
        state.x[:], state.v[:], state.tension = states[frame - 1]
        state.rest = rests[frame].copy()
        step(fresh, state, DT, SUBSTEPS, colliders=ground)
        np.testing.assert_array_equal(state.x, states[frame][0], err_msg=f"frame {frame}")
        np.testing.assert_array_equal(state.v, states[frame][1], err_msg=f"frame {frame}")


@pytest.mark.parametrize("bad", [-1e-5, float("nan"), float("inf")])
def test_a_bad_sleep_speed_is_refused(bad):
    with pytest.raises(ValueError, match="sleep_speed"):
        ground_ropes(sleep_speed=bad)


def test_ropes_at_rest_wake_for_a_moving_rope_within_reach_and_nothing_passes_through():
    """20 ropes dropped over a sphere: the first to reach the ground rest, and some of them
    are kept awake or woken at a frame's start by a rope within reach that still moves (one
    sliding off the sphere onto them); a rope that meets a sleeping one within a frame finds
    it static. No segment ever passes through another rope's."""
    count = 20
    s = np.linspace(-0.2, 0.2, POINTS)
    x = np.concatenate([np.stack([s, np.full(POINTS, 0.02 * (k - count / 2)),
                                  np.full(POINTS, 0.3 + 0.01 * k)], -1) for k in range(count)])
    base = np.arange(count)[:, None] * POINTS
    edges = np.stack([base + np.arange(POINTS - 1), base + np.arange(1, POINTS)], -1)
    model = Model(x, edges.reshape(-1, 2), np.full(len(x), float(POINTS)), 1e-8, radius=R,
                  self_collision=True, self_friction=0.3, damping=0.5)
    vertices, triangles = icosphere(3, 0.1, (0.0, 0.0, 0.05))
    scene = [Collider(vertices, triangles, static_friction=0.2, dynamic_friction=0.1),
             Plane((0.0, 0.0, 0.0))]
    states, asleep = play(model, 48, scene)
    assert sum(play.woken) > 0, "no rope was woken: the scene needs adjusting"
    assert max(asleep) > 0
    ropes = np.repeat(np.arange(count), POINTS - 1)
    first, second = np.triu_indices(len(ropes), 1)
    other = ropes[first] != ropes[second]
    first, second = first[other], second[other]
    edge = edges.reshape(-1, 2)
    for x_frame, _ in states:
        middle = 0.5 * (x_frame[edge[:, 0]] + x_frame[edge[:, 1]])
        near = np.linalg.norm(middle[first] - middle[second], axis=1) < 0.03  # (the rest: far)
        e, f = first[near], second[near]
        gap = segment_distance(x_frame[edge[e, 0]], x_frame[edge[e, 1]], x_frame[edge[f, 0]],
                               x_frame[edge[f, 1]])
        assert gap.min() > 1.5 * R


def test_a_pair_found_within_a_frame_joins_an_awake_rope_to_a_static_sleeping_one():
    """A search within a frame finds a pair between a sleeping rope and an awake one: the
    contacts test it, with the sleeping rope's particles of inverse mass 0 (it does not
    move), and it stays asleep for the rest of the frame (its lane buffer, its tension, the
    blocks solved stay as the frame's start made them)."""
    model, ground = ground_ropes(falling=True)
    frame = play_one(model, rested(model, ground, range(6)), ground)  # (the same DT, S)
    assert frame.sleeping == 6 and frame.awake is not None
    asleep_edge = 0  # a segment of the first ground rope
    falling_edge = 6 * (POINTS - 1)  # one of the falling rope's
    before = frame._contact_pairs()
    assert not np.isin(before, [asleep_edge]).any()
    frame.ropes.pairs = np.vstack([frame.pairs, [[asleep_edge, falling_edge]]])
    pairs = frame._contact_pairs()
    assert [asleep_edge, falling_edge] in pairs.tolist()
    assert not frame.awake[:6 * POINTS].any() and frame.awake[6 * POINTS:].all()
    assert not frame.inverse_mass[:6 * POINTS].any()
    np.testing.assert_array_equal(frame.inverse_mass[6 * POINTS:],
                                  model.particle_inv_mass[6 * POINTS:])


def test_ropes_sleep_while_a_collider_moves_far_from_them_and_wake_as_it_comes():
    """A box sweeping along the ground at 0.5 m/s: the ropes sleep while it is far (a
    moving collider keeps awake only the ropes with one of its triangles among their
    candidates), wake one by one as it comes, are swept along, and every frame is the same,
    bit for bit, as with sleeping off (the ropes lie still on the ground: asleep or awake,
    they stay where they are)."""
    vertices, triangles = box((0.0, 0.0, 0.0), (0.3, 0.03, 0.03))
    frame_move = np.array([0.0, 0.5 * DT, 0.0])

    def scene(frame):
        at = np.array([0.0, -0.4, 0.031]) + frame * frame_move
        return [Plane((0.0, 0.0, 0.0), static_friction=0.5, dynamic_friction=0.5),
                Collider(vertices + at, triangles, vertices_end=vertices + at + frame_move,
                         static_friction=0.3, dynamic_friction=0.3)]

    runs = []
    for speed in (1e-3, 0.0):
        model, _ = ground_ropes(sleep_speed=speed)
        state, states, asleep = rested(model, scene(0), range(6)), [], []
        if not speed:
            state.rest = None
        for frame in range(30):
            seen = play_one(model, state, scene(frame))
            states.append(state.x.copy())
            asleep.append(seen.sleeping)
        runs.append((states, asleep))
    (states, asleep), (awake_states, never) = runs
    assert asleep[:10] == [6] * 10 and asleep[-1] == 0 and sum(never) == 0
    for x_sleep, x_awake in zip(states, awake_states, strict=True):
        np.testing.assert_array_equal(x_sleep, x_awake)
    swept = (states[-1] - states[0]).reshape(6, POINTS, 3)[:, :, 1].mean(axis=1)
    assert swept.min() > 0.2  # every rope was pushed along by the box


@pytest.mark.parametrize("solver", ["direct", "sweep"])
def test_ropes_sleep_alike_on_one_thread_and_on_many(solver):
    """Big scenes solve the ropes on threads (``solver="sweep"``: in Gauss-Seidel lanes),
    solving every block each substep: the ropes asleep in a block with an awake one keep
    their state all the same, and the frames are the same bits on one thread and on many."""
    runs = []
    for parallel in (False, True):
        model, ground = ground_ropes(falling=True)
        if solver == "sweep":
            model = Model(model.particle_rest_x, model.edge_index, model.particle_inv_mass,
                          model.edge_compliance, radius=R, self_collision=True,
                          self_friction=0.3, damping=0.5, solver="sweep")
        states, asleep = play(model, 30, ground, parallel=parallel,
                              state=rested(model, ground, range(6)))
        runs.append(([x for x, _ in states], asleep))
    (one, asleep_one), (many, asleep_many) = runs
    assert asleep_one == asleep_many
    for x_one, x_many in zip(one, many, strict=True):
        np.testing.assert_array_equal(x_one, x_many)
    if solver == "direct":  # asleep, the ground ropes rest where they rest awake
        assert min(asleep_one[:4]) == 6 and max(asleep_one[5:8]) == 0
        awake_model, _ = ground_ropes(falling=True, sleep_speed=0.0)
        awake_states, _ = play(awake_model, 8, ground)  # (before they sleep again)
        assert np.abs(many[7] - awake_states[-1][0]).max() < 1e-6


def _boxes(x, v, speed, radius, moving, fall, dt):
    """A box (lo, hi, grow) round particles x as ``wake_near_moving_ropes`` makes it
    (``moving`` (n,) bool: which of them reach where they can get in the frame)."""
    from xpbd_addon.core.contacts.kernels_wake import SLACK, SWEEP

    ends = np.concatenate([x, x[moving] + SWEEP * dt * v[moving]])
    reach = radius + np.where(moving, SLACK * speed * dt + fall, 0.0)
    return ends.min(0), ends.max(0), reach.max()


def _meet(a, b):
    gap = a[2] + b[2]
    return bool(((b[0] <= a[1] + gap) & (a[0] <= b[1] + gap)).all())


def test_a_moving_rope_wakes_the_ropes_within_its_reach_and_no_other():
    """``kernels_wake.wake_near_moving_ropes`` against a direct test of the boxes round runs
    of ``CHUNK`` particles, on random scenes (some particles outside any rope, which always
    move; ropes' particles not always in one run; ropes moved by a pin or a collider, whose
    every particle counts as moving; moving ropes with some particles slower than the wake
    speed, whose runs of slow particles wake nothing)."""
    from xpbd_addon.core.contacts import kernels_wake

    rng = np.random.default_rng(7)
    for _ in range(200):
        ropes = int(rng.integers(1, 10))
        count = int(rng.integers(1, 60))
        particle_rope = rng.integers(-1, ropes, count)
        particle_rope.sort()  # mostly in runs, as the lanes' chains
        if rng.random() < 0.3:
            rng.shuffle(particle_rope)
        x = rng.random((count, 3))
        v = rng.normal(0.0, 0.5, (count, 3))
        speed = rng.random(count) * 0.3
        radius = rng.random(count) * 0.02
        whole = (rng.random(ropes) < 0.15).astype(np.uint8)
        moving = whole | (rng.random(ropes) < 0.3).astype(np.uint8)
        awake = moving | (rng.random(ropes) < 0.3).astype(np.uint8)
        fall, dt, wake = 0.01, 1.0 / 24.0, 0.15
        runs = []  # (rope, particle ids)
        for i in range(count):
            if (not runs or particle_rope[i] != particle_rope[i - 1]
                    or len(runs[-1][1]) == kernels_wake.CHUNK):
                runs.append((int(particle_rope[i]), []))
            runs[-1][1].append(i)

        def moves(rope, i, moving=moving, whole=whole, speed=speed, wake=wake):
            return rope < 0 or bool(whole[rope]) or (bool(moving[rope]) and speed[i] > wake)

        def boxes(rope, runs=runs, x=x, v=v, speed=speed, radius=radius, fall=fall, dt=dt):
            """(box, whether a particle of the run moves) of each run of ``rope``."""
            found = []
            for owner, ids in runs:
                if owner != rope:
                    continue
                ids = np.array(ids)
                flags = np.array([moves(rope, i) for i in ids])
                found.append((_boxes(x[ids], v[ids], speed[ids], radius[ids], flags, fall, dt),
                              bool(flags.any())))
            return found

        expected = awake.copy()
        movers = [m for m in range(-1, ropes) if m < 0 or moving[m]]
        for r in range(ropes):
            if awake[r] or not boxes(r):
                continue
            mine = [b for b, _ in boxes(r)]
            whole_r = (np.min([b[0] for b in mine], 0), np.max([b[1] for b in mine], 0),
                       max(b[2] for b in mine))
            for m in movers:
                theirs = boxes(m)
                if not theirs:
                    continue
                outer = (np.min([b[0] for b, _ in theirs], 0),
                         np.max([b[1] for b, _ in theirs], 0), max(b[2] for b, _ in theirs))
                if _meet(outer, whole_r) and any(_meet(a, b) for a, on in theirs if on
                                                 for b in mine):
                    expected[r] = 1
        before = awake.copy()
        woke = kernels_wake.wake_near_moving_ropes(x, v, speed, particle_rope, radius, moving,
                                                   whole, awake, fall, dt, wake)
        np.testing.assert_array_equal(awake, expected)
        assert woke == int(expected.sum() - before.sum())
