"""Contacts: colliders (triangle meshes, planes) and rope-rope, each substep.

``frame.FrameContacts``: one frame's contacts (broad-phase bookkeeping, projection);
``scene``: the colliders joined into one soup, the plane table; ``pairs``: the rope-rope
broad phase. Kernels: ``kernels_contact`` (projection, friction), ``kernels_collider`` /
``kernels_resting`` (mesh narrow phase), ``kernels_broadphase`` (collider candidates),
``kernels_pairs`` / ``kernels_segments`` (rope-rope candidates), ``kernels_geometry``
(closest points).
"""

from .frame import FrameContacts
from .pairs import HORIZON_REACH, SELF_MARGIN, SELF_SKIP

__all__ = ["FrameContacts", "HORIZON_REACH", "SELF_MARGIN", "SELF_SKIP"]
