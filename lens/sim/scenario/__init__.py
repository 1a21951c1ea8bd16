"""Simulated clusters: a description of nodes and workloads over time, and a player for it."""

__all__: list[str] = []
