"""Geometry out: a writer per kind of Blender data (kinds.py), tears, shared data."""
