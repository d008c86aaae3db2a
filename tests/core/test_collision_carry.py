"""What the contacts keep from one substep or frame to the next changes nothing but the cost.

Two things are kept: the nearest triangle of each particle, so that a particle resting on a
face skips the candidate search (``kernels_collider.resting_contacts``), and, with static
colliders, the last frame's candidate lists (``contacts.FrameContacts.finish``). Both must
give the same bits as computing everything afresh; otherwise a frame simulated after a jump
(from a cached state) would differ from the same frame played in order, and a render or a
bake from the animation a user has scrubbed.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from xpbd_addon.core import contacts as contacts_module
from xpbd_addon.core import step
from xpbd_addon.core.collision import Collider, Plane
from xpbd_addon.core.contacts import colliders as colliders_module
from xpbd_addon.core.contacts import kernels_contact

from .colliders import icosphere
from .test_collision_broadphase import bumpy_ground, heap

DT = 1.0 / 24.0
SUBSTEPS = 10


def colliders():
    """An open bumpy ground, a closed sphere the ropes land on, and a ground plane."""
    vertices, triangles = bumpy_ground()
    sphere, faces = icosphere(2, 0.12, (0.1, 0.05, 0.05))
    return [Collider(vertices, triangles, static_friction=0.4, dynamic_friction=0.3),
            Collider(sphere, faces, static_friction=0.2, dynamic_friction=0.1),
            Plane((0.0, 0.0, -0.3))]


def valley():
    """A closed block with a V-shaped valley along its top (concave: ropes in it rest on two
    faces of one closed mesh), and a ground plane."""
    profile = [(-0.3, -0.1), (0.3, -0.1), (0.3, 0.1), (0.0, 0.02), (-0.3, 0.1)]  # x, z: CCW
    w = 0.3
    vertices = [(px, -w, pz) for px, pz in profile] + [(px, w, pz) for px, pz in profile]
    triangles = [(0, 1, 3), (1, 2, 3), (0, 3, 4), (5, 8, 6), (6, 8, 7), (5, 9, 8)]
    for i in range(5):
        j = (i + 1) % 5
        triangles += [(j, i, 5 + i), (j, 5 + i, 5 + j)]
    block = Collider(np.array(vertices, float), np.array(triangles), static_friction=0.3,
                     dynamic_friction=0.2)
    assert block.closed, block.problems
    return [block, Plane((0.0, 0.0, -0.3))]


def moving(frame):
    """``colliders`` with the sphere rising 2 mm per frame (a moving scene)."""
    ground, sphere, plane = colliders()
    lift = np.array([0.0, 0.0, 0.002])
    return [ground, sphere.moved(sphere.vertices + frame * lift,
                                 sphere.vertices + (frame + 1) * lift), plane]


def play(model, frames, scene):
    """The states (x, v, tension) after each of ``frames`` frames (``scene``: the colliders,
    or a function of the frame giving them), and how many frames went on with the last
    frame's candidates."""
    state = model.state()
    states, resumed = [], []
    original = contacts_module.FrameContacts.__init__

    def spy(self, *args, **kwargs):
        original(self, *args, **kwargs)
        resumed.append(self.resumed)

    contacts_module.FrameContacts.__init__ = spy
    try:
        for frame in range(frames):
            step(model, state, DT, SUBSTEPS,
                 colliders=scene(frame) if callable(scene) else scene)
            states.append((state.x.copy(), state.v.copy(), state.tension.copy()))
    finally:
        contacts_module.FrameContacts.__init__ = original
    return states, sum(resumed)


def test_a_frame_from_a_restored_state_equals_the_frame_played_in_order():
    scene = colliders()
    states, resumed = play(heap(), 30, scene)
    assert resumed >= 25  # the candidates were carried from frame to frame
    for frame in (1, 8, 15, 22, 29):
        model = heap()  # a new model: nothing carried
        state = model.state()
        state.x[:], state.v[:], state.tension = states[frame - 1]  # what a cache keeps
        step(model, state, DT, SUBSTEPS, colliders=scene)
        np.testing.assert_array_equal(state.x, states[frame][0], err_msg=f"frame {frame}")
        np.testing.assert_array_equal(state.v, states[frame][1], err_msg=f"frame {frame}")


def test_the_carry_is_dropped_when_the_frame_does_not_start_where_the_last_ended():
    scene = colliders()
    model = heap()
    state = model.state()
    step(model, state, DT, SUBSTEPS, colliders=scene)
    state.x[0, 2] += 1e-9  # the caller moved a particle: the kept lists may not hold
    fresh = play_one(model, state, scene)
    assert not fresh.resumed
    step(model, state, DT, SUBSTEPS, colliders=colliders())  # new collider objects
    assert not play_one(model, state, colliders()).resumed


def play_one(model, state, scene, pin_targets=None):
    seen = []
    original = contacts_module.FrameContacts.__init__

    def spy(self, *args, **kwargs):
        original(self, *args, **kwargs)
        seen.append(self)

    contacts_module.FrameContacts.__init__ = spy
    try:
        step(model, state, DT, SUBSTEPS, colliders=scene, pin_targets=pin_targets)
    finally:
        contacts_module.FrameContacts.__init__ = original
    return seen[0]


def argument(kernel, args: tuple, name: str):
    """The argument ``name`` of a call of ``kernel`` with ``args`` (by the kernel's own
    parameter names)."""
    return args[list(inspect.signature(kernel.py_func).parameters).index(name)]


def pass_on(*args):
    """A stand-in for ``resting_two_faces`` that leaves every flagged particle flagged."""
    return int(args[-1].sum())


@pytest.mark.parametrize("scene_of", [colliders, valley], ids=["ground and sphere", "valley"])
def test_the_resting_fast_path_gives_the_general_kernels_bits(monkeypatch, scene_of):
    """Every particle through the general narrow phase (the fast kernels hand all of them
    over) gives the same trajectory, bit for bit, as with the fast kernels at work: on an
    open bumpy ground and a closed sphere, and in the valley of a closed block (two faces
    of a closed mesh at once)."""
    scene = scene_of()
    fast, _ = play(heap(), 24, scene)
    taken, two = [], []
    resting, two_faces = kernels_contact.resting_static, kernels_contact.resting_two_faces

    def count(*args):
        left = resting(*args)
        taken.append(args[2] - left)
        return left

    def count_two(*args):
        before = int(args[-1].sum())
        left = two_faces(*args)
        two.append(before - left)
        return left

    monkeypatch.setattr(colliders_module, "resting_static", count)
    monkeypatch.setattr(colliders_module, "resting_two_faces", count_two)
    play(heap(), 24, scene_of())
    assert sum(taken) > 0.5 * len(taken) * len(fast[0][0])  # it did most of the work
    assert sum(two) > 0  # and some particles rested on two faces

    def hand_over(*args):
        moved, only, selective, extra = argument(resting, args, "selection")
        rest = args[-1]
        rest[:] = only if selective else 1
        return len(rest)

    monkeypatch.setattr(colliders_module, "resting_static", hand_over)
    monkeypatch.setattr(colliders_module, "resting_two_faces", pass_on)
    general, _ = play(heap(), 24, scene_of())
    for frame, (played, played_general) in enumerate(zip(fast, general, strict=True)):
        for kept, kept_general in zip(played, played_general, strict=True):  # x, v, tension
            np.testing.assert_array_equal(kept, kept_general, err_msg=f"frame {frame}")


def test_the_resting_fast_path_among_moving_colliders_gives_the_general_kernels_bits(
        monkeypatch):
    """The same with a collider moving: the scalar kernel, which follows the triangles."""
    fast, _ = play(heap(), 24, moving)
    taken = []
    resting = kernels_contact.resting_contacts

    def count(*args):
        left = resting(*args)
        taken.append(len(args[0]) - left)
        return left

    monkeypatch.setattr(colliders_module, "resting_contacts", count)
    play(heap(), 24, moving)
    assert sum(taken) > 0.5 * len(taken) * len(fast[0][0])

    def hand_over(*args):
        moved, only, selective, extra = argument(resting, args, "selection")
        rest = args[-1]
        rest[:] = only if selective else 1
        return len(rest)

    monkeypatch.setattr(colliders_module, "resting_contacts", hand_over)
    monkeypatch.setattr(colliders_module, "resting_two_faces", pass_on)
    general, _ = play(heap(), 24, moving)
    for frame, (played, played_general) in enumerate(zip(fast, general, strict=True)):
        for kept, kept_general in zip(played, played_general, strict=True):  # x, v, tension
            np.testing.assert_array_equal(kept, kept_general, err_msg=f"frame {frame}")


def test_ropes_no_contact_moves_swing_exactly_as_they_would_alone(monkeypatch):
    """The rope's re-solve after the contacts runs only for the ropes the contacts moved
    (and their blocks of the solver's 16 lanes): 16 ropes swinging high above the ground
    while 16 others land on it and are re-solved move bit for bit as the 16 do without the
    others and without any collider (the frame-at-once path)."""
    from xpbd_addon.core import Model
    from xpbd_addon.core.solve import kernels_resolve

    def ropes(count, height):
        x = np.zeros((count, 20, 3))
        x[:, :, 0] = np.linspace(0.0, 0.5, 20)
        x[:, :, 1] = 0.03 * np.arange(count)[:, None]
        x[:, :, 2] = height
        return x.reshape(-1, 3)

    def model(parts):
        x = np.concatenate(parts)
        starts = np.arange(0, len(x), 20)
        edges = [(s + i, s + i + 1) for s in starts for i in range(19)]
        inv_mass = np.ones(len(x))
        inv_mass[starts] = 0.0  # the first point of every rope pinned
        return Model(x, edges, inv_mass, 1e-7, radius=0.005, damping=0.1)

    swinging = ropes(16, 1.0)
    both = model([swinging, ropes(16, 0.05)])
    alone = model([swinging])
    ground = [Plane((0.0, 0.0, 0.0))]
    solved = []
    resolve = kernels_resolve.direct_resolve

    def count(*args):
        solved.append(argument(resolve, args, "active").copy())
        return resolve(*args)

    monkeypatch.setattr(kernels_resolve, "direct_resolve", count)
    state, reference = both.state(), alone.state()
    for _ in range(12):
        step(both, state, DT, SUBSTEPS, colliders=ground)
        step(alone, reference, DT, SUBSTEPS)
        np.testing.assert_array_equal(state.x[:len(swinging)], reference.x)
        np.testing.assert_array_equal(state.v[:len(swinging)], reference.v)
    assert solved, "the landing ropes were never re-solved: the test shows nothing"
    assert len(solved[0]) == 2 and not any(flags[0] for flags in solved)
    assert np.min(state.x[len(swinging):, 2]) >= 0.005 * 0.9  # on the ground, not through


def test_a_resting_rope_moves_the_same_whichever_ropes_share_its_block():
    """The re-solve runs for the ropes the contacts moved, not for their whole block: 16
    ropes settling on a bumpy ground, interleaved in the solver's blocks with 16 that land
    next to them later (and are re-solved then), move bit for bit as the 16 do alone (before,
    the block's re-solve and its frictionless pass kicked them by up to 50 um)."""
    from xpbd_addon.core import Model

    def ropes(count, height, offset):
        x = np.zeros((count, 20, 3))
        x[:, :, 0] = np.linspace(-0.3, 0.3, 20)
        x[:, :, 1] = 0.05 * np.arange(count)[:, None] - 0.4 + offset
        x[:, :, 2] = height
        return x

    def model(x):
        x = x.reshape(-1, 3)
        starts = np.arange(0, len(x), 20)
        edges = [(s + i, s + i + 1) for s in starts for i in range(19)]
        return Model(x, edges, np.full(len(x), 20.0), 1e-7, radius=0.005, damping=0.1,
                     sleep_speed=0.0)  # (asleep, they would not be solved at all)

    settling = ropes(16, 0.06, 0.0)
    both = np.stack([settling, ropes(16, 0.5, 0.025)], 1).reshape(32, 20, 3)  # interleaved
    together, alone = model(both), model(settling)
    vertices, triangles = bumpy_ground()
    ground = [Collider(vertices, triangles, static_friction=0.5, dynamic_friction=0.4)]
    state, reference = together.state(), alone.state()
    for _ in range(24):
        step(together, state, DT, SUBSTEPS, colliders=ground)
        step(alone, reference, DT, SUBSTEPS, colliders=ground)
        np.testing.assert_array_equal(state.x.reshape(16, 2, 20, 3)[:, 0],
                                      reference.x.reshape(16, 20, 3))
    assert np.abs(state.v.reshape(16, 2, 20, 3)[:, 1]).max() < 0.05  # the others landed
