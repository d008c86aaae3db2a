"""Many rope objects (a rig's tails and cables, each its own object): ropes that do not collide
with each other but agree on the Model-wide settings are stepped as one core Model (a batch,
``group.batches``) for speed. Each moves exactly as it moves alone, in any frame order; a
rope that differs is stepped alone; a rope that fails stops alone and the others go on."""

from __future__ import annotations

import bpy
import numpy as np

from xpbd_addon.blender.frame import runs, sim

from . import ropes


def _ropes(scene, count=5):
    """Curves and meshes of different lengths side by side over a box with Collision
    physics, first points pinned, radius 1 cm."""
    bpy.ops.mesh.primitive_cube_add(size=1.0, location=(0.3, 0.4, -0.4))
    box = bpy.context.object
    box.name = "box"
    box.modifiers.new("Collision", "COLLISION")
    objects = []
    for k in range(count):
        n = 10 + 3 * k
        if k % 2:
            obj = ropes.mesh_rope(scene, n=n, length=0.1 * n, name=f"mesh{k}")
        else:
            obj = ropes.curve_rope(scene, "POLY", n=n, length=0.1 * n, name=f"curve{k}")
        obj.location = (0.0, 0.2 * k, 0.0)
        obj.xpbd.radius = 0.01
        objects.append(obj)
    return objects


def _runs(scene):
    return [run for run in runs.RUNS.values() if run.scene_name == scene.name]


def test_ropes_that_do_not_collide_are_stepped_together_and_move_as_alone(scene):
    objects = _ropes(scene)
    together = ropes.played_points(scene, objects, 1, 24)
    runs = _runs(scene)
    assert len(runs) == 1 and runs[0].batch and len(runs[0].ropes) == len(objects)
    assert all(sim.status(o) is None for o in objects)
    lowest = min(together[24][o.name][:, 2].min() for o in objects)
    assert lowest < -0.5  # they swung down past the box's top, some of them onto it
    ropes.assert_each_alone_equals(scene, objects, together, 1, 24)
    ropes.assert_any_order_equals(scene, objects[3], together, 1, 24, seed=3)
    assert len(_runs(scene)) == 1


def test_a_rope_with_other_settings_is_stepped_alone(scene):
    objects = _ropes(scene, count=4)
    objects[2].xpbd.substeps = 20  # a Model-wide setting: not with the others
    objects[3].xpbd.use_self_collision = True  # collides with itself: a Model of its own
    ropes.play(scene, 1, 5)
    sizes = sorted(len(run.ropes) for run in _runs(scene))
    assert sizes == [1, 1, 2], sizes


def test_a_rope_that_fails_in_a_batch_stops_alone_and_the_others_go_on(scene):
    """A curve hooked to an empty whose location becomes NaN: its pin target is NaN, the
    batch it was stepped in fails that frame; from then on each rope is stepped alone, the
    hooked one says why it stopped, and the others keep playing."""
    objects = _ropes(scene, count=4)
    hooked = objects[2]
    hooked.xpbd.pin_first = False
    empty = bpy.data.objects.new("hook", None)
    scene.collection.objects.link(empty)
    empty.location = (0.0, 0.4, 0.0)
    hook = hooked.modifiers.new("Hook", "HOOK")
    hook.object = empty
    hook.vertex_indices_set([0])
    ropes.play(scene, 1, 6)
    assert len(_runs(scene)) == 1 and all(sim.status(o) is None for o in objects)
    before = {o.name: ropes.world_points(o).copy() for o in objects}
    empty.location.x = float("nan")
    ropes.play(scene, 7, 12)
    assert "NaN" in (sim.status(hooked) or "")
    for obj in objects:
        if obj is not hooked:
            assert sim.status(obj) is None, obj.name
            assert np.abs(ropes.world_points(obj) - before[obj.name]).max() > 0.01
            assert np.all(np.isfinite(ropes.world_points(obj)))
    assert np.all(np.isfinite(ropes.local_points(hooked)))  # nothing NaN was written
    assert all(len(run.ropes) == 1 for run in _runs(scene))  # each alone now
    for obj in (objects[0], objects[3]):  # rebuilt simulations may be batched again
        obj.xpbd.damping = 0.3
    ropes.play(scene, 13, 14)
    assert sorted(len(run.ropes) for run in _runs(scene)) == [1, 1, 2]


def test_ropes_joining_and_leaving_a_batch_mid_shot_keep_their_frames_exact(scene):
    """A box swept through four ropes: one rope is enabled at frame 10 and another disabled
    at frame 16 while playing. The batch changes each time; the ropes that stay keep their
    cached frames (not simulated again) and every rope's frames equal its frames alone."""
    objects = _ropes(scene, count=4)
    box = bpy.data.objects["box"]
    box.location = (-0.6, 0.3, -0.2)
    box.scale = (0.1, 1.5, 0.6)
    driver = box.driver_add("location", 0).driver
    driver.type = "SCRIPTED"
    driver.expression = "-0.6 + (frame - 1) * 1.5 / 24.0"
    late, leaving = objects[1], objects[2]
    late.xpbd.enabled = False
    played = ropes.played_points(scene, [o for o in objects if o is not late], 1, 9)
    kept = dict(sim.REGISTRY[objects[0].session_uid].cache)
    late.xpbd.enabled = True
    for frame in range(10, 16):
        scene.frame_set(frame)
        played[frame] = {o.name: ropes.world_points(o).copy() for o in objects}
    cache = sim.REGISTRY[objects[0].session_uid].cache
    assert all(cache[k] is kept[k] for k in kept), "a rope already played was simulated again"
    leaving.xpbd.enabled = False
    for frame in range(16, 25):
        scene.frame_set(frame)
        played[frame] = {o.name: ropes.world_points(o).copy()
                         for o in objects if o is not leaving}
    assert len(_runs(scene)) == 1 and _runs(scene)[0].batch
    for obj in objects:
        for other in objects:
            other.xpbd.enabled = other is obj
        last = 15 if obj is leaving else 24
        alone = ropes.played_points(scene, [obj], 1, last)
        for frame in range(1 if obj is not late else 10, last + 1):
            np.testing.assert_array_equal(alone[frame][obj.name], played[frame][obj.name],
                                          err_msg=f"{obj.name} at frame {frame}")


def test_each_rope_of_a_batch_has_its_own_energy_check(scene):
    """The safety net's energy test (a rope that nothing moves cannot gain energy) is made
    per rope in a batch: a sum over the batch would let one rope's loss hide another's
    gain. One rope's energy budget at frame 5 is lowered by 1 kJ as if it had gained that
    much: it stops with the safety net's message, the others go on."""
    objects = []
    for k in range(3):
        obj = ropes.curve_rope(scene, "POLY", n=12, name=f"rope{k}")
        obj.location = (0.0, 0.3 * k, 0.0)
        objects.append(obj)
    ropes.play(scene, 1, 5)
    assert len(_runs(scene)) == 1 and _runs(scene)[0].batch
    sim.REGISTRY[objects[1].session_uid].track.cache[5].budget -= 1000.0
    before = {o.name: ropes.world_points(o).copy() for o in objects}
    ropes.play(scene, 6, 8)
    assert "gained energy" in (sim.status(objects[1]) or ""), sim.status(objects[1])
    for obj in (objects[0], objects[2]):
        assert sim.status(obj) is None
        assert np.abs(ropes.world_points(obj) - before[obj.name]).max() > 0.01


def test_a_rope_of_a_batch_bakes_what_it_played(scene):
    """The bake steps a rope alone (a batch changes no bit): baked to keys (shape keys of a
    mesh), one rope of a batch plays back exactly what it showed live beside the others."""
    scene.frame_start, scene.frame_end = 1, 16
    objects = _ropes(scene, count=3)
    baked = objects[1]  # a mesh: shape keys hold its float32 points as written live
    live = {}
    for frame in range(1, 17):
        scene.frame_set(frame)
        live[frame] = ropes.local_points(baked).copy()
    assert _runs(scene)[0].batch
    scene.frame_set(1)
    for obj in objects:
        obj.select_set(obj is baked)
    bpy.context.view_layer.objects.active = baked
    assert bpy.ops.xpbd.bake(target="KEYS") == {"FINISHED"}
    for frame in (16, 5, 11):
        scene.frame_set(frame)
        evaluated = baked.evaluated_get(bpy.context.evaluated_depsgraph_get()).data
        points = np.empty(3 * len(evaluated.vertices), dtype=np.float32)
        evaluated.attributes["position"].data.foreach_get("vector", points)
        np.testing.assert_array_equal(points.reshape(-1, 3), live[frame],
                                      err_msg=f"frame {frame}")
