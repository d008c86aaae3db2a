"""Contact distances the static layout derives from the particles' radii when a Model is
made (``plan.contact_topology``), before numba is imported; the contacts use them too
(``contacts.constants`` names them)."""

SELF_SKIP = 1.5
"""Segments of one rope closer than SELF_SKIP (r_a + r_b) along it never collide: a straight
rope would touch itself there, and only a kink sharper than a rope can bend brings them
together (the pairs i, i + 2 of a rope sampled every 2 r, which at rest cost as much as all
real contacts)."""

SELF_MARGIN = 0.5
"""Margin of rope-rope contacts, as a fraction of the radius: how far a particle may stray
from its predicted path before the rope-rope broad phase is redone."""

MIN_MARGIN = 1e-4
"""Smallest margin [m] the broad phase works with (a zero margin would redo it whenever a
contact held a particle)."""
