"""Runtime shared by every role: config, logging, errors, lifecycle, loops, health and metrics."""

__all__: list[str] = []
