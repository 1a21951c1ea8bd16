"""Watch caches of a cluster's nodes and pods for `lens jobs`: a service part whose reflectors
list once and then follow the watch, so a job reads the cluster from memory — no GET per node,
pod or workload, no kubelet call per node (the original's pattern, REFERENCE.md 5.0)."""

from __future__ import annotations

import threading

import kubernetes

from lens.kube.machinery import resources
from lens.kube.machinery.cache import Change, ObjectCache
from lens.kube.machinery.reflector import Reflector, WatchSettings
from lens.runtime import errors, lifecycle


class ClusterCaches:
    """Nodes and pods as last seen; `synced()` once both listed."""

    name = "cluster-caches"

    def __init__(self, api: kubernetes.client.ApiClient, *, watch: WatchSettings) -> None:
        self.api = api  # the cluster's API, for the jobs that also call it (the storage scan)
        self._changed = threading.Event()
        self.nodes = Reflector(
            name="jobs-nodes",
            list_func=resources.Lister(api, resources.NODES.collection_path()),
            cache=ObjectCache(),
            handle=self._note,
            settings=watch,
        )
        self.pods = Reflector(
            name="jobs-pods",
            list_func=resources.Lister(api, resources.PODS.collection_path()),
            cache=ObjectCache(),
            handle=self._note,
            settings=watch,
        )

    def _note(self, changes: list[Change]) -> None:
        if changes:
            self._changed.set()

    def changed_since_last_asked(self) -> bool:
        """Whether any node or pod changed since the last call (a job may skip a cycle)."""
        changed = self._changed.is_set()
        self._changed.clear()
        return changed

    def synced(self) -> bool:
        return self.nodes.synced and self.pods.synced

    def check(self) -> None:
        """Readiness: the jobs that read the cluster wait for both listings."""
        waiting = [r.name for r in (self.nodes, self.pods) if not r.synced]
        if waiting:
            raise errors.NoDataError("waiting for the first listing of " + ", ".join(waiting))

    def wait_synced(self, timeout: float) -> bool:
        return self.nodes.wait_synced(timeout) and self.pods.wait_synced(timeout)

    async def start(self) -> None:
        self.nodes.start()
        self.pods.start()

    async def stop(self) -> None:
        for reflector in (self.pods, self.nodes):
            await lifecycle.in_thread(reflector.stop, name=f"{reflector.name}-stop")
