"""Build helpers called by ``build.py`` (standard library only: they run before any venv)."""
