"""Bone frames of a baked rope: orientations along chains and over time, and the local
(parent-relative) pose a bone of a parented chain is keyed with. numpy only (no bpy), so it is
tested in plain Python.

Conventions: a frame is a 3x3 rotation whose columns are the bone's X, Y, Z axes in some
space; a bone points along its Y axis (Blender's convention). 4x4 matrices are row-major,
column vectors (``M @ p``), translations in [m].
"""

from __future__ import annotations

import numpy as np


def unit(d: np.ndarray) -> np.ndarray:
    """``d`` [..., 3] normalised; zero vectors become +Z."""
    n = np.linalg.norm(d, axis=-1, keepdims=True)
    fallback = np.zeros_like(d)
    fallback[..., 2] = 1.0
    return np.where(n > 1e-12, d / np.maximum(n, 1e-300), fallback)


def min_rotation(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Smallest rotations taking unit vectors ``u`` to ``v`` (shape [B, 3]), as 3x3 matrices
    [B, 3, 3] (Rodrigues; a half turn about an axis perpendicular to ``u`` when opposite)."""
    u = np.atleast_2d(u)
    v = np.atleast_2d(v)
    c = np.sum(u * v, axis=-1)
    axis = np.cross(u, v)
    opposite = c < -1.0 + 1e-9
    if np.any(opposite):
        perp = np.cross(u[opposite], [1.0, 0.0, 0.0])
        weak = np.linalg.norm(perp, axis=-1) < 1e-6
        perp[weak] = np.cross(u[opposite][weak], [0.0, 0.0, 1.0])
        perp = unit(perp)
        # A half turn: 2 a a^T - I.
    k = np.zeros(u.shape[:-1] + (3, 3))
    k[..., 0, 1], k[..., 0, 2], k[..., 1, 2] = -axis[..., 2], axis[..., 1], -axis[..., 0]
    k[..., 1, 0], k[..., 2, 0], k[..., 2, 1] = axis[..., 2], -axis[..., 1], axis[..., 0]
    scale = 1.0 / np.maximum(1.0 + c, 1e-12)
    r = np.eye(3) + k + (k @ k) * scale[..., None, None]
    if np.any(opposite):
        r[opposite] = 2.0 * perp[:, :, None] * perp[:, None, :] - np.eye(3)
    return r


def rotate_min(u: np.ndarray, v: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Vectors ``x`` [..., 3] turned by the smallest rotation taking unit ``u`` to unit ``v``
    (Rodrigues without building matrices: R x = c x + k x x + k (k.x)/(1+c), k = u x v,
    c = u.v; a half turn about an axis perpendicular to ``u`` when they are opposite)."""
    c = np.sum(u * v, axis=-1, keepdims=True)
    k = np.cross(u, v)
    out = c * x + np.cross(k, x) + k * (np.sum(k * x, axis=-1, keepdims=True)
                                        / np.maximum(1.0 + c, 1e-12))
    opposite = c[..., 0] < -1.0 + 1e-9
    if np.any(opposite):
        a = np.cross(u[opposite], [1.0, 0.0, 0.0])
        weak = np.linalg.norm(a, axis=-1) < 1e-6
        a[weak] = np.cross(u[opposite][weak], [0.0, 0.0, 1.0])
        a = unit(a)
        xo = x[opposite]
        out[opposite] = 2.0 * a * np.sum(a * xo, axis=-1, keepdims=True) - xo
    return out


def frames_from_axes(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Rotations [..., 3, 3] with columns X, Y, Z from an X axis (made perpendicular to Y)
    and a unit Y axis, both [..., 3]."""
    x = unit(x - np.sum(x * y, axis=-1, keepdims=True) * y)
    return np.stack([x, y, np.cross(x, y)], axis=-1)


def chain_rest_frames(directions: np.ndarray, chain_starts: np.ndarray,
                      root_frames: np.ndarray) -> np.ndarray:
    """Frames of the bones of chains at one instant, each bone's Y axis along its direction,
    turned from the bone before it by the smallest rotation (parallel transport: no roll
    jumps along a chain).

    directions: unit bone directions [B, 3], chains one after the other; chain_starts: index
    of every chain's first bone [C], increasing; root_frames: the frame each chain's first
    bone is turned from (its parent bone's, or the identity) [C, 3, 3]. Returns [B, 3, 3].
    """
    count = len(directions)
    starts = np.asarray(chain_starts, dtype=np.int64)
    ends = np.append(starts[1:], count)
    x = np.empty((count, 3))
    # The first bones of all chains, then the second ones, ...: chains advance together.
    x[starts] = rotate_min(root_frames[:, :, 1], directions[starts], root_frames[:, :, 0])
    for k in range(1, int((ends - starts).max())):
        live = starts + k < ends
        i = starts[live] + k
        x[i] = rotate_min(directions[i - 1], directions[i], x[i - 1])
    return frames_from_axes(x, directions)


def transport(first: np.ndarray, directions: np.ndarray) -> np.ndarray:
    """Frames of every bone on every frame [F, B, 3, 3]: ``first`` [B, 3, 3] on frame 0, then
    each frame turned from the frame before by the smallest rotation taking the bone's last
    direction to its new one (``directions`` [F, B, 3], unit), so bones do not flip where a
    rope swings past its rest direction."""
    return frames_from_axes(transport_axes(first[:, :, 0], directions), directions)


def transport_axes(first_x: np.ndarray, directions: np.ndarray) -> np.ndarray:
    """The X axes [F, B, 3] of ``transport``: ``first_x`` [B, 3] on frame 0, carried frame to
    frame (kept perpendicular to the direction against drift)."""
    x = np.empty(directions.shape)
    x[0] = first_x
    for f in range(1, len(directions)):
        turned = rotate_min(directions[f - 1], directions[f], x[f - 1])
        y = directions[f]
        x[f] = unit(turned - np.sum(turned * y, axis=-1, keepdims=True) * y)
    return x


def compose(rotation: np.ndarray, location: np.ndarray) -> np.ndarray:
    """4x4 matrices [..., 4, 4] from rotations [..., 3, 3] and translations [..., 3]."""
    m = np.zeros(rotation.shape[:-2] + (4, 4))
    m[..., :3, :3] = rotation
    m[..., :3, 3] = location
    m[..., 3, 3] = 1.0
    return m


def rigid_inverse(m: np.ndarray) -> np.ndarray:
    """Inverse of rigid 4x4 matrices [..., 4, 4] (rotation + translation)."""
    rt = np.swapaxes(m[..., :3, :3], -1, -2)
    return compose(rt, -np.einsum("...ij,...j->...i", rt, m[..., :3, 3]))


def orthonormal(m: np.ndarray) -> np.ndarray:
    """``m`` [..., 4, 4] with its 3x3 part's columns normalised (scale dropped)."""
    out = m.copy()
    out[..., :3, :3] /= np.linalg.norm(m[..., :3, :3], axis=-2, keepdims=True)
    return out


def local_pose(bone_rest: np.ndarray, bone_pose: np.ndarray, parent_rest: np.ndarray | None,
               parent_pose: np.ndarray | None) -> np.ndarray:
    """The pose basis (Blender's ``PoseBone.matrix_basis``) that puts a bone whose rest is
    ``bone_rest`` [B, 4, 4] at ``bone_pose`` [F, B, 4, 4] (armature space) under a parent at
    ``parent_pose`` [F, B, 4, 4] with rest ``parent_rest`` [B, 4, 4] (None: no parent).

    Blender (inherited rotation and scale, not connected): pose = parent_pose
    @ inv(parent_rest) @ bone_rest @ basis, so basis = inv(bone_rest) @ parent_rest
    @ inv(parent_pose) @ pose. All matrices rigid. Returns [F, B, 4, 4].
    """
    inv_rest = rigid_inverse(bone_rest)[None]
    if parent_pose is None or parent_rest is None:
        return inv_rest @ bone_pose
    return inv_rest @ parent_rest[None] @ rigid_inverse(parent_pose) @ bone_pose


def to_quaternions(rotation: np.ndarray) -> np.ndarray:
    """Unit quaternions (w, x, y, z) [F, B, 4] of rotations [F, B, 3, 3], signs chosen
    continuous over F (each frame's nearest to the one before, so keyed values interpolate
    the short way)."""
    r = rotation
    trace = r[..., 0, 0] + r[..., 1, 1] + r[..., 2, 2]
    q = np.empty(r.shape[:-2] + (4,))
    # Shepperd's method: take the largest of w, x, y, z first for accuracy.
    cands = np.stack([trace, r[..., 0, 0], r[..., 1, 1], r[..., 2, 2]], axis=-1)
    pick = np.argmax(cands, axis=-1)
    for k in range(4):
        sel = pick == k
        if not np.any(sel):
            continue
        m = r[sel]
        if k == 0:
            s = np.sqrt(1.0 + trace[sel]) * 2.0
            v = [0.25 * s, (m[:, 2, 1] - m[:, 1, 2]) / s, (m[:, 0, 2] - m[:, 2, 0]) / s,
                 (m[:, 1, 0] - m[:, 0, 1]) / s]
        elif k == 1:
            s = np.sqrt(1.0 + m[:, 0, 0] - m[:, 1, 1] - m[:, 2, 2]) * 2.0
            v = [(m[:, 2, 1] - m[:, 1, 2]) / s, 0.25 * s, (m[:, 0, 1] + m[:, 1, 0]) / s,
                 (m[:, 0, 2] + m[:, 2, 0]) / s]
        elif k == 2:
            s = np.sqrt(1.0 + m[:, 1, 1] - m[:, 0, 0] - m[:, 2, 2]) * 2.0
            v = [(m[:, 0, 2] - m[:, 2, 0]) / s, (m[:, 0, 1] + m[:, 1, 0]) / s, 0.25 * s,
                 (m[:, 1, 2] + m[:, 2, 1]) / s]
        else:
            s = np.sqrt(1.0 + m[:, 2, 2] - m[:, 0, 0] - m[:, 1, 1]) * 2.0
            v = [(m[:, 1, 0] - m[:, 0, 1]) / s, (m[:, 0, 2] + m[:, 2, 0]) / s,
                 (m[:, 1, 2] + m[:, 2, 1]) / s, 0.25 * s]
        q[sel] = np.stack(v, axis=-1)
    q /= np.linalg.norm(q, axis=-1, keepdims=True)
    if q.ndim == 3:
        for f in range(1, len(q)):
            flip = np.sum(q[f] * q[f - 1], axis=-1) < 0.0
            q[f][flip] *= -1.0
    return q
