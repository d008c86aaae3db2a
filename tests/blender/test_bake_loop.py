"""Loop bake and Bake Selected (issue 34, part 2).

- ``Object.xpbd.bake.loop``: a rope hanging from an empty that circles with a cyclic
  animation (F-Curve Cycles modifier, period = the bake range) is baked as a loop; played
  back by Blender (evaluated mesh, shape keys; the bone rig's pose), the seam from the last
  frame to the first jumps by less than 1 % of the motion's range in position and velocity
  against where the live simulation goes after the last frame, and no more sharply than the
  loop changes velocity anywhere else. Without Loop the same bake jumps by far more (the
  rope starts from rest): the measure can fail.
- ``xpbd.bake_selected``: of three ropes, the two selected are baked, the third is not.
"""

from __future__ import annotations

import bpy
import numpy as np
import pytest

from xpbd_addon.blender.bake import loop as bake_loop

from . import ropes

FIRST, LAST = 1, 48
PERIOD = LAST - FIRST + 1
"""The bake range [frame] and the empty's period: frame LAST + 1 is frame FIRST again."""


def _circling(scene):
    """A 12-point mesh rope (1 m) hanging from an empty that circles (0.3 m radius) once per
    PERIOD frames, forever (Cycles modifier)."""
    scene.frame_start, scene.frame_end = FIRST, LAST
    empty = bpy.data.objects.new("hand", None)
    scene.collection.objects.link(empty)
    for k in range(5):
        angle = 2.0 * np.pi * k / 4
        empty.location = (0.3 * np.cos(angle), 0.3 * np.sin(angle), 1.0)
        empty.keyframe_insert("location", frame=FIRST + k * PERIOD // 4)
    from xpbd_addon.blender.bake import action_compat

    factory, _ = action_compat.ensure_action(empty, "unused")
    for fcurve in factory._collection:
        fcurve.modifiers.new("CYCLES")
        for key in fcurve.keyframe_points:
            key.interpolation = "BEZIER"
    rope = ropes.mesh_rope(scene, n=12, length=1.0, axis=2, name="tail")
    rope.parent = empty
    rope.xpbd.damping = 0.5
    scene.frame_set(FIRST)
    return empty, rope


def _played(scene, obj, frames, target="KEYS"):
    """World points [F, N, 3] of ``obj`` as Blender plays it at ``frames``: the evaluated
    mesh (baked shape keys, or the live simulation), the heads of the baked rig's bones
    (BONES), or the first N points of the "<rope> Cache" object playing the file (CACHE)."""
    count = len(obj.data.vertices)
    if target == "CACHE":
        obj = bpy.data.objects[f"{obj.name} Cache"]
    out = []
    for frame in frames:
        scene.frame_set(frame)
        if target == "BONES":
            rig = obj.xpbd.bake.rig
            m = np.array(rig.matrix_world)
            heads = np.array([b.head for b in rig.pose.bones])
            out.append(heads @ m[:3, :3].T + m[:3, 3])
            continue
        evaluated = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
        buf = np.empty(3 * len(evaluated.data.vertices), dtype=np.float32)
        evaluated.data.attributes["position"].data.foreach_get("vector", buf)
        m = np.array(evaluated.matrix_world)
        points = buf.reshape(-1, 3)[:count].astype(np.float64)
        out.append(points @ m[:3, :3].T + m[:3, 3])
    return np.array(out)


@pytest.mark.parametrize("target", ["KEYS", "BONES", "CACHE"])
def test_a_loop_bake_flows_from_its_last_frame_into_its_first(scene, target, tmp_path):
    _empty, rope = _circling(scene)
    rope.xpbd.bake.cache_path = str(tmp_path / "loop.abc")
    live = _played(scene, rope, range(FIRST, LAST + 3))  # S(first) .. S(last + 2)
    frame_time = scene.render.fps_base / scene.render.fps
    rope.xpbd.bake.loop = True
    assert bpy.ops.xpbd.bake(target=target) == {"FINISHED"}
    baked = _played(scene, rope, range(FIRST, LAST + 1), target)
    seam = bake_loop.seam(baked, live, frame_time)
    print(f"{target}: loop seam {100 * seam.position:.3f} % position, "
          f"{100 * seam.velocity:.3f} % velocity, sharpness {seam.sharpness:.2f}; reported "
          f"{100 * rope.xpbd.bake.loop_seam_position:.3f} %, "
          f"{100 * rope.xpbd.bake.loop_seam_velocity:.3f} %")
    assert seam.position < 0.01 and seam.velocity < 0.01
    assert seam.sharpness < 1.0  # the seam is no sharper than the loop is anywhere else
    assert rope.xpbd.bake.loop_seam_velocity == pytest.approx(seam.velocity, abs=1e-3)
    # the frames after the first Loop Frames are the simulation's own
    k = rope.xpbd.bake.loop_frames
    assert np.abs(baked[k:] - live[k:PERIOD]).max() < 1e-4  # (the cache's float32: 1e-6 m)
    # what the fade costs (docs/bake.md): the loop's velocity against the simulation's over
    # the faded frames, as a fraction of the velocity's range
    speed = np.diff(np.concatenate([baked, baked[:1]]), axis=0) / frame_time
    off = np.linalg.norm(np.diff(baked[:k + 1], axis=0) - np.diff(live[:k + 1], axis=0),
                         axis=-1).max() / frame_time
    print(f"{target}: the fade's velocity off the simulation's by up to "
          f"{100 * off / np.linalg.norm(np.ptp(speed, axis=0), axis=-1).max():.0f} %")

    # the same bake without Loop: the rope starts from rest, a jump the measure shows
    assert bpy.ops.xpbd.free_bake() == {"FINISHED"}
    rope.xpbd.bake.loop = False
    assert bpy.ops.xpbd.bake(target=target) == {"FINISHED"}
    plain = bake_loop.seam(_played(scene, rope, range(FIRST, LAST + 1), target), live,
                           frame_time)
    print(f"{target} without Loop: seam {100 * plain.position:.1f} % position, "
          f"{100 * plain.velocity:.1f} % velocity")
    assert plain.position > 0.05


def test_a_loop_bake_of_an_animation_that_does_not_repeat_says_so(scene):
    empty, rope = _circling(scene)
    from xpbd_addon.blender.bake import action_compat

    factory, _ = action_compat.ensure_action(empty, "unused")
    for fcurve in factory._collection:  # no Cycles: the empty stops at its last key
        fcurve.modifiers.remove(fcurve.modifiers[0])
    scene.frame_end = LAST - 6  # and the range ends before the cycle does
    rope.xpbd.bake.loop = True
    from xpbd_addon.blender.bake import job as bake

    job = bake.BakeJob(bpy.context, [rope], "KEYS")
    job.run()
    messages = job.write()
    assert len(job.warnings) == 1 and "does not repeat" in job.warnings[0], job.warnings
    assert "m from where they start" in job.warnings[0]
    assert rope.xpbd.bake.baked and "a loop" in messages[0]


def test_loop_frames_longer_than_the_range_are_refused(scene):
    _empty, rope = _circling(scene)
    rope.xpbd.bake.loop = True
    rope.xpbd.bake.loop_frames = LAST
    with pytest.raises(RuntimeError, match="Loop Frames"):
        bpy.ops.xpbd.bake()
    assert not rope.xpbd.bake.baked


def test_bake_selected_bakes_exactly_the_selected_ropes(scene):
    scene.frame_start, scene.frame_end = 1, 6
    made = [ropes.mesh_rope(scene, n=6, length=0.5, name=f"rope_{k}") for k in range(3)]
    for k, obj in enumerate(made):
        obj.location = (0.0, float(k), 0.0)
    view_layer = bpy.context.view_layer
    for o in view_layer.objects:
        o.select_set(False)
    made[0].select_set(True)
    made[2].select_set(True)
    view_layer.objects.active = made[1]  # active but not selected: not baked
    assert bpy.ops.xpbd.bake_selected(target="KEYS") == {"FINISHED"}
    assert [o.xpbd.bake.baked for o in made] == [True, False, True]
    with pytest.raises(RuntimeError, match="No selected rope to bake"):
        bpy.ops.xpbd.bake_selected()  # the selected ones are baked already
