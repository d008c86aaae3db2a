"""Moving colliders in real Blender: ropes sharing a moving collider each move as they would
alone, a collider swept through a rope at 5 m/s pushes it instead of passing through, and a
rope swung against a wall at 5 m/s does not tunnel."""

from __future__ import annotations

import numpy as np
import pytest

from xpbd_addon.blender.frame import sim

from . import ropes
from .test_collision import R, _box, _box_distance, _collider, _rope


def test_ropes_sharing_a_moving_collider_move_as_each_alone(scene):
    """Three rope objects hit by one box swept through them share its read and its core
    Collider each frame; each moves exactly (bit for bit) as it does when it is the only
    rope in the scene, and reached in any frame order too."""
    box = _collider(_box(scene, (-0.6, 0.0, 0.3), (0.1, 1.5, 0.6)), friction=20.0)
    _move_x(box, -0.6, 1.5)
    objects = [_rope(scene, n=16, length=0.6, height=0.3, x0=-0.3, name=f"rope{k}")
               for k in range(3)]
    for k, obj in enumerate(objects):
        obj.location.y = 0.25 * k - 0.25
        obj.xpbd.pin_first = True
    together = ropes.played_points(scene, objects, 1, 24)
    assert max(np.abs(together[24][o.name] - together[1][o.name]).max()
               for o in objects) > 0.1  # the box carried them
    ropes.assert_each_alone_equals(scene, objects, together, 1, 24)
    ropes.assert_any_order_equals(scene, objects[1], together, 1, 24, seed=5)


def test_a_rope_restarted_beside_others_moves_as_alone_through_a_moving_collider(scene):
    """Two ropes played to frame 10 beside a moving box, then one's damping changed: it is
    simulated again from the start frame by itself while the other goes on, and from then on
    they share the box's core Collider although each had made its own. Its frames equal its
    frames played alone."""
    box = _collider(_box(scene, (-0.6, 0.0, 0.3), (0.1, 1.5, 0.6)), friction=20.0)
    _move_x(box, -0.6, 1.5)
    first, second = (_rope(scene, n=16, length=0.6, height=0.3, x0=-0.3, name=name)
                     for name in ("first", "second"))
    second.location.y = 0.25
    for obj in (first, second):
        obj.xpbd.pin_first = True
    ropes.play(scene, 1, 10)
    second.xpbd.damping = 0.5
    together = ropes.played_points(scene, [second], 11, 20)
    first.xpbd.enabled = False
    alone = ropes.played_points(scene, [second], 1, 20)
    for frame in range(11, 21):
        np.testing.assert_array_equal(together[frame]["second"], alone[frame]["second"])


def _move_x(obj, x0, speed):
    """Drive ``obj``'s x location [m] from ``x0`` at frame 1 at a constant ``speed`` [m/s]
    (a driver: exactly linear, whatever the keyframe interpolation preferences)."""
    fcurve = obj.driver_add("location", 0)
    fcurve.driver.type = "SCRIPTED"
    fcurve.driver.expression = f"{x0} + (frame - 1) * {speed} / 24.0"


def _tunnelled(before, after, box_x_before, box_x_after, z_range):
    """Points that changed side of a moving box's middle plane while staying within its height
    (passing through it, not around it)."""
    low, high = z_range
    inside_band = ((before[:, 2] > low) & (before[:, 2] < high)
                   & (after[:, 2] > low) & (after[:, 2] < high))
    flipped = np.sign(before[:, 0] - box_x_before) != np.sign(after[:, 0] - box_x_after)
    return np.flatnonzero(inside_band & flipped)


def _substep_positions(monkeypatch):
    """A list that receives (substep, the core's particle positions in world space) after
    every contact projection of a frame: what happens between two frames, where a point
    passing through a collider would be seen."""
    from xpbd_addon.core import contacts

    recorded: list[tuple[int, np.ndarray]] = []
    for name in ("project", "project_again"):
        original = getattr(contacts.FrameContacts, name)

        def recording(self, x, v, substep, *rest, _original=original):
            moved = _original(self, x, v, substep, *rest)
            recorded.append((substep, x.copy()))
            return moved

        monkeypatch.setattr(contacts.FrameContacts, name, recording)
    return recorded


@pytest.mark.parametrize("friction", [0.0, 5.0, 50.0])
def test_a_collider_swept_through_a_rope_at_5_m_s_pushes_it(scene, friction, monkeypatch):
    """A box 'hand' 0.1 m thick moving at 5 m/s (0.21 m per frame, twice its thickness) through
    a rope hanging from a pin: the rope is carried along, never passed through (no point in
    the box after any contact pass of any substep, the box interpolated linearly over the
    frame as the core moves it; at least 0.9 R from it at frame ends), and
    keeps its length (``friction``: Blender's 0-80 scale). The rope's tip whips around the
    box's edge, up to 0.4 m in a frame."""
    half = np.array([0.05, 0.5, 0.1])
    box = _collider(_box(scene, (-0.5, 0.0, 0.5), 2 * half, name="hand"), thickness=0.0,
                    friction=friction)
    _move_x(box, -0.5, 5.0)
    rope = ropes.curve_rope(scene, "POLY", n=50, length=1.0, axis=2, name="hanging")
    rope.location = (0.0, 0.0, 1.0)
    rope.xpbd.radius = R
    rope.xpbd.substeps = 10
    substeps = _substep_positions(monkeypatch)
    box_x = -0.5
    pushed = False
    for frame in range(1, 25):
        substeps.clear()
        scene.frame_set(frame)
        points = ropes.world_points(rope)
        x = box.matrix_world.translation.x
        distance = _box_distance(points, (x, 0.0, 0.5), half)
        assert distance.min() > 0.9 * R, f"frame {frame}: a point inside the box"
        for k, inside in substeps:
            center = (box_x + (x - box_x) * (k + 1) / rope.xpbd.substeps, 0.0, 0.5)
            assert _box_distance(inside, center, half).min() > 0.0, (frame, k)
        assert ropes.length(points) < 1.1, f"frame {frame}: the rope stretched"
        pushed |= points[:, 0].max() > 0.2
        box_x = x
    assert pushed  # the box really met the rope and carried it
    assert sim.status(rope) is None


def test_a_rope_swinging_at_5_m_s_into_a_wall_does_not_tunnel(scene):
    """A 1.3 m rope released from horizontal swings down (its tip at about 5 m/s at the
    bottom) into a 10 cm wall below its pivot: the part below the wall's top is stopped, never
    passes through."""
    half = np.array([0.05, 1.0, 0.25])
    center = (-0.3, 0.0, 0.25)
    _collider(_box(scene, center, 2 * half, name="wall"), thickness=0.0)
    rope = ropes.curve_rope(scene, "POLY", n=60, length=1.3, name="swinging")
    rope.location = (0.0, 0.0, 1.5)
    rope.xpbd.radius = R
    rope.xpbd.substeps = 10
    scene.frame_set(1)
    previous, fastest = ropes.world_points(rope), 0.0
    for frame in range(2, 37):
        scene.frame_set(frame)
        points = ropes.world_points(rope)
        fastest = max(fastest, np.linalg.norm(points - previous, axis=1).max() * 24.0)
        assert _box_distance(points, center, half).min() > 0.9 * R, frame
        assert not len(_tunnelled(previous, points, -0.3, -0.3, (-1.0, 0.5 - R))), frame
        previous = points
    assert fastest > 4.5  # [m/s]: it hit the wall at speed
    low = points[points[:, 2] < 0.5 - R]
    assert len(low) and np.all(low[:, 0] > -0.3)  # what hangs below the top stayed in front
