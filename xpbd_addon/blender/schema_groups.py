"""The settings of ``Object.xpbd``'s groups, declared as its own settings are (``schema.Setting``):
an attachment (an item of ``Object.xpbd.attachments``) and the bake (``Object.xpbd.bake``).

properties.py builds the PropertyGroups ``XPBD_PG_attachment`` and ``XPBD_PG_bake`` from
these, as it builds ``XPBD_PG_settings`` from ``schema.SETTINGS``. What the simulation reads
of an attachment is in read/attachments.py (``specs``, ``key``: its fixed fields are part of
the cache key, ``enabled`` is read at every frame); the bake reads its group in bake/job.py.
The declarations are not in ``schema.SETTINGS``: they are no rope setting (no check, no
sharing between ropes, no Model keyword), and the bake's record (``baked``, ``action``, ...)
is written by the bake, not typed by a user.

Nothing here imports bpy: a ``POINTER`` names its ``bpy.types`` struct in
``options["type"]``; properties.py resolves it and adds the callbacks (``poll``). A label
"" leaves the property unnamed (Blender shows its identifier), as the bake's record is.
"""

from __future__ import annotations

from .schema import BOOL, ENUM, FLOAT, INT, POINTER, STRING, Setting

ATTACHMENT: tuple[Setting, ...] = (
    Setting("target", POINTER, "Target",
            "The object (a hand's empty, a prop, an armature) the points follow", None,
            options={"type": "Object"}),
    Setting("subtarget", STRING, "Bone",
            "Armature targets: the bone the points follow; empty = the armature object "
            "itself", ""),
    Setting("vertex_group", STRING, "Vertex Group", "Meshes: the vertices held (weight > 0)",
            ""),
    Setting("point", INT, "Point",
            "Curves: the index [count] of the held point within its spline; -1 = the last "
            "point, -2 the one before", -1, "count", options={"min": -100000, "max": 100000}),
    Setting("spline", INT, "Spline", "Curves: the index [count] of the spline of the held "
            "point", 0, "count", options={"min": 0, "max": 100000}),
    Setting("enabled", BOOL, "Enabled",
            "The points follow the target while on (keyframe it: on = grab the rope where it "
            "is, off = let go)", True, animatable=True),
    Setting("compliance", FLOAT, "Compliance",
            "How the points are held [m/N]: 0 = rigidly; larger = on a spring that stretches "
            "by compliance*force", 0.0, "m/N",
            options={"min": 0.0, "soft_max": 0.01, "precision": 7, "step": 0.0001}),
    Setting("break_force", FLOAT, "Break Force",
            "Force [N] above which the attachment lets go for the rest of the run. 0 = never",
            0.0, "N", options={"min": 0.0, "soft_max": 1000.0, "precision": 2}),
)
"""One attachment: what it holds, what it follows, how (``Object.xpbd.attachments[i]``)."""

BAKE_TARGETS = (
    ("KEYS", "Keyframes", "Curves: keyframes on every point; meshes: one shape key per frame"),
    ("BONES", "Bones", "An armature with a bone chain along each rope and the rope skinned to "
                       "it (for glTF/FBX export and game engines)"),
    ("CACHE", "Cache", "An Alembic (or USD) point-cache file played by a Mesh Sequence Cache "
                       "modifier (big bakes: the .blend stays small)"),
)
"""What a bake writes (``Object.xpbd.bake.target``, the bake operator's ``target``)."""

BAKE: tuple[Setting, ...] = (
    Setting("use_scene_range", BOOL, "Scene Frame Range",
            "Bake the scene's frame range; off: the Start and End below", True),
    Setting("frame_start", INT, "Start", "First baked frame [frame] (the rest shape)", 1,
            "frame"),
    Setting("frame_end", INT, "End", "Last baked frame [frame]", 250, "frame"),
    Setting("target", ENUM, "Bake To",
            "What Bake writes for this rope when the operator is not told (its target "
            "argument): keyframes / shape keys, bones, or a cache file", "KEYS",
            items=BAKE_TARGETS),
    Setting("curve_format", ENUM, "Curves To",
            "What a curve's Bake writes (meshes always bake to shape keys)", "KEYFRAMES",
            items=(("KEYFRAMES", "Point Keyframes",
                    "Keyframes on every point (editable in the Graph Editor; 3 F-Curves per "
                    "point, slow to play back with many points)"),
                   ("SHAPE_KEYS", "Shape Keys",
                    "One shape key per frame (fast to bake and to play back, like meshes)"))),
    Setting("bone_segments", INT, "Segments per Bone",
            "Bake to Bones: rope segments per bone [count]. 1 = a bone on every point "
            "(exact); more = fewer bones, points in between blended", 1, "count",
            options={"min": 1, "soft_max": 20}),
    Setting("bone_armature", POINTER, "Armature",
            "Bake to Bones: add the rope's bones to this armature (a character's rig) and key "
            "them in the Action it plays; empty = an armature of the rope's own", None,
            options={"type": "Object"}),
    Setting("bone_parent", STRING, "Parent Bone",
            "Bake to Bones: the bone of the Armature that each of the rope's bone chains "
            "hangs from (e.g. the hand the rope is pinned to); empty = the chains have no "
            "parent", ""),
    # The record of a bake, written by it (Free Bake reads it back).
    Setting("baked", BOOL, "Baked",
            "The rope plays its baked animation; the simulation leaves it alone until Free "
            "Bake", False),
    Setting("kind", STRING, "Bake Kind",
            "What the bake wrote: CURVE_KEYS, SHAPE_KEYS, BONES or CACHE", ""),
    Setting("baked_first", INT, "Baked Start", "", 0, "frame"),
    Setting("baked_last", INT, "Baked End", "", 0, "frame"),
    Setting("action", POINTER, "Baked Action", "", None, options={"type": "Action"}),
    Setting("rig", POINTER, "Baked Armature", "", None, options={"type": "Object"}),
    Setting("skin", POINTER, "Baked Skin", "", None, options={"type": "Object"}),
    Setting("hid_viewport", BOOL, "", "", False),
    Setting("hid_render", BOOL, "", "", False),
    Setting("rig_owned", BOOL, "", "The bake made the armature (Free Bake removes it)", True),
    Setting("action_owned", BOOL, "", "The bake made the Action it keyed", True),
    Setting("bone_prefix", STRING, "", "Name prefix of the baked bones", ""),
    Setting("cache_path", STRING, "Cache File",
            "Bake to Cache: the file written (.abc Alembic; .usd/.usdc/.usda USD); one file "
            "holds every rope of a bake. Empty = //xpbd_cache/<rope>.abc next to the .blend",
            "", options={"subtype": "FILE_PATH"}),
    Setting("cache_file", POINTER, "Baked Cache File", "", None,
            options={"type": "CacheFile"}),
    Setting("loop", BOOL, "Loop",
            "Bake a seamless loop for a cyclic animation: the frames simulated after the end "
            "are faded into the first Loop Frames, so the last frame flows into the first "
            "(the animation must repeat after the range: an F-Curve Cycles modifier)", False),
    Setting("loop_frames", INT, "Loop Frames",
            "Loop bake: frames at the start faded from the simulation one range later "
            "[frame]; more spreads a rope that has not settled into the cycle more smoothly",
            24, "frame", options={"min": 1, "soft_max": 100}),
    Setting("loop_seam_position", FLOAT, "Seam Position Jump",
            "Loop bake: the jump in position at the seam over the motion's range (0.01 = "
            "1 %)", 0.0, options={"subtype": "FACTOR"}),
    Setting("loop_seam_velocity", FLOAT, "Seam Velocity Jump",
            "Loop bake: the jump in velocity across the seam over the range of the velocity "
            "(0.01 = 1 %)", 0.0, options={"subtype": "FACTOR"}),
)
"""The bake's settings and the record of a bake (``Object.xpbd.bake``)."""
