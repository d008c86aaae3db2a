"""Bad input: a clear message, nothing changed, Blender keeps running (and other ropes go on).

Handler problems never raise; the object is skipped, its geometry left untouched, and the
message is kept for the panel (``sim.status``). Operators report an ERROR and cancel, which
bpy.ops turns into a RuntimeError carrying the message."""

from __future__ import annotations

import bmesh
import bpy
import numpy as np
import pytest

from xpbd_addon.blender.frame import sim

from . import ropes


@pytest.fixture
def witness(scene):
    """A healthy rope that must keep simulating whatever happens to the others."""
    return ropes.curve_rope(scene, "POLY", name="witness")


def _still_simulating(scene, witness, frames=(1, 2, 3, 4, 5, 6)):
    for frame in frames:
        scene.frame_set(frame)
    assert sim.status(witness) is None
    assert ropes.world_points(witness)[-1, 2] < -0.05


def test_empty_enabled(scene, witness):
    empty = bpy.data.objects.new("empty", None)
    scene.collection.objects.link(empty)
    empty.xpbd.enabled = True
    _still_simulating(scene, witness)
    assert "empty" in sim.status(empty).lower()
    bpy.context.view_layer.objects.active = empty
    with pytest.raises(RuntimeError, match="empty has no geometry"):
        bpy.ops.xpbd.reset()


def test_text_enabled(scene, witness):
    text = ropes.link(scene, "text", bpy.data.curves.new("text", "FONT"))
    text.xpbd.enabled = True
    _still_simulating(scene, witness)
    assert "font object cannot be a rope" in sim.status(text)
    with pytest.raises(RuntimeError, match="cannot be a rope"):
        bpy.ops.xpbd.reset()


def test_mesh_without_edges(scene, witness):
    mesh = bpy.data.meshes.new("points")
    mesh.from_pydata([(0, 0, 0), (1, 0, 0), (2, 0, 0)], [], [])
    obj = ropes.link(scene, "points", mesh)
    obj.xpbd.enabled = True
    before = ropes.local_points(obj).copy()
    _still_simulating(scene, witness)
    assert "no edges" in sim.status(obj)
    assert np.array_equal(ropes.local_points(obj), before)
    with pytest.raises(RuntimeError, match="no edges"):
        bpy.ops.xpbd.reset()


def test_curve_with_fewer_than_two_points(scene, witness):
    curve = bpy.data.curves.new("dot", "CURVE")
    curve.splines.new("POLY")  # one point
    obj = ropes.link(scene, "dot", curve)
    curve.splines[0].points[0].co = (0.5, 0.25, 1.0, 1.0)
    obj.xpbd.enabled = True
    _still_simulating(scene, witness)
    assert "no spline with two or more points" in sim.status(obj)
    assert tuple(curve.splines[0].points[0].co) == (0.5, 0.25, 1.0, 1.0)


def test_vertex_added_in_edit_mode_while_simulating(scene, witness):
    obj = ropes.mesh_rope(scene)
    rest = ropes.local_points(obj).copy()
    ropes.play(scene, 1, 10)
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="EDIT")
    scene.frame_set(11)  # playing on while in Edit Mode: the rope is paused, not written
    assert "Edit Mode" in sim.status(obj)
    edit = bmesh.from_edit_mesh(obj.data)
    edit.verts.new((5.0, 5.0, 5.0))
    bmesh.update_edit_mesh(obj.data)
    bpy.ops.object.mode_set(mode="OBJECT")
    edited = ropes.local_points(obj).copy()
    assert len(edited) == 13
    ropes.play(scene, 12, 14)
    assert "topology changed" in sim.status(obj).lower()
    assert np.array_equal(ropes.local_points(obj), edited), "the user's edit was overwritten"
    _still_simulating(scene, witness, frames=(15, 16))
    # Reset adopts the edited shape as the new rest shape, and the rope simulates again.
    assert bpy.ops.xpbd.reset() == {"FINISHED"}
    ropes.play(scene, 1, 5)
    assert sim.status(obj) is None
    assert ropes.local_points(obj)[-2, 2] < rest[-1, 2] - 0.05


def test_missing_pin_group(scene, witness):
    obj = ropes.mesh_rope(scene)
    obj.xpbd.pin_group = "nope"
    before = ropes.local_points(obj).copy()
    _still_simulating(scene, witness)
    assert sim.status(obj) == "Pin group 'nope' does not exist on 'mesh_rope'"
    assert np.array_equal(ropes.local_points(obj), before)


def test_pin_group_deleted_while_simulating(scene, witness):
    obj = ropes.mesh_rope(scene)
    ropes.play(scene, 1, 5)
    obj.vertex_groups.remove(obj.vertex_groups["pin"])
    before = ropes.local_points(obj).copy()
    ropes.play(scene, 6, 8)
    assert "Pin group 'pin' does not exist" in sim.status(obj)
    assert np.array_equal(ropes.local_points(obj), before)
    assert sim.status(witness) is None


def test_object_deleted_during_playback(scene, witness):
    obj = ropes.mesh_rope(scene)
    ropes.play(scene, 1, 5)
    uid = obj.session_uid
    bpy.data.objects.remove(obj)
    ropes.play(scene, 6, 9)
    assert uid not in sim.REGISTRY
    _still_simulating(scene, witness, frames=(10, 11))


def test_zero_scale(scene, witness):
    obj = ropes.curve_rope(scene, "POLY")
    ropes.play(scene, 1, 5)
    before = ropes.local_points(obj).copy()
    obj.scale = (1.0, 0.0, 1.0)
    ropes.play(scene, 6, 8)
    assert "scale of zero" in sim.status(obj)
    assert np.array_equal(ropes.local_points(obj), before)
    assert np.all(np.isfinite(ropes.local_points(obj)))


def test_out_of_range_values_are_clamped_by_the_properties(scene):
    obj = ropes.curve_rope(scene, "POLY")
    obj.xpbd.compliance = -1.0
    obj.xpbd.substeps = 0
    obj.xpbd.vertex_mass = -3.0
    obj.xpbd.damping = -1.0
    assert obj.xpbd.compliance == 0.0
    assert obj.xpbd.substeps == 1
    assert obj.xpbd.vertex_mass > 0.0
    assert obj.xpbd.damping == 0.0
    ropes.play(scene, 1, 4)
    assert sim.status(obj) is None
    assert np.all(np.isfinite(ropes.local_points(obj)))


@pytest.mark.parametrize("value", [float("inf"), 1e30])
def test_a_length_scale_set_from_a_script_beyond_its_range_pays_out_1000_times(scene, value):
    """Length Scale inf or 1e30 from a script (found by the fuzz sessions): Blender clamped
    it to the float maximum, 3.4e38, which passed as a finite scale; the rest lengths were
    then 1e38 m, the panel said the simulation blew up and asked for more substeps, and the
    preparation in the background failed. Its range ends at 1000 now: the rope pays out to
    1000 times its length and plays."""
    obj = ropes.curve_rope(scene, "POLY")
    obj.xpbd.length_scale = value
    assert obj.xpbd.length_scale == 1000.0
    ropes.play(scene, 1, 4)
    assert sim.status(obj) is None
    assert np.all(np.isfinite(ropes.local_points(obj)))


def test_a_start_frame_a_million_frames_back_stops_the_rope_instead_of_replaying(scene,
                                                                                 witness):
    """Simulation Start set from a script to -2**31: the first frame change replayed every
    frame from there, two billion, and Blender never came back. The Start keeps to the range
    of Blender's own caches (+-1,048,574), and a frame change simulates at most
    ``MAX_REPLAY`` frames: the rope says so and keeps its shape; the other rope plays on,
    and the rope plays again once its Start is near."""
    from xpbd_addon import handlers

    obj = ropes.curve_rope(scene, "POLY", name="far")
    before = ropes.local_points(obj).copy()
    obj.xpbd.frame_start = -2**31
    assert obj.xpbd.frame_start == -1_048_574
    obj.xpbd.frame_end = 2**31 - 1
    assert obj.xpbd.frame_end == 1_048_574
    _still_simulating(scene, witness)
    assert f"at most {handlers.MAX_REPLAY:,}" in sim.status(obj)
    assert np.array_equal(ropes.local_points(obj), before)
    obj.xpbd.frame_start = 1
    ropes.play(scene, 1, 3)
    assert sim.status(obj) is None
    assert ropes.world_points(obj)[-1, 2] < -0.01


def test_nan_compliance(scene, witness):
    obj = ropes.curve_rope(scene, "POLY")
    ropes.play(scene, 1, 3)
    before = ropes.local_points(obj).copy()
    obj.xpbd.compliance = float("nan")  # FloatProperty min does not catch NaN
    ropes.play(scene, 4, 6)
    assert "Compliance must be a number" in sim.status(obj)
    assert np.array_equal(ropes.local_points(obj), before)
    _still_simulating(scene, witness, frames=(7,))


def test_nan_reaching_the_solver_through_a_pin(scene, witness):
    obj = ropes.curve_rope(scene, "POLY")
    target = bpy.data.objects.new("target", None)
    scene.collection.objects.link(target)
    hook = obj.modifiers.new("Hook", "HOOK")
    hook.object = target
    hook.vertex_indices_set([0])
    ropes.play(scene, 1, 4)
    before = ropes.local_points(obj).copy()
    target.location = (float("nan"), 0.0, 0.0)
    ropes.play(scene, 5, 7)
    assert "NaN" in sim.status(obj)
    assert np.array_equal(ropes.local_points(obj), before)
    _still_simulating(scene, witness, frames=(8,))


def test_handler_never_raises(scene, monkeypatch):
    from xpbd_addon import handlers

    ropes.curve_rope(scene, "POLY")

    def broken(*_args, **_kwargs):
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(handlers, "update_scene", broken)
    scene.frame_set(2)  # must not raise
    handlers.on_frame_change_post(scene, None)


def test_numba_that_cannot_load_is_reported_per_rope(scene, monkeypatch):
    from xpbd_addon import dependencies

    obj = ropes.curve_rope(scene, "POLY")
    before = ropes.local_points(obj).copy()
    monkeypatch.setattr(dependencies, "load_numba", lambda: "numba cannot load: test")
    ropes.play(scene, 1, 3)
    assert sim.status(obj) == "numba cannot load: test"
    assert np.array_equal(ropes.local_points(obj), before)


def test_mesh_with_shape_keys(scene, witness):
    obj = ropes.mesh_rope(scene)
    obj.shape_key_add(name="Basis")
    before = ropes.local_points(obj).copy()
    _still_simulating(scene, witness)
    assert "shape keys" in sim.status(obj)
    assert np.array_equal(ropes.local_points(obj), before)


def test_a_bug_in_one_rope_does_not_stop_the_others(scene, witness, monkeypatch):
    obj = ropes.curve_rope(scene, "POLY", name="buggy")
    real_targets = sim.RopeSim.targets

    def targets(self, target, *args, **kwargs):
        if target.name == "buggy":
            raise ZeroDivisionError("a bug")
        return real_targets(self, target, *args, **kwargs)

    monkeypatch.setattr(sim.RopeSim, "targets", targets)
    _still_simulating(scene, witness)
    assert sim.status(obj) == "Internal error (ZeroDivisionError: a bug); see the console"


def test_linked_library_data_is_refused(scene, witness, tmp_path):
    library = tmp_path / "library.blend"
    ropes.curve_rope(scene, "POLY", name="linked_rope")
    bpy.data.libraries.write(str(library), {bpy.data.objects["linked_rope"]})
    bpy.data.objects.remove(bpy.data.objects["linked_rope"])
    with bpy.data.libraries.load(str(library), link=True) as (_source, target):
        target.objects = ["linked_rope"]
    linked = target.objects[0]
    scene.collection.objects.link(linked)
    _still_simulating(scene, witness)
    assert "linked from a library" in sim.status(linked)


def test_two_simulated_objects_sharing_one_curve(scene):
    first = ropes.curve_rope(scene, "POLY", name="first")
    second = ropes.link(scene, "second", first.data)
    second.location = (0.0, 3.0, 0.0)
    second.xpbd.enabled = True
    ropes.play(scene, 1, 6)
    assert sim.status(first) is None
    assert "Shares its data with 'first'" in sim.status(second)
    assert ropes.world_points(first)[-1, 2] < -0.05


def test_damping_beyond_what_a_substep_can_hold_is_refused_by_name(scene, witness):
    """Damping 2e5 1/s with Self Collision (exp(-d h) / h underflows to 0 at 10 substeps),
    and infinity set from a script (stored as 3.4e38): the message names Damping, nothing
    is written, and the rope simulates again once Damping is back."""
    obj = ropes.curve_rope(scene, "POLY")
    obj.xpbd.use_self_collision = True
    obj.xpbd.radius = 0.02
    obj.keyframe_insert("location", frame=1)
    obj.location = (0.0, 0.0, 3.0)
    obj.keyframe_insert("location", frame=6)
    ropes.play(scene, 1, 3)
    for value in (2e5, float("inf")):
        before = ropes.local_points(obj).copy()
        obj.xpbd.damping = value
        ropes.play(scene, 4, 6)
        message = sim.status(obj)
        assert message is not None and "Damping" in message, message
        assert "Internal error" not in message
        assert np.array_equal(ropes.local_points(obj), before)
    obj.xpbd.damping = 50.0  # high, but within what a substep can hold
    ropes.play(scene, 1, 6)
    assert sim.status(obj) is None
    _still_simulating(scene, witness)


def _hand(scene):
    """An empty 2 m along x, for attachments to hold on to."""
    target = bpy.data.objects.new("hand", None)
    scene.collection.objects.link(target)
    target.location = (2.0, 0.0, 0.0)
    return target


def _attach_last_point(obj, target):
    bpy.context.view_layer.objects.active = obj
    assert bpy.ops.xpbd.attachment_add() == {"FINISHED"}
    obj.xpbd.attachments[0].target = target
    obj.xpbd.attachments[0].point = -1


def test_attachment_target_with_zero_scale(scene, witness):
    """An empty scaled to zero holding a point: a message like a rope's own zero scale, no
    Internal error, nothing written; the rope goes on once the scale is back."""
    obj = ropes.curve_rope(scene, "POLY")
    target = _hand(scene)
    _attach_last_point(obj, target)
    ropes.play(scene, 1, 3)
    before = ropes.local_points(obj).copy()
    target.scale = (0.0, 0.0, 0.0)  # the hold starts again at the start frame, scaled
    ropes.play(scene, 1, 5)
    message = sim.status(obj)
    assert message is not None and "scale of zero" in message and "hand" in message, message
    assert np.array_equal(ropes.local_points(obj), before)
    target.scale = (1.0, 1.0, 1.0)
    ropes.play(scene, 1, 5)
    assert sim.status(obj) is None
    _still_simulating(scene, witness)


def test_an_attachment_switched_off_may_hold_on_to_a_zero_scale_target(scene):
    """Only an attachment that is on needs its target's inverse: one switched off whose
    target is scaled to zero (an object made to vanish) leaves the rope simulating."""
    obj = ropes.curve_rope(scene, "POLY")
    target = bpy.data.objects.new("gone", None)
    scene.collection.objects.link(target)
    target.scale = (0.0, 0.0, 0.0)
    bpy.context.view_layer.objects.active = obj
    assert bpy.ops.xpbd.attachment_add() == {"FINISHED"}
    obj.xpbd.attachments[0].target = target
    obj.xpbd.attachments[0].enabled = False
    obj.xpbd.attachments[0].keyframe_insert("enabled", frame=1)  # (evaluated: tagged)
    ropes.play(scene, 1, 5)
    assert sim.status(obj) is None
    assert ropes.world_points(obj)[-1, 2] < -0.05


@pytest.mark.parametrize("where", ["location", "scale", "attachment", "moved while playing"])
def test_a_rope_placed_or_held_beyond_the_worlds_coordinates_is_told_so(scene, witness, where):
    """A rope moved 20,000 km away, scaled 1e8 times, or a point attached to an empty that
    moves 1e30 m away: its points are beyond what single precision can place. The safety
    net said the simulation blew up and asked for more substeps, blaming the solve for what
    its input did (and a hold taken again at the start frame from 1e30 m put its point at
    the origin); the message says what placed it there, nothing is written, and the rope
    plays again once it is back."""
    obj = ropes.curve_rope(scene, "POLY")
    target = _hand(scene)
    if where == "attachment":
        _attach_last_point(obj, target)
    ropes.play(scene, 1, 3)
    before = ropes.local_points(obj).copy()
    if where in ("location", "moved while playing"):  # (the latter: its pinned point)
        obj.location = (2e7, 0.0, 0.0)
    elif where == "scale":
        obj.scale = (1e8, 1e8, 1e8)
    else:  # (moved while it holds: at the start frame a hold takes the point where it is)
        target.location = (1e30, 0.0, 0.0)
    ropes.play(scene, 1 if where in ("location", "scale") else 4, 5)
    message = sim.status(obj) or ""
    assert "from the world origin" in message and "blew up" not in message, message
    if where == "moved while playing":  # (its frames are where they were in the world)
        assert np.isfinite(ropes.local_points(obj)).all()
    else:
        assert np.array_equal(ropes.local_points(obj), before)
    obj.location, obj.scale, target.location = (0.0, 0.0, 0.0), (1.0, 1.0, 1.0), (2.0, 0, 0)
    ropes.play(scene, 1, 5)
    assert sim.status(obj) is None
    _still_simulating(scene, witness)
