"""The contacts' tuning constants (no kernels here). The distances the static layout derives
from the radii when a Model is made are layout.reach's, named here too."""

from ..layout.reach import MIN_MARGIN as MIN_MARGIN
from ..layout.reach import SELF_MARGIN as SELF_MARGIN
from ..layout.reach import SELF_SKIP as SELF_SKIP

HORIZON_REACH = 8.0
"""A full rope-rope search looks ahead until the particles' motion relative to each other
reaches this many radii (at most the rest of the frame): longer, and boxes and candidate
pairs grow with the motion."""

CARRY_FRAMES = 2
"""A rope-rope search whose particles move slowly looks ahead up to this many frames past the
frame's end (``kernels_segments.frames_past_end``): a pile sliding by millimetres a second
then keeps its pairs over the next frames instead of being searched again at each frame's
start (about 8 ms a search in the crossed layers of docs/benchmarks.md). 0: never past the
frame's end. Longer (measured 1-12 there): the sliding particles stray from their
predictions more often and the larger boxes hold more pairs; 2 saved the most."""

CARRY_REACH = 1.0
"""... while all but 1 in ``CARRY_SPARE`` particles move less than this many radii over the
look ahead (and every one less than ``HORIZON_REACH`` radii)"""

CARRY_SPARE = 100
"""... where 1 in this many particles may move farther than ``CARRY_REACH`` radii (up to
``HORIZON_REACH``): a few fast ones do not cut every search's look ahead short"""

PARTIAL_PAIR_TESTS = 600_000
"""Most box tests of a partial rope-rope search (segments searched now x segments searched
since the last full search) before a full search is cheaper: about 3.5 ns a test, against
3-6 ms for a full search of 10k segments (with 200k, a landing heap did 8 full searches a
frame)."""

EXTRA_GRID = 128
"""A partial rope-rope search puts the segments searched again since the last full search
in a grid of their own once they are more than this many (brute force below)."""

PARTIAL_EXTRA = 2
"""A partial rope-rope search is declined once more than 1 in PARTIAL_EXTRA segments were
searched again since the last full search (the grid's boxes are then mostly stale)."""

STILL = 1e-9
"""A particle predicted to move less than this [m] over a frame is predicted still."""

PARTIAL_SEARCH = 4
"""A broad phase is redone for the strayed particles only while they are fewer than 1 in
PARTIAL_SEARCH of all (more, and one search for everything costs less)."""

MAX_BOX_CELLS = 512
"""A particle or segment box covering more grid cells than this (a very fast particle) is
tested against everything by brute force instead of being listed in each cell."""

MARK_LIMIT = 1 << 62
"""``MeshScene.mark`` starts again from 0 (the marker cleared) before it reaches this."""

SPARSE_AWAKE = 4
"""With ropes asleep, the collider contacts skip the sleeping particles one by one (the scalar
kernel) when fewer than 1 in SPARSE_AWAKE are awake, else compute all and keep the awake
ones' (the vectorised kernel, 8 at a time)."""

RESIDUE_SINKS = 2.0
"""Overlap a contact finds at a substep's start that it undoes with velocity, in substeps of
gravity's sink g h^2 (``kernels_collider.push_out``): the residue that contacts sharing a
particle leave each other (a resting stack: about 0.8 g h^2). Beyond it, an overlap is
pushed out without velocity. The velocity it can give is RESIDUE_SINKS g h at most."""

HOLD_REACH = 0.05
"""Segment pairs of different ropes within this fraction of the rope's radius of touching,
when the rope-rope contacts test them, are held in the ropes' next solves
(``solve.kernels_held``)"""

CONTACT_PASSES = 2
"""Passes over all contacts per substep when rope-rope contacts are on."""

CLEARANCE_PAIRS = 4
"""The rope-rope contacts keep what each pair's test left clear, and pass over the pairs
that stay clear (``frame.FrameContacts._clearance``), only with at least one pair per this
many particles: with fewer, testing every pair costs less than measuring every particle's
motion for it (0.5 ms a frame at 10,000 particles and 20 substeps)."""

AGAIN_TOLERANCE = 0.01
"""The pass after the rope's re-solve looks at the particles the re-solve moved by more
than this fraction of their radius (and those the ropes pushed): a particle moved less can
sit at most that deep in a collider until the next substep's contacts."""

DEPTH_REACH = 0.5
"""``FrameContacts.beyond`` as a fraction of the collider margin."""

KEPT_GRIDS = 4
"""Triangle grids of a static collider scene kept across frames, one per cell size."""

KEPT_TABLES = 2
"""Per-triangle tables of a moving collider kept for its next frame (``MeshScene.release``):
one per rope stepped at a time, a spare for a second."""

EDGE_PASSES = 2
"""Passes over the segment-edge contacts per pass over the colliders: a segment draped on a
thin pole touches several of its edges, and its particles are shared with the segments
beside it (``kernels_edges.edge_contacts``)."""

EDGE_RELAX = 2.0
"""The segment-edge contacts are solved as a Jacobi pass (order-free: a symmetric rope on a
pole stays symmetric); a particle moved by k of them takes min(EDGE_RELAX, k) / k of their
sum. Plain averaging (1) converges too slowly: the default rope (20 points, radius 1 cm)
dropped on a 1 cm pole at 10 substeps sank 0.2 r into it; with 2 (a particle is shared by
two segments: their two pushes are both kept), 0.05 r, and at 5 substeps 0.07 r
(``tests/core/test_collision_edges.py``)."""

EDGE_SLOP = 0.07
"""The segment-edge contacts keep a segment (1 - EDGE_SLOP) times its contact distance from
an edge: a segment lying across a mildly bent edge (a bump of the ground) sinks into it by
less than that between its two particles' face contacts, and is left to them. Pushed to the
full distance, such segments were nudged every substep without settling (100 ropes resting
on the bumpy terrain of ``bench collision``: none slept, 70 ms a frame against 5); at 5 %,
19 stayed awake; at 7 %, all sleep, and a rope on a pole rests 7 % of its radius into it."""
