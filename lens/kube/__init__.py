"""Kubernetes, in three parts that import downward: `machinery` (API clients, list/watch
reflectors and caches, batching, leader election), `kubelet` (a node's kubelet: GPU allocation,
ephemeral storage; the kubelet scrape targets) and `workloads` (GPU pods, owner chains,
recording, finalizers, uninstall, one cluster's sync)."""

__all__: list[str] = []
