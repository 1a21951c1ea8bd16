"""netflow.peer_pods: a watch of the cluster's pods, each cut to the few fields that name a
peer before it is cached (2.4 KB a pod with the index, a third of a small pod kept whole:
PERFORMANCE.md), kept in a PeerPodIndex; each interval the peers the flow families show are
named by it in lens_netflow_peer_pod_info. Off by default: every node then watches every pod."""

from __future__ import annotations

import threading

import kubernetes

from lens.kube.machinery import resources
from lens.kube.machinery.cache import Change, ChangeType, ObjectCache
from lens.kube.machinery.reflector import Reflector, WatchSettings
from lens.netflow.peerpodmetrics import PeerPodMetrics
from lens.netflow.peerpods import PeerPod, PeerPodIndex, naming_fields
from lens.netflow.sockets import IPAddress
from lens.runtime import lifecycle


class PeerPodWatch:
    """The watch as a part of the process; `name_peers()` is called by each interval's cycle."""

    name = "netflow-peer-pods"

    def __init__(
        self, api: kubernetes.client.ApiClient, *, watch: WatchSettings, metrics: PeerPodMetrics
    ) -> None:
        self._index = PeerPodIndex()
        self._lock = threading.Lock()  # changes come in the reflector's thread
        self._metrics = metrics
        self.reflector = Reflector(
            name="netflow-pods",
            list_func=resources.Lister(api, resources.PODS.collection_path()),
            cache=ObjectCache(),
            handle=self._apply,
            settings=watch,
            keep=naming_fields,
        )

    def _apply(self, changes: list[Change]) -> None:
        with self._lock:
            for change in changes:
                if change.type is ChangeType.DELETED:
                    self._index.remove(change.object)
                else:
                    self._index.put(change.object)

    def lookup(self, address: IPAddress) -> PeerPod | None:
        with self._lock:
            return self._index.get(address)

    def name_peers(self, peers: frozenset[IPAddress], now: float) -> None:
        """Name this interval's shown peers; let go of those long unnamed."""
        self._metrics.record(peers, lookup=self.lookup, now=now)
        self._metrics.expire(now)
        with self._lock:
            self._metrics.known.set(len(self._index))
        self._metrics.synced.set(1 if self.reflector.synced else 0)

    async def start(self) -> None:
        self.reflector.start()

    async def stop(self) -> None:
        await lifecycle.in_thread(self.reflector.stop, name="netflow-pods-stop")
