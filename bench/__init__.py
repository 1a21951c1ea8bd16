"""Benchmarks of Lens: `python -m bench NAME` prints one JSON object of figures (PERFORMANCE.md)."""
