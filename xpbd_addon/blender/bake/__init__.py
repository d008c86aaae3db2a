"""Baking: a frame range turned into native Blender animation or a point cache."""
