"""Ropes come to rest on colliders: a ground plane, a box, a sphere (with and without
friction), and the no-contact path is bit-identical to stepping without colliders."""

import numpy as np
import pytest

from xpbd_addon.core import step
from xpbd_addon.core.collision import Collider, Plane
from xpbd_addon.core.solver import _advance

from .colliders import box, icosphere, rope

R = 0.01
DT = 1.0 / 24.0


def box_signed_distance(x, center, half):
    """Exact signed distance to an axis-aligned box (negative inside)."""
    q = np.abs(x - np.asarray(center)) - np.asarray(half)
    outside = np.linalg.norm(np.maximum(q, 0.0), axis=1)
    inside = np.minimum(q.max(axis=1), 0.0)
    return outside + inside


@pytest.mark.parametrize("substeps", [10, 40])
def test_rope_dropped_on_a_plane_rests_on_it(substeps):
    model = rope(40, 1.0, (-0.5, 0.0, 0.3), radius=R)
    state = model.state()
    deepest = np.inf
    for _ in range(48):
        step(model, state, DT, substeps, colliders=[Plane((0, 0, 0), (0, 0, 1))])
        deepest = min(deepest, state.x[:, 2].min())
    assert deepest >= 0.9 * R  # no point more than 10 % of the radius inside, ever
    assert state.x[:, 2].max() < 1.1 * R  # lying flat on it
    assert np.abs(state.v).max() < 1e-3  # at rest


@pytest.mark.parametrize("substeps", [10, 40])
def test_rope_dropped_on_a_box_rests_on_top(substeps):
    center, half = (0.0, 0.0, 0.0), (0.2, 0.2, 0.2)
    vertices, triangles = box(center, half)
    collider = Collider(vertices, triangles)
    assert collider.closed and not collider.problems
    model = rope(40, 1.0, (-0.5, 0.03, 0.45), radius=R)
    state = model.state()
    worst = np.inf
    for _ in range(72):
        step(model, state, DT, substeps, colliders=[collider])
        worst = min(worst, box_signed_distance(state.x, center, half).min())
    assert worst >= 0.9 * R
    # away from the edges: the segments over an edge wrap it with their radius (segment
    # contacts), which lifts the particles beside it
    segment = model.edge_rest_length.max()
    on_top = np.abs(state.x[:, 0]) < 0.2 - 2 * R - segment
    assert on_top.sum() >= 10
    np.testing.assert_allclose(state.x[on_top, 2], 0.2 + R, atol=0.1 * R)
    # both ends hang down the sides
    assert state.x[0, 2] < 0.1 and state.x[-1, 2] < 0.1
    assert np.abs(state.v).max() < 0.05


def sphere_scene(friction):
    vertices, triangles = icosphere(3, 0.3)
    collider = Collider(vertices, triangles, static_friction=friction, dynamic_friction=friction)
    # off centre, so one side is heavier; damped, so the hanging ends stop swinging
    model = rope(60, 1.2, (-0.5, 0.0, 0.32), radius=R, damping=1.0)
    return vertices, triangles, collider, model


def inscribed_radius(vertices, triangles):
    a, b, c = (vertices[triangles[:, k]] for k in range(3))
    n = np.cross(b - a, c - a)
    n /= np.linalg.norm(n, axis=1)[:, None]
    return np.abs(np.einsum("ij,ij->i", n, a)).min()


def test_rope_draped_over_a_sphere_stays_with_high_friction():
    vertices, triangles, collider, model = sphere_scene(1.5)
    state = model.state()
    inner = inscribed_radius(vertices, triangles)
    for frame in range(96):
        step(model, state, DT, 20, colliders=[collider])
        assert np.linalg.norm(state.x, axis=1).min() >= inner + 0.9 * R
        if frame == 71:
            settled = state.x.copy()
    left = state.x[state.x[:, 0] < -0.2]
    right = state.x[state.x[:, 0] > 0.2]
    assert len(left) and len(right)  # hangs on both sides
    assert left[:, 2].min() < 0.0 and right[:, 2].min() < 0.0
    assert state.x[:, 2].max() > 0.3  # still over the top
    assert np.abs(state.x - settled).max() < 0.01  # and not sliding


def test_rope_draped_over_a_sphere_slides_off_without_friction():
    _, _, collider, model = sphere_scene(0.0)
    state = model.state()
    for _ in range(96):
        step(model, state, DT, 20, colliders=[collider])
    assert state.x[:, 2].max() < -0.3  # all of it fell past the sphere
    assert np.all(np.isfinite(state.x))


def test_far_colliders_change_nothing_bit_for_bit():
    """With colliders that are never touched, the substep-by-substep path equals the
    frame-at-once path exactly: contacts cost accuracy nothing where there are none."""
    vertices, triangles = box((0.0, 0.0, -50.0), (0.5, 0.5, 0.5))
    far = [Collider(vertices, triangles), Plane((0, 0, -100.0))]
    for options in (dict(), dict(solver="sweep"), dict(bending_compliance=1e-3)):
        model = rope(30, 1.0, (0.0, 0.0, 0.0), radius=R, pinned=[0], **options)
        plain, touched = model.state(), model.state()
        for _ in range(10):
            step(model, plain, DT, 12)
            step(model, touched, DT, 12, colliders=far)
        assert np.array_equal(plain.x, touched.x) and np.array_equal(plain.v, touched.v)
    model = rope(30, 1.0, radius=R, pinned=[0])
    plain, empty = model.state(), model.state()
    step(model, plain, DT, 12)
    step(model, empty, DT, 12, colliders=())
    assert np.array_equal(plain.x, empty.x)


def test_contacts_are_deterministic_and_independent_of_threads():
    from .ropes import many_ropes

    vertices, triangles = icosphere(2, 0.5, (1.0, 0.4, -0.6))
    colliders = [Collider(vertices, triangles), Plane((0, 0, -1.0))]
    model = many_ropes(20, 30, radius=R, self_collision=True)
    runs = []
    for parallel in (False, True, False):
        state = model.state()
        for _ in range(12):
            _advance(model, state, DT, 10, (0, 0, -9.81), None, model.plan,
                     parallel=parallel, colliders=colliders)
        runs.append(state)
    for other in runs[1:]:
        assert np.array_equal(runs[0].x, other.x) and np.array_equal(runs[0].v, other.v)
