"""Containers on a node, the GPU and RDMA devices each was given, and their lifecycle events."""

__all__: list[str] = []
