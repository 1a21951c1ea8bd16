"""netflow.peer_pods: a watch of the cluster's pods, each cut to the few fields that name a
peer before it is cached (2.1 KB a pod with the index, a third of a small pod kept whole:
PERFORMANCE.md), kept in a PeerPodIndex; each interval the peers the flow families show are
named by it in lens_netflow_peer_pod_info. Off by default: every node then watches every pod."""

from __future__ import annotations

import threading
from typing import Any

import kubernetes

from lens.kube.machinery import resources
from lens.kube.machinery.cache import Change, ChangeType, ObjectCache
from lens.kube.machinery.reflector import Reflector, WatchSettings
from lens.netflow.peerpodmetrics import PeerPodMetrics
from lens.netflow.peerpods import PeerPod, PeerPodIndex
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
        self._metrics.record(peers, self.lookup, now)
        self._metrics.expire(now)
        with self._lock:
            self._metrics.known.set(len(self._index))

    async def start(self) -> None:
        self.reflector.start()

    async def stop(self) -> None:
        await lifecycle.in_thread(self.reflector.stop, name="netflow-pods-stop")


def naming_fields(pod: dict[str, Any]) -> dict[str, Any]:
    """What the index reads of a pod — its controlling owner's kind and name, not every owner
    reference whole; a second address only for a dual-stack pod — and what the cache itself
    needs (uid, resourceVersion, namespace)."""
    metadata = _section(pod, "metadata")
    spec, status = _section(pod, "spec"), _section(pod, "status")
    kept: dict[str, Any] = {
        key: metadata[key]
        for key in ("uid", "name", "namespace", "resourceVersion")
        if key in metadata
    }
    owners = metadata.get("ownerReferences")
    for owner in owners if isinstance(owners, list) else ():
        if isinstance(owner, dict) and owner.get("controller") is True:
            kind, name = owner.get("kind"), owner.get("name")
            kept["ownerReferences"] = [{"kind": kind, "name": name, "controller": True}]
            break
    template_hash = _section(metadata, "labels").get("pod-template-hash")
    if template_hash is not None:
        kept["labels"] = {"pod-template-hash": template_hash}
    kept_status: dict[str, Any] = {k: status[k] for k in ("phase", "podIP") if k in status}
    addresses = status.get("podIPs")
    if isinstance(addresses, list) and len(addresses) > 1:
        kept_status["podIPs"] = addresses
    kept_spec = {"hostNetwork": True} if spec.get("hostNetwork") is True else {}
    return {"metadata": kept, "spec": kept_spec, "status": kept_status}


def _section(obj: dict[str, Any], key: str) -> dict[str, Any]:
    value = obj.get(key)
    return value if isinstance(value, dict) else {}
