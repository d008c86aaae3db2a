"""Bone frames (core.bone_frames, plain numpy): rotations, chain frames without twist jumps,
frames carried over time without flips, and the local pose that reproduces a posed chain."""

from __future__ import annotations

import numpy as np

from xpbd_addon.core import bone_frames as bf


def _random_units(rng, n):
    return bf.unit(rng.normal(size=(n, 3)))


def test_rotate_min_turns_u_onto_v_and_keeps_lengths():
    rng = np.random.default_rng(1)
    u, v, x = _random_units(rng, 200), _random_units(rng, 200), rng.normal(size=(200, 3))
    np.testing.assert_allclose(bf.rotate_min(u, v, u), v, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(bf.rotate_min(u, v, x), axis=1),
                               np.linalg.norm(x, axis=1), atol=1e-12)
    np.testing.assert_allclose(bf.rotate_min(u, -u, u), -u, atol=1e-12)  # a half turn
    r = bf.min_rotation(u, v)
    np.testing.assert_allclose(np.einsum("bij,bj->bi", r, x), bf.rotate_min(u, v, x),
                               atol=1e-12)


def test_chain_frames_follow_the_directions_without_twist():
    t = np.linspace(0.0, 3.0, 40)
    points = np.stack([np.cos(t), np.sin(t), 0.3 * t], axis=1)  # a helix
    d = bf.unit(np.diff(points, axis=0))
    frames = bf.chain_rest_frames(d, np.array([0, 20]), np.stack([np.eye(3)] * 2))
    np.testing.assert_allclose(frames[:, :, 1], d, atol=1e-12)  # Y along the bone
    np.testing.assert_allclose(frames @ frames.transpose(0, 2, 1),
                               np.broadcast_to(np.eye(3), frames.shape), atol=1e-12)
    # Parallel transport: a bone's X axis has no component along the previous bone's
    # direction change beyond the turn itself (neighbours' X differ by a small angle).
    turn = np.arccos(np.clip(np.sum(d[1:20] * d[:19], axis=1), -1, 1))
    x_turn = np.arccos(np.clip(np.sum(frames[1:20, :, 0] * frames[:19, :, 0], axis=1), -1, 1))
    assert np.all(x_turn <= turn + 1e-9)


def test_frames_carried_over_time_do_not_flip_past_the_rest_direction():
    angle = np.linspace(0.0, 2.0 * np.pi, 200)  # a bone swinging all the way round
    d = np.stack([np.sin(angle), np.zeros_like(angle), -np.cos(angle)], axis=1)[:, None]
    first = bf.min_rotation(np.array([[0.0, 1.0, 0.0]]), d[0])
    frames = bf.transport(first, d)
    x = frames[:, 0, :, 0]
    assert np.all(np.sum(x[1:] * x[:-1], axis=1) > 0.999)  # no jump from frame to frame
    np.testing.assert_allclose(frames[:, 0, :, 1], d[:, 0], atol=1e-12)


def test_local_pose_rebuilds_the_chain_through_its_parents():
    rng = np.random.default_rng(4)
    count, frames = 6, 5
    rest = bf.compose(bf.min_rotation(np.tile([0.0, 1.0, 0.0], (count, 1)),
                                      _random_units(rng, count)), rng.normal(size=(count, 3)))
    posed = bf.compose(bf.min_rotation(np.tile([0.0, 1.0, 0.0], (frames * count, 1)),
                                       _random_units(rng, frames * count)),
                       rng.normal(size=(frames * count, 3))).reshape(frames, count, 4, 4)
    parent_rest = np.concatenate([np.eye(4)[None], rest[:-1]])
    parent_pose = np.concatenate([np.broadcast_to(np.eye(4), (frames, 1, 4, 4)),
                                  posed[:, :-1]], axis=1)
    basis = bf.local_pose(rest, posed, parent_rest, parent_pose)
    # Blender's rule, applied down the chain from the root: pose = parent_pose
    # @ inv(parent_rest) @ rest @ basis.
    pose = np.empty_like(posed)
    for i in range(count):
        above = np.eye(4) if i == 0 else pose[:, i - 1]
        above_rest = np.eye(4) if i == 0 else rest[i - 1]
        pose[:, i] = above @ bf.rigid_inverse(above_rest) @ rest[i] @ basis[:, i]
    np.testing.assert_allclose(pose, posed, atol=1e-10)
    q = bf.to_quaternions(basis[..., :3, :3])
    np.testing.assert_allclose(np.linalg.norm(q, axis=-1), 1.0, atol=1e-12)
    assert np.all(np.sum(q[1:] * q[:-1], axis=-1) >= 0.0)  # signs continuous over frames
    w, x, y, z = np.moveaxis(q, -1, 0)  # the quaternions are the rotations
    m = np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w),
                  2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w),
                  2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], -1)
    np.testing.assert_allclose(m.reshape(basis.shape[:-2] + (3, 3)), basis[..., :3, :3],
                               atol=1e-12)
