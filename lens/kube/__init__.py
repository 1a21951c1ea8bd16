"""Kubernetes: the node's kubelet (pods, stats) and, later, the API server's objects."""

__all__: list[str] = []
