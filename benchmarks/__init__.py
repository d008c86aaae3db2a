"""Benchmarks: `python3 build.py bench` runs them (figures go into README.md)."""
