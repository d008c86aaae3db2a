"""The fuzz sessions' prop and scene-wide actions (``fuzz_session.py``): a box with Collision
physics under the ropes, and what users do to such a prop while ropes play on it: move it
through them, scale it to nothing or flatten it, give its Collision settings their extremes,
remove and add its Collision, collapse its mesh or put a non-finite vertex in it for a
frame, delete it and make it again; and the scene's frame rate changed.

A change to a collider is picked up from the start frame (docs/blender-usage.md), as a user
sees it by going back there: each action ends at frame 1 and then jumps to a random frame,
so that ``check_playback`` still compares with a replay of the same scene.
"""

from __future__ import annotations

import random

import bpy

PROP = "prop"
PROP_LOCATION = (1.0, 0.75, -0.3)
PROP_SCALE = (1.2, 1.2, 0.1)
FRAME_END = 24


def build_prop(scene) -> None:
    """The prop: a 2.4 x 2.4 x 0.2 m box 0.3 m under the ropes, Collision at its defaults."""
    mesh = bpy.data.meshes.new(PROP)
    corners = [(x, y, z) for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]
    faces = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    mesh.from_pydata(corners, [], faces)
    mesh.update()
    prop = bpy.data.objects.new(PROP, mesh)
    scene.collection.objects.link(prop)
    prop.location, prop.scale = PROP_LOCATION, PROP_SCALE
    prop.modifiers.new("Collision", "COLLISION")


class PropActions:
    """The actions on the prop and the scene; mixed into ``fuzz_session.Fuzz``."""

    rng: random.Random

    @property
    def scene(self):
        return bpy.context.scene

    def _prop(self):
        """The prop, made again if an action deleted it."""
        prop = bpy.data.objects.get(PROP)
        if prop is None:
            build_prop(self.scene)
            prop = bpy.data.objects[PROP]
        return prop

    def _replay_from_start(self, what: str) -> str:
        self.scene.frame_set(1)
        frame = self.rng.randint(1, FRAME_END + 2)
        self.scene.frame_set(frame)
        return f"{what}, frame 1 then {frame}"

    def prop_move(self) -> str:
        """The prop put somewhere else: often through the ropes, or far below them."""
        prop = self._prop()
        prop.location = (PROP_LOCATION[0] + self.rng.uniform(-0.5, 0.5),
                         PROP_LOCATION[1] + self.rng.uniform(-0.5, 0.5),
                         self.rng.choice([PROP_LOCATION[2], 0.0, 0.05, -3.0]))
        return self._replay_from_start(f"prop at {tuple(round(c, 2) for c in prop.location)}")

    def prop_scale(self) -> str:
        """Scaled to nothing, flattened along one axis, huge, or as built."""
        prop = self._prop()
        prop.scale = self.rng.choice([(0.0, 0.0, 0.0), (1.2, 1.2, 0.0), (0.0, 1.2, 0.1),
                                      (1e4, 1e4, 0.1), (1e-7, 1e-7, 1e-7), PROP_SCALE])
        return self._replay_from_start(f"prop scale {tuple(prop.scale)}")

    def prop_settings(self) -> str:
        """Its Collision settings at their extremes (Blender's own limits)."""
        settings = self._prop().collision
        if settings is None:
            return "prop settings: no Collision"
        name, value = self.rng.choice([("thickness_outer", 0.001), ("thickness_outer", 1.0),
                                       ("thickness_outer", 0.02), ("cloth_friction", 0.0),
                                       ("cloth_friction", 80.0), ("use", False), ("use", True)])
        setattr(settings, name, value)
        return self._replay_from_start(f"prop collision.{name} = {value}")

    def prop_collision(self) -> str:
        """Its Collision physics removed, or added back."""
        prop = self._prop()
        found = [m for m in prop.modifiers if m.type == "COLLISION"]
        if found:
            prop.modifiers.remove(found[0])
            what = "prop Collision removed"
        else:
            prop.modifiers.new("Collision", "COLLISION")
            what = "prop Collision added"
        return self._replay_from_start(what)

    def prop_mesh(self) -> str:
        """Its mesh collapsed to a point (every face without area) and kept so, or a vertex
        made non-finite for one frame change, then mended (the check after it must find no
        rope holding a non-finite value)."""
        prop = self._prop()
        vertices = prop.data.vertices
        if self.rng.random() < 0.5:
            for v in vertices:
                v.co = (0.0, 0.0, 0.0)
            prop.data.update()
            return self._replay_from_start("prop mesh collapsed to a point")
        old = tuple(vertices[0].co)
        vertices[0].co = (self.rng.choice([float("nan"), float("inf"), 1e30]), 0.0, 0.0)
        prop.data.update()
        frame = self.rng.randint(1, FRAME_END)
        try:
            self.scene.frame_set(frame)
        finally:
            vertices[0].co = old
            prop.data.update()
        return self._replay_from_start(f"prop vertex 0 non-finite at frame {frame}, mended")

    def prop_delete(self) -> str:
        """The prop deleted (made again by the next prop action)."""
        prop = bpy.data.objects.get(PROP)
        if prop is None:
            return "prop delete: none"
        mesh = prop.data
        bpy.data.objects.remove(prop)
        bpy.data.meshes.remove(mesh)
        return self._replay_from_start("prop deleted")

    def frame_rate(self) -> str:
        """The scene's frame rate changed, as a user switching between 24, 25, 30 and 60."""
        render = self.scene.render
        render.fps = self.rng.choice([12, 24, 25, 30, 60])
        render.fps_base = self.rng.choice([1.0, 1.0, 1.001])
        return self._replay_from_start(f"fps {render.fps} / {render.fps_base}")
