"""The frame engine: the one path by which ropes reach a frame (engine.py)."""
