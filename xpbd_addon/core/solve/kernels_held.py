"""Contacts between ropes held in the chain solve, as rows on the segments they touch.

Why. The contacts act after each substep's solve (``contacts.frame``). A rope draped over
another, taut rope slid off it along its length: each substep's solve, which knew nothing of
the contact, carried the fold along it, and friction applied afterwards could not undo it
(docs/collisions.md, Limits). So the substep's rope-rope contacts are held in the next solves
(the re-solve after the contacts, and the next substep's): a contact of a segment (a, b) of
one rope with a segment of another rope, at x_c = (1 - s) x_a + s x_b, becomes

    E = 1/2 (c . x_c - at)^2 + 1/2 mu |c|^2 |P (x_c - x_0)|^2,

c = sqrt(k) n (n the contact normal, k = ``HOLD_STIFFNESS`` times the mean point mass of the
segment, or of the one it touches if that is heavier), at = c . x_0 with x_0 where the
contacts left the contact point, P = I - n n^T, and mu the ropes' friction: a penalty on the
plane through x_0 and a tangential anchor at x_0 as stiff as mu times it (friction in the
solve, sticking). It acts where the prediction of x_c is not clear of the plane (and the
step's x_c not in front of it). Its Hessian couples only x_a and x_b, neighbours of one
chain, which the block elimination couples already (``kernels_chain``): the diagonal blocks
gain s^2 and (1 - s)^2 times H = c c^T + mu (|c|^2 I - c c^T), and the block between them,
where the geometric stiffness has -g P, gains s (1 - s) H. One hold a segment (the first
contact found); none within one rope (a rope's own segments i and i + 2 touch end to end
when its solve gives a little, and held planes fixed in the world would carry it,
docs/collisions.md), none at a frame's start (a frame depends on x, v alone).

Fields of the edge slot (``topology.EDGE_FIELDS``): HOLD (c), HOLD_S (s, from slot p), HOLD_AT,
HOLD_X (x_0), HOLD_MU, and the scratch HOLD_ON, HOLD_C (c . x_c - at), HOLD_T (the anchor's
pull mu |c|^2 P (x_c - x_0)).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from ..contacts.kernels_contact import CLEARANCE_SLACK, pair_moved
from ..contacts.kernels_geometry import segments_apart, segments_gap
from ..jit import inline_kernel, kernel
from ..layout.lanes import FH, FHAT, FHC, FHMU, FHON, FHS, FHT, FHX, FX, FXT, PSTRIDE
from ..layout.topology import EDGE_HOLD, EDGE_HOLD_MU, EDGE_HOLD_X, EDGE_STRIDE

if TYPE_CHECKING:
    from ..layout.plan import LanePlan

HOLD_STIFFNESS = 160.0
"""k of a held contact over the mean point mass m of the segment (the solve's inertia), or of
the segment it touches where that one is heavier. The anchor's friction is a drag (mu k a
substep's slip), so k sets how fast a fold draped over a rope creeps along it under the
legs' unequal pull: at 10 it crept 7 points (19 cm) in 5 s and a rope four times heavier
than the one under it slid off; at 160 it stays (docs/collisions.md, "How stiff a hold is");
at 3 neither held."""

PSTRIDE_INT = int(PSTRIDE)
"""The particle slot's stride as a plain int (the hold kernels index with int64)"""

_FIELDS = 10
"""HOLD (3), HOLD_S, HOLD_AT, HOLD_ON, HOLD_C, HOLD_X (3): the fields cleared with a hold
(HOLD_MU and HOLD_T follow: ``clear``)"""


@inline_kernel
def held_row(buffer, edge_buffer, i, e, lanes):
    """The scratch of edge slot e's hold (particle slots i and i + PS) at the current step:
    HOLD_ON, HOLD_C and HOLD_T (module docstring); all 0 without a hold."""
    L = np.uint64(lanes)
    L2 = L + L
    j = i + PSTRIDE * L
    X = FX * L
    XT = FXT * L
    H = FH * L
    HX = FHX * L
    HT = FHT * L
    h0 = edge_buffer[e + H]
    h1 = edge_buffer[e + H + L]
    h2 = edge_buffer[e + H + L2]
    hs = edge_buffer[e + FHS * L]
    ht = 1.0 - hs
    at = edge_buffer[e + FHAT * L]
    held = h0 * h0 + h1 * h1 + h2 * h2
    predicted = (h0 * (ht * buffer[i + XT] + hs * buffer[j + XT])
                 + h1 * (ht * buffer[i + XT + L] + hs * buffer[j + XT + L])
                 + h2 * (ht * buffer[i + XT + L2] + hs * buffer[j + XT + L2]))
    g0 = ht * buffer[i + X] + hs * buffer[j + X]
    g1 = ht * buffer[i + X + L] + hs * buffer[j + X + L]
    g2 = ht * buffer[i + X + L2] + hs * buffer[j + X + L2]
    now = h0 * g0 + h1 * g1 + h2 * g2
    tiny = 1e-12 * math.sqrt(held)
    on = (held > 0.0) & (predicted - at <= tiny) & (now - at <= tiny)
    g0 -= edge_buffer[e + HX]
    g1 -= edge_buffer[e + HX + L]
    g2 -= edge_buffer[e + HX + L2]
    along = (h0 * g0 + h1 * g1 + h2 * g2) / held if held > 0.0 else 0.0
    grip = edge_buffer[e + FHMU * L] * held
    edge_buffer[e + FHON * L] = 1.0 if on else 0.0
    edge_buffer[e + FHC * L] = (now - at) if on else 0.0
    edge_buffer[e + HT] = grip * (g0 - along * h0) if on else 0.0
    edge_buffer[e + HT + L] = grip * (g1 - along * h1) if on else 0.0
    edge_buffer[e + HT + L2] = grip * (g2 - along * h2) if on else 0.0


@inline_kernel
def held_node(edge_buffer, f, e, lanes):
    """What the holds of the arriving (f) and leaving (e) edge slots add at their shared
    node: (6 entries of the symmetric 3x3 added to B, 3 of the right-hand side's decrease):
    s_f^2 H_f + (1 - s_e)^2 H_e, and s_f grad_f + (1 - s_e) grad_e (module docstring)."""
    L = np.uint64(lanes)
    L2 = L + L
    H = FH * L
    HT = FHT * L
    fh0 = edge_buffer[f + H]
    fh1 = edge_buffer[f + H + L]
    fh2 = edge_buffer[f + H + L2]
    fs = edge_buffer[f + FHS * L]
    fon = edge_buffer[f + FHON * L]
    eh0 = edge_buffer[e + H]
    eh1 = edge_buffer[e + H + L]
    eh2 = edge_buffer[e + H + L2]
    es = 1.0 - edge_buffer[e + FHS * L]
    eon = edge_buffer[e + FHON * L]
    wf = fon * fs * fs
    we = eon * es * es
    tf = wf * edge_buffer[f + FHMU * L]
    te = we * edge_buffer[e + FHMU * L]
    fk = fh0 * fh0 + fh1 * fh1 + fh2 * fh2
    ek = eh0 * eh0 + eh1 * eh1 + eh2 * eh2
    # H = (1 - mu) c c^T + mu |c|^2 I, each weighted
    b00 = (wf - tf) * fh0 * fh0 + tf * fk + (we - te) * eh0 * eh0 + te * ek
    b01 = (wf - tf) * fh0 * fh1 + (we - te) * eh0 * eh1
    b02 = (wf - tf) * fh0 * fh2 + (we - te) * eh0 * eh2
    b11 = (wf - tf) * fh1 * fh1 + tf * fk + (we - te) * eh1 * eh1 + te * ek
    b12 = (wf - tf) * fh1 * fh2 + (we - te) * eh1 * eh2
    b22 = (wf - tf) * fh2 * fh2 + tf * fk + (we - te) * eh2 * eh2 + te * ek
    fc = edge_buffer[f + FHC * L]
    ec = edge_buffer[e + FHC * L]
    r0 = fs * (fh0 * fc + edge_buffer[f + HT]) + es * (eh0 * ec + edge_buffer[e + HT])
    r1 = fs * (fh1 * fc + edge_buffer[f + HT + L]) + es * (eh1 * ec + edge_buffer[e + HT + L])
    r2 = (fs * (fh2 * fc + edge_buffer[f + HT + L2])
          + es * (eh2 * ec + edge_buffer[e + HT + L2]))
    return b00, b01, b02, b11, b12, b22, r0, r1, r2


@inline_kernel
def held_coupling(edge_buffer, f, lanes):
    """s (1 - s) H of edge slot f's hold (the symmetric 3x3's 6 entries, 0 where it does not
    act): what the block between its two nodes gains."""
    L = np.uint64(lanes)
    L2 = L + L
    H = FH * L
    h0 = edge_buffer[f + H]
    h1 = edge_buffer[f + H + L]
    h2 = edge_buffer[f + H + L2]
    s = edge_buffer[f + FHS * L]
    w = edge_buffer[f + FHON * L] * s * (1.0 - s)
    t = w * edge_buffer[f + FHMU * L]
    k = h0 * h0 + h1 * h1 + h2 * h2
    return ((w - t) * h0 * h0 + t * k, (w - t) * h0 * h1, (w - t) * h0 * h2,
            (w - t) * h1 * h1 + t * k, (w - t) * h1 * h2, (w - t) * h2 * h2 + t * k)


@kernel
def clear(edge_buffer, held, lanes):
    """Every hold of the lane buffer's edge slots let go: the slots listed in ``held``
    (``held[0]`` of them, from ``held[1]``; what ``hold_contacts`` set), and the list
    emptied. Only those: clearing every slot cost the terrain scene, whose ropes never
    touch, as much as a third of its solve."""
    for k in range(1, np.int64(held[0]) + 1):
        e = held[k]
        for c in range(_FIELDS):
            edge_buffer[e + (EDGE_HOLD + c) * lanes] = 0.0
        edge_buffer[e + EDGE_HOLD_MU * lanes] = 0.0
    held[0] = 0


@inline_kernel
def mean_mass(w, ia, ib):
    """[kg] the mean mass of the free ends of the segment (ia, ib) (inverse masses ``w``
    [1/kg]); 0 where both are pinned."""
    mass = 0.0
    count = 0
    for i in (ia, ib):
        if w[i] > 0.0:
            mass += 1.0 / w[i]
            count += 1
    return mass / count if count else 0.0


@inline_kernel
def _hold(x, w, edge_buffer, held, e, flipped, ia, ib, s, n0, n1, n2, other, ratio, grip,
          lanes):
    """Hold the contact at ``s`` along the segment (ia, ib), normal n, in its edge slot at
    index ``e`` of the lane buffer (-1: outside the lanes; ``flipped``: ib is the end nearer
    the chain's start, ``hold_scratch``), and list the slot in ``held``, for ``clear``;
    ``other`` [kg], the mean point mass of the segment touched (``mean_mass``). Returns
    whether the segment is held now (False: outside the lanes, both ends pinned, or the list
    full). Inlined: called for every segment held, twice a substep."""
    if e < 0:
        return False
    if flipped:
        hs, first, second = 1.0 - s, ib, ia
    else:
        hs, first, second = s, ia, ib
    mass = mean_mass(w, ia, ib)
    if mass == 0.0:
        return False
    if (edge_buffer[e + EDGE_HOLD * lanes] != 0.0 or edge_buffer[e + (EDGE_HOLD + 1) * lanes]
            != 0.0 or edge_buffer[e + (EDGE_HOLD + 2) * lanes] != 0.0):
        return True  # (one hold a segment: the first contact found)
    if held[0] + 1 >= held.shape[0]:
        return False  # (a place for every slot: never full while c != 0 marks them)
    # (the hold stands in for the other rope: stiff enough for its weight too)
    scale = math.sqrt(ratio * max(mass, other))
    h0, h1, h2 = scale * n0, scale * n1, scale * n2
    ht = 1.0 - hs
    # at as ``held_row`` computes c . x_c: the same bits where nothing moved
    at = (h0 * (ht * x[first, 0] + hs * x[second, 0])
          + h1 * (ht * x[first, 1] + hs * x[second, 1])
          + h2 * (ht * x[first, 2] + hs * x[second, 2]))
    edge_buffer[e + EDGE_HOLD * lanes] = h0
    edge_buffer[e + (EDGE_HOLD + 1) * lanes] = h1
    edge_buffer[e + (EDGE_HOLD + 2) * lanes] = h2
    edge_buffer[e + (EDGE_HOLD + 3) * lanes] = hs
    edge_buffer[e + (EDGE_HOLD + 4) * lanes] = at
    for c in range(3):
        edge_buffer[e + (EDGE_HOLD_X + c) * lanes] = ht * x[first, c] + hs * x[second, c]
    edge_buffer[e + EDGE_HOLD_MU * lanes] = grip
    held[0] += 1
    held[held[0]] = e
    return True


def hold_scratch(edges: np.ndarray, lanes: LanePlan) -> tuple:
    """``hold_contacts``' scratch for the segments (E, 2) ``edges`` in ``lanes``: (taken (E,)
    uint8, found (E, 5), slots), slots = (index (E,) int64 of each segment's edge slot in
    the lane buffer, -1 outside the lanes; flipped (E,) uint8, 1 where the segment's second
    end is the one nearer the chain's start, whose slot it is; order (E,) int64, the
    segments in the order of their slots, those outside the lanes last). Made once
    (``Workspace.hold_scratch``): a hold then finds its slot without integer divisions (a
    third of its cost) and writes in the buffer's order."""
    particle_base = np.full(len(lanes.particle_block), -1, dtype=np.int64)
    particle_base[lanes.order_particles] = lanes.order_base
    layout = lanes.layout
    first, second = particle_base[edges[:, 0]], particle_base[edges[:, 1]]
    inside = (first >= 0) & (second >= 0)
    block = np.where(inside, lanes.particle_block[edges[:, 0]], 0)
    start = layout.block_particle_offset[block].astype(np.int64)
    stride = PSTRIDE_INT * layout.lanes
    slot = (np.minimum(first, second) - start) // stride
    lane = (first - start) % stride
    index = (layout.block_edge_offset[block].astype(np.int64)
             + slot * (EDGE_STRIDE * layout.lanes) + lane)
    index[~inside] = -1
    flipped = (second < first).astype(np.uint8)
    order = np.lexsort((index, ~inside)).astype(np.int64)
    count = len(edges)
    return (np.zeros(count, dtype=np.uint8), np.empty((count, 5)), (index, flipped, order))


@kernel
def hold_contacts(x, w, radius, edges, pairs, clearance, particle_rope, edge_buffer, held,
                  scratch, ratio, reach, grip, lanes):
    """Hold the contacts of segment pairs of different ropes that touch at x (N, 3) [m]
    (within ``reach`` [m]), on both segments: c = sqrt(``ratio`` m) n, ``grip`` the ropes'
    friction (module docstring). ``held`` (int64, 1 + the number of edge slots): the count
    of slots held, then the slots (``clear``).

    ``clearance`` = (margin (K,) [m], motion (N, 2) [m]) as the rope-rope contacts keep
    them (``contacts.kernels_contact.segment_contacts``), the motion measured at x: a pair
    whose margin exceeds how far its ends have moved since cannot be within ``reach`` of
    touching, so it is passed over. So the pairs held are those of ``pairs`` that touch at
    x, whichever other pairs the list holds: the same for any candidates that hold every
    contact (a list found again within the substep included).

    ``scratch`` = (taken (E,) uint8, found (E, 5) [-, m/m, kg], slots) of ``hold_scratch``:
    each segment's first contact found is noted (taken, its s and n, the other segment's
    mean point mass), then the holds are written in the lane buffer's order, where the ropes
    of a block share the cache lines of the ten fields a hold writes. A pair whose two
    segments hold a contact already adds nothing (one hold a segment), so it is passed over
    before any test: in a heap, where each segment touches several others, most touching
    pairs are."""
    margin, motion = clearance
    taken, found, (index, flipped, order) = scratch
    taken[:] = 0
    if not ratio > 0.0:
        return  # nothing to hold (and a zero row would not mark its slot held: see ``_hold``)
    for k in range(pairs.shape[0]):
        ea, eb = pairs[k, 0], pairs[k, 1]
        if taken[ea] != 0 and taken[eb] != 0:
            continue
        a0, a1 = edges[ea, 0], edges[ea, 1]
        b0, b1 = edges[eb, 0], edges[eb, 1]
        if margin[k] > pair_moved(motion, 0, a0, a1, b0, b1) + CLEARANCE_SLACK:
            continue
        if (particle_rope[a0] < 0 or particle_rope[b0] < 0
                or particle_rope[a0] == particle_rope[b0]):
            continue
        if segments_apart(x, radius, a0, a1, b0, b1, reach):
            continue
        s, t, dx, dy, dz, gap, contact = segments_gap(x, radius, a0, a1, b0, b1)
        if not (gap > 1e-12 and gap < contact + reach):
            continue
        n0, n1, n2 = dx / gap, dy / gap, dz / gap
        if taken[ea] == 0:
            taken[ea] = 1
            found[ea, 0], found[ea, 1], found[ea, 2], found[ea, 3] = s, n0, n1, n2
            found[ea, 4] = mean_mass(w, b0, b1)
        if taken[eb] == 0:
            taken[eb] = 1
            found[eb, 0], found[eb, 1], found[eb, 2], found[eb, 3] = t, -n0, -n1, -n2
            found[eb, 4] = mean_mass(w, a0, a1)
    for k in range(order.shape[0]):
        e = order[k]
        if taken[e] != 0:
            _hold(x, w, edge_buffer, held, index[e], flipped[e], edges[e, 0], edges[e, 1],
                  found[e, 0], found[e, 1], found[e, 2], found[e, 3], found[e, 4], ratio,
                  grip, lanes)
