"""Blender's data in: what a rope is made of and what moves it, read in bulk."""
