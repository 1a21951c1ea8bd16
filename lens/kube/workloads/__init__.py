"""Workload tracking: which pods are GPU pods, their owner chains from watch caches, their rows
and workloads' rows in the store, finalizers, uninstall, and one cluster's sync of it all."""

__all__: list[str] = []
