"""The demo: the seed's rope in real Blender (see ``python -m demo --help``)."""
