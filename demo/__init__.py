"""The demo: ropes over bars and three compliances in real Blender (``python -m demo --help``)."""
