"""Rope-rope contacts pass over the pairs their last test left clear
(``kernels_contact.segment_contacts``' clearance): a pair is skipped only while the gap it
had, less how far its ends can have moved since, keeps it clear of touching, of the hold's
reach and of crossing. Skipping must change no bit: these tests run the same passes with
the margins kept and with every pair tested each time, and compare everything the contacts
write."""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from xpbd_addon.core import step
from xpbd_addon.core.contacts import frame as contact_frame
from xpbd_addon.core.contacts.kernels_contact import (
    carry_margins,
    contact_motion,
    segment_contacts,
)
from xpbd_addon.core.contacts.kernels_geometry import segments_gap
from xpbd_addon.core.solve.kernels_held import HOLD_STIFFNESS, _hold, mean_mass

from .ropes import crossed_ropes

RADIUS = 0.005
VELOCITY_SCALE = 240.0  # 1 / h at 24 fps and 10 substeps, undamped
PUSH = (0.5 / VELOCITY_SCALE, 1e-4)


def _segments(rng: np.random.Generator, count: int) -> tuple[np.ndarray, np.ndarray]:
    """``count`` segments 2 cm long in a 5 cm box: their gaps spread around the contact
    distance (1 cm), so that some touch, some are within reach and most are near."""
    start = rng.uniform(0.0, 0.05, (count, 3))
    direction = rng.normal(size=(count, 3))
    direction /= np.linalg.norm(direction, axis=1, keepdims=True)
    x = np.concatenate([start, start + 0.02 * direction])
    edges = np.stack([np.arange(count), np.arange(count) + count], axis=1)
    return x, edges


def _passes(seed: int, keep_margins: bool, passes: int = 200) -> tuple[list, int]:
    """Contact passes over every pair of 24 segments, the particles moved between passes by
    random steps (most small, some jumps of a few mm, as a solve or a collider moves them)
    with random velocities; the same random moves whether or not the margins are kept.
    One pass in ten gets a new list of pairs (a random four fifths of them, as a search
    again finds another list), whose pairs keep their margins from the last list
    (``carry_margins``). Returns what each pass wrote (x, v, acted) and how many pairs a
    kept margin let be passed over."""
    rng = np.random.default_rng(seed)
    count = 24
    x, edges = _segments(rng, count)
    v = np.zeros_like(x)
    w = rng.choice([0.0, 10.0, 100.0], size=len(x), p=[0.1, 0.45, 0.45])
    radius = np.full(len(x), RADIUS)
    first, second = np.triu_indices(count, 1)
    every_pair = np.stack([first, second], axis=1).astype(np.int64)
    pairs = every_pair
    margin = np.full(len(pairs), -np.inf)
    base = x.copy()
    motion = np.zeros((len(x), 2))
    moved = np.zeros(len(x), dtype=np.uint8)
    written, passed_over = [], 0
    for index in range(passes):
        # Most passes the particles creep, with small velocities (pairs are passed over);
        # in some, a few jump by millimetres, go back to where they started (a margin
        # measured while they were away must allow for the way back), or get velocities of
        # metres a second where they are (moves of centimetres in a substep, through which
        # a pair can pass through itself)
        kind = rng.choice(4, p=[0.55, 0.15, 0.15, 0.15])
        some = rng.random(len(x)) < 0.2
        x += rng.normal(size=x.shape) * 5e-5
        v[:] = rng.normal(size=v.shape) * 0.01
        if kind == 1:
            x[some] += rng.normal(size=(int(some.sum()), 3)) * 5e-3
        elif kind == 2:
            x[some] = base[some]
        elif kind == 3:
            v[some] = rng.normal(size=(int(some.sum()), 3)) * 4.0
        if rng.random() < 0.1:  # a new list
            chosen = every_pair[rng.random(len(every_pair)) < 0.8]
            carried = np.empty(len(chosen))
            carry_margins(pairs, margin, chosen, carried)
            pairs, margin = chosen, carried
        if not keep_margins:
            margin[:] = -np.inf
        contact_motion(x, v, base, 1.0 / VELOCITY_SCALE, motion)
        ends = edges[pairs]
        drift = motion[ends, 0].max(axis=2).sum(axis=1)
        speed = motion[ends, 1].max(axis=2).sum(axis=1)
        passed_over += int(np.count_nonzero(margin > drift + speed + 1e-6))
        acted = segment_contacts(x, v, w, radius, VELOCITY_SCALE, edges, pairs, PUSH, 0.4,
                                 moved, moved, False, 0.05 * RADIUS, (margin, motion),
                                 index % 2 == 1)  # (both orders, as the substeps alternate)
        written.append((x.copy(), v.copy(), acted))
    return written, passed_over


@pytest.mark.parametrize("seed", range(48))
def test_passing_over_clear_pairs_changes_no_bit(seed):
    """Over 200 passes with particles pushed, jumping and given velocities in between, the
    contacts write the same bits with the margins kept as with every pair tested each time,
    and the margins do let pairs be passed over."""
    kept, passed_over = _passes(seed, keep_margins=True)
    tested, none = _passes(seed, keep_margins=False)
    assert none == 0
    assert passed_over > 0
    for index, (a, b) in enumerate(zip(kept, tested, strict=True)):
        assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1]), f"pass {index}"
        assert a[2] == b[2], f"pairs in contact, pass {index}"


def _end_to_end(keep_margins: bool) -> tuple[list, int]:
    """Two segments of 2 cm on one line, 1.3 cm apart end to end (the contact distance is
    1 cm), the second moved 0.1 mm towards the first after each of 40 passes: the one case
    where a pair apart by its midpoints is as near as the midpoints say (pairs apart get
    their margin from that bound). No reach for holds: the margin is then as tight as it
    can be. Returns what each pass wrote and how many passes passed the pair over."""
    x = np.array([[0.0, 0.0, 0.0], [0.02, 0.0, 0.0], [0.033, 0.0, 0.0], [0.053, 0.0, 0.0]])
    v = np.zeros_like(x)
    w = np.full(4, 100.0)
    radius = np.full(4, RADIUS)
    edges = np.array([[0, 1], [2, 3]], dtype=np.int64)
    pairs = np.array([[0, 1]], dtype=np.int64)
    margin = np.full(1, -np.inf)
    base, motion = x.copy(), np.zeros((4, 2))
    moved = np.zeros(4, dtype=np.uint8)
    written, passed_over = [], 0
    for _ in range(40):
        if not keep_margins:
            margin[:] = -np.inf
        contact_motion(x, v, base, 1.0 / VELOCITY_SCALE, motion)
        passed_over += int(margin[0] > motion[:2, 0].max() + motion[2:, 0].max() + 1e-6)
        acted = segment_contacts(x, v, w, radius, VELOCITY_SCALE, edges, pairs, PUSH, 0.4,
                                 moved, moved, False, 0.0, (margin, motion), False)
        written.append((x.copy(), v.copy(), acted))
        x[2:, 0] -= 1e-4
    return written, passed_over


def test_a_pair_apart_end_to_end_is_tested_before_it_touches():
    """A pair apart by the midpoints' test keeps a margin from that bound, which is exact
    for segments on one line: passed over while it is clear, tested as it comes into
    contact, the same bits as testing it every pass."""
    kept, passed_over = _end_to_end(keep_margins=True)
    tested, _ = _end_to_end(keep_margins=False)
    assert passed_over > 0
    assert sum(acted for _, _, acted in tested) > 0, "the segments come into contact"
    for index, (a, b) in enumerate(zip(kept, tested, strict=True)):
        assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1]), f"pass {index}"
        assert a[2] == b[2], f"pass {index}"


def _play(frames: int, substeps: int = 10) -> list[np.ndarray]:
    from xpbd_addon.core.collision import Plane

    model = crossed_ropes()
    state = model.state()
    out = []
    for _ in range(frames):
        step(model, state, 1.0 / 24.0, substeps, colliders=[Plane((0.0, 0.0, -0.01))])
        out.append(np.concatenate([state.x, state.v]))
    return out


def test_crossed_ropes_land_and_lie_the_same_with_and_without_the_margins(monkeypatch):
    """Ropes landing crosswise on each other and on the ground, then lying there: every
    frame's x and v are the same bits with the contacts' margins as with none (every pair
    tested in every pass)."""
    kept = _play(36)

    def untested(self, pairs, x, v):
        return np.full(len(pairs), -np.inf), np.zeros((len(x), 2))

    monkeypatch.setattr(contact_frame.FrameContacts, "_clearance", untested)
    tested = _play(36)
    for index, (a, b) in enumerate(zip(kept, tested, strict=True)):
        assert np.array_equal(a, b), f"frame {index}"
    low = kept[-1][:len(kept[-1]) // 2, 2].min()
    assert low > -0.01, "the ropes lie on the ground"


def test_the_ropes_hold_the_same_contacts_whatever_list_of_pairs_they_come_in(monkeypatch):
    """The contacts held in the ropes' solve are those that touch, not those the list of
    candidates brings: handed a new copy of the pairs at every pass (as a search within the
    substep hands a new list, whose margins start untested), the crossed ropes land and lie
    with the same bits, at 5 substeps (where the contacts stretch them and they are solved
    again). Holding the pairs the substep's contacts had flagged near touching when they
    tested them, and every pair of a list found after the re-solve, gave other holds there
    from the third frame on, and so other trajectories."""
    played = _play(36, 5)
    original = contact_frame.FrameContacts._contact_pairs

    def copied(self):
        return original(self).copy()

    monkeypatch.setattr(contact_frame.FrameContacts, "_contact_pairs", copied)
    fresh = _play(36, 5)
    for index, (a, b) in enumerate(zip(played, fresh, strict=True)):
        assert np.array_equal(a, b), f"frame {index}"


def test_the_holds_pass_over_only_pairs_their_margins_keep_clear(monkeypatch):
    """At every hold of the crossed ropes landing (5 substeps), the slots held and what
    they hold are the same bits with the margins as with every pair tested, and the
    margins do let pairs be passed over."""
    from xpbd_addon.core.solve import substeps as rope_substeps

    original = rope_substeps.RopeSubsteps.hold
    compared = [0, 0]

    def both(self, pairs, clearance, reach):
        edges, holds = self.workspace.lane_edges, self.workspace.lane_holds
        original(self, pairs, (np.full(len(pairs), -np.inf), clearance[1]), reach)
        tested = edges.copy(), holds[:holds[0] + 1].copy()
        original(self, pairs, clearance, reach)
        assert np.array_equal(holds[:holds[0] + 1], tested[1])
        assert np.array_equal(edges, tested[0])
        compared[0] += 1
        drift = clearance[1][self.model.edge_index[pairs], 0].max(axis=2).sum(axis=1)
        compared[1] += int(np.count_nonzero(clearance[0][:len(pairs)] > drift + 1e-6))

    monkeypatch.setattr(rope_substeps.RopeSubsteps, "hold", both)
    _play(36, 5)
    holds, passed_over = compared
    assert holds > 36 * 5 and passed_over > 0  # (one a substep, and one before each re-solve)


@njit(cache=False)
def _hold_every_touching_pair(x, w, radius, edges, pairs, particle_rope, slots, edge_buffer,
                              held, ratio, reach, grip, lanes):
    """The holds as the module docstring of ``kernels_held`` states them, every pair tested:
    each touching pair of two ropes, in list order, offers its contact to both segments, and
    a segment keeps the first (``_hold`` declines a slot held already). Returns how many
    touching pairs came when both their segments were held."""
    both_held = 0
    for k in range(pairs.shape[0]):
        a0, a1 = edges[pairs[k, 0], 0], edges[pairs[k, 0], 1]
        b0, b1 = edges[pairs[k, 1], 0], edges[pairs[k, 1], 1]
        if (particle_rope[a0] < 0 or particle_rope[b0] < 0
                or particle_rope[a0] == particle_rope[b0]):
            continue
        s, t, dx, dy, dz, gap, contact = segments_gap(x, radius, a0, a1, b0, b1)
        if not (gap > 1e-12 and gap < contact + reach):
            continue
        count = held[0]
        n0, n1, n2 = dx / gap, dy / gap, dz / gap
        index, flipped, _ = slots
        ea, eb = pairs[k, 0], pairs[k, 1]
        first = _hold(x, w, edge_buffer, held, index[ea], flipped[ea], a0, a1, s, n0, n1, n2,
                      mean_mass(w, b0, b1), ratio, grip, lanes)
        second = _hold(x, w, edge_buffer, held, index[eb], flipped[eb], b0, b1, t, -n0, -n1,
                       -n2, mean_mass(w, a0, a1), ratio, grip, lanes)
        if first and second and held[0] == count:
            both_held += 1
    return both_held


def test_a_segment_holds_the_first_contact_listed_as_if_every_pair_were_tested(monkeypatch):
    """The holds pass over a pair whose two segments hold a contact already (the flags of
    ``hold_contacts``), and over pairs their margins keep clear: at every hold of the
    crossed ropes landing (each rope across lies on four, so a segment touches several),
    the slots held and what they hold are the same bits as when every pair is tested and
    offered to both its segments, and such pairs do come."""
    from xpbd_addon.core.solve import substeps as rope_substeps

    original = rope_substeps.RopeSubsteps.hold
    compared = [0, 0]

    def both(self, pairs, clearance, reach):
        edges, holds = self.workspace.lane_edges, self.workspace.lane_holds
        original(self, pairs, clearance, reach)
        held = edges.copy(), holds[:holds[0] + 1].copy()
        self.release()
        if not len(pairs):
            return
        model, lanes = self.model, self.plan.lanes
        compared[1] += _hold_every_touching_pair(
            self.x, model.particle_inv_mass, model.particle_radius, model.edge_index, pairs,
            lanes.particle_rope, self.workspace.hold_scratch[2], edges, holds, HOLD_STIFFNESS,
            reach, model.self_friction, lanes.layout.lanes)
        assert holds[0] == held[1][0]  # (the same slots; the kernel lists them in slot order)
        assert np.array_equal(np.sort(holds[1:holds[0] + 1]), np.sort(held[1][1:]))
        assert np.array_equal(edges, held[0])
        compared[0] += 1

    monkeypatch.setattr(rope_substeps.RopeSubsteps, "hold", both)
    _play(36, 5)
    holds, both_held = compared
    assert holds > 36 * 5 and both_held > 100  # (one a substep, one before each re-solve)


def test_a_pair_keeps_its_margin_in_a_new_list():
    """Pairs of both lists keep their margins, new ones start untested (-inf)."""
    old = np.array([[0, 1], [0, 4], [2, 3], [5, 6]], dtype=np.int64)
    new = np.array([[0, 0], [0, 4], [1, 2], [2, 3], [7, 8]], dtype=np.int64)
    margin = np.array([0.1, 0.2, 0.3, 0.4])
    out = np.empty(len(new))
    carry_margins(old, margin, new, out)
    assert out.tolist() == [-np.inf, 0.2, -np.inf, 0.3, -np.inf]
