"""Bad collider and contact input: clear ValueErrors where the input is invalid, reported
problems where a collider is degenerate or open, and never NaN."""

import numpy as np
import pytest

from xpbd_addon.core import Model, step
from xpbd_addon.core.collision import MAX_COORDINATE, Collider, Plane

from .colliders import box, icosphere, rope

DT = 1.0 / 24.0
V, T = box((0.0, 0.0, 0.0), (0.2, 0.2, 0.2))


@pytest.mark.parametrize(
    "args, kwargs, name",
    [
        ((V[:, :2], T), {}, "vertices"),
        ((np.where(np.arange(24).reshape(8, 3) == 4, np.nan, V), T), {}, "vertices"),
        ((V * np.inf, T), {}, "vertices"),
        ((V * 10 * MAX_COORDINATE, T), {}, "vertices"),
        ((V, T + 8), {}, "triangles"),
        ((V, -T), {}, "triangles"),
        ((V, T[:, :2]), {}, "triangles"),
        ((V, T + 0.5), {}, "triangles"),
        ((V, [["a", "b", "c"]]), {}, "triangles"),
        ((V, T), dict(vertices_end=V[:4]), "vertices_end"),
        ((V, T), dict(vertices_end=V * np.nan), "vertices_end"),
        ((V, T), dict(thickness=-0.01), "thickness"),
        ((V, T), dict(static_friction=-1.0), "static_friction"),
        ((V, T), dict(dynamic_friction=np.nan), "dynamic_friction"),
    ],
)
def test_bad_collider_input_names_the_argument(args, kwargs, name):
    with pytest.raises(ValueError, match=f"^{name}:"):
        Collider(*args, **kwargs)


@pytest.mark.parametrize(
    "args, kwargs, name",
    [
        (((0, 0, np.nan), (0, 0, 1)), {}, "point"),
        (((0, 0, 0), (0, 0, 0)), {}, "normal"),
        (((0, 0, 0), (0, 1)), {}, "normal"),
        (((0, 0, 0), (0, 0, 1)), dict(static_friction=-0.1), "static_friction"),
    ],
)
def test_bad_plane_input_names_the_argument(args, kwargs, name):
    with pytest.raises(ValueError, match=f"^{name}:"):
        Plane(*args, **kwargs)


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(radius=-0.01), "radius"),
        (dict(radius=[0.01, 0.01]), "radius"),
        (dict(radius=np.nan), "radius"),
        (dict(self_collision="yes"), "self_collision"),
        (dict(self_friction=-1.0), "self_friction"),
        (dict(contact_push_speed=-1.0), "contact_push_speed"),
        (dict(contact_margin=np.inf), "contact_margin"),
    ],
)
def test_bad_contact_settings_name_the_argument(kwargs, name):
    with pytest.raises(ValueError, match=f"^{name}:"):
        Model(np.zeros((3, 3)) + np.arange(3)[:, None], [[0, 1], [1, 2]], [1, 1, 1], 0.0,
              **kwargs)


def test_colliders_argument_must_hold_colliders():
    model = rope(5)
    state = model.state()
    with pytest.raises(ValueError, match="^colliders:"):
        step(model, state, DT, 4, colliders=[Plane(), "ground"])
    with pytest.raises(ValueError, match="^colliders:"):
        step(model, state, DT, 4, colliders=3)
    step(model, state, DT, 4, colliders=Plane((0, 0, -1)))  # a single one is fine


def drop_on(collider, substeps=10, frames=36, **options):
    model = rope(30, 0.6, (-0.3, 0.05, 0.35), **options)
    state = model.state()
    for _ in range(frames):
        step(model, state, DT, substeps, colliders=[collider, Plane((0, 0, -1.0))])
        assert np.all(np.isfinite(state.x)) and np.all(np.isfinite(state.v))
    return state


def test_degenerate_triangles_are_skipped_and_reported():
    vertices = np.concatenate([V, [[0.0, 0.0, 0.3], [0.0, 0.0, 0.3], [1.0, 0.0, 0.3]]])
    zero_area = [[8, 9, 10], [8, 8, 10], [2, 2, 2]]
    collider = Collider(vertices, np.concatenate([T, zero_area]))
    assert len(collider.triangles) == 12 and collider.closed
    assert any("3 degenerate" in p for p in collider.problems)
    state = drop_on(collider)
    np.testing.assert_allclose(state.x[np.abs(state.x[:, 0]) < 0.15, 2], 0.21, atol=0.002)
    only_slivers = Collider(vertices, zero_area)
    assert not only_slivers.usable and any("no usable" in p for p in only_slivers.problems)
    drop_on(only_slivers, frames=6)


def test_open_and_non_manifold_meshes_are_shells_and_reported():
    open_box = Collider(V, np.delete(T, [8, 9], axis=0))  # no bottom
    assert not open_box.closed and any("open mesh" in p for p in open_box.problems)
    state = drop_on(open_box)
    np.testing.assert_allclose(state.x[np.abs(state.x[:, 0]) < 0.15, 2], 0.21, atol=0.002)
    fins = np.concatenate([V, [[0.0, 0.0, 0.5], [0.0, 1.0, 0.5]]])  # two fins on one edge
    extra = Collider(fins, np.concatenate([T, [[1, 3, 8]], [[1, 3, 9]]]))
    assert not extra.closed and any("non-manifold" in p for p in extra.problems)
    drop_on(extra)
    flipped = Collider(V, np.concatenate([T[:6], T[6:, ::-1]]))
    assert not flipped.closed and any("winding" in p for p in flipped.problems)
    drop_on(flipped)


def test_inward_wound_closed_mesh_is_turned_outward():
    collider = Collider(V, T[:, ::-1])
    assert collider.closed and not collider.problems
    state = drop_on(collider)
    np.testing.assert_allclose(state.x[np.abs(state.x[:, 0]) < 0.15, 2], 0.21, atol=0.002)


def test_huge_and_far_colliders_stay_finite():
    ground_vertices = np.array([[-1e6, -1e6, 0.0], [1e6, -1e6, 0.0], [1e6, 1e6, 0.0],
                                [-1e6, 1e6, 0.0]])
    ground = Collider(ground_vertices, [[0, 1, 2], [0, 2, 3]], static_friction=0.0)
    state = drop_on(ground)
    np.testing.assert_allclose(state.x[:, 2], 0.01, atol=0.001)
    vertices, triangles = icosphere(1, 5e6, (0.0, 0.0, -5e6))
    drop_on(Collider(vertices, triangles), frames=6)


def test_rope_starting_inside_a_box_is_pushed_out_gently():
    """Two thirds of the rope start 5 mm deep in a box (15 mm from where they belong): they
    come out at about the push-out speed (1 m/s by default; undoing it in one substep would
    be 3.6 m/s), without flying off."""
    vertices, triangles = box((0.0, 0.0, 0.0), (0.2, 0.2, 0.2))
    collider = Collider(vertices, triangles, static_friction=0.0, dynamic_friction=0.0)
    model = rope(30, 0.6, (-0.2, 0.0, 0.195), radius=0.01)
    state = model.state()
    fastest = 0.0
    for _ in range(24):
        step(model, state, DT, 10, colliders=[collider], gravity=(0, 0, 0))
        fastest = max(fastest, np.linalg.norm(state.v, axis=1).max())
    assert fastest < 2.0
    inside = np.all(np.abs(state.x) < 0.2 + 0.009, axis=1)
    assert not inside.any()


def test_rope_of_radius_zero_collides_as_points():
    state = drop_on(Collider(V, T), radius=0.0)
    assert np.abs(state.x[np.abs(state.x[:, 0]) < 0.15, 2] - 0.2).max() < 1e-9
    model = rope(20, 0.5, radius=0.0, self_collision=True)  # nothing to collide: no-op
    state = model.state()
    step(model, state, DT, 5)
    assert np.all(np.isfinite(state.x))


def test_moved_collider_shares_the_analysis():
    collider = Collider(V, T, thickness=0.02, static_friction=0.1, dynamic_friction=0.05)
    later = collider.moved(V + 1.0, V + 2.0)
    assert later.triangles is collider.triangles and later.closed
    assert (later.thickness, later.static_friction, later.dynamic_friction) == (0.02, 0.1, 0.05)
    np.testing.assert_array_equal(later.vertices_end, V + 2.0)
    with pytest.raises(ValueError, match="^vertices:"):
        collider.moved(V[:3])


def test_a_collider_cannot_change_under_the_caches_kept_on_it():
    """Normals, the joined soup and its grid are kept on a collider across frames: its
    vertices are a read-only copy, so neither the caller's array nor the collider's own can
    change what it describes."""
    vertices, triangles = box()
    collider = Collider(vertices, triangles)
    vertices[0] = (9.0, 9.0, 9.0)  # the caller's array: the collider is not affected
    assert collider.vertices[0, 0] != 9.0
    with pytest.raises(ValueError):
        collider.vertices[0] = (9.0, 9.0, 9.0)
