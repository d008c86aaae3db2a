"""XPBD Rope: ropes, cables, chains and tails simulated with XPBD in Blender."""
