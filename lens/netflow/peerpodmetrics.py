"""lens_netflow_peer_pod_info: the pod, namespace and workload behind each peer the flow
families name, as an info family to join on the node and `peer` rather than more labels on
every flow series (a pod's names would multiply them, and change under a series when an address
is reused)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from lens.netflow.peerpods import PeerPod
from lens.netflow.sockets import IPAddress
from lens.runtime.selfmetrics import SelfMetrics

Lookup = Callable[[IPAddress], PeerPod | None]
INFO_LABELS = ("peer", "namespace", "pod", "workload_kind", "workload")


class PeerPodMetrics:
    """One series per named peer, at most: a peer whose pod changed or went is let go at once
    (a join on `peer` must find one series), one not among the named peers for `ttl_seconds`
    (as its flow series) too."""

    def __init__(self, metrics: SelfMetrics, *, ttl_seconds: float) -> None:
        self.ttl_seconds = ttl_seconds
        self.info = metrics.gauge(
            "lens_netflow_peer_pod_info",
            "1 for each peer of the flow families that is a pod: its namespace, pod and "
            "workload (netflow.peer_pods; join on peer and the node the series came from).",
            INFO_LABELS,
        )
        self.known = metrics.gauge(
            "lens_netflow_peer_pod_addresses",
            "Pod addresses the watch of the cluster's pods knows (netflow.peer_pods).",
        )
        self.synced = metrics.gauge(
            "lens_netflow_peer_pod_watch_synced",
            "1 once the watch of the cluster's pods has listed them (netflow.peer_pods); 0 "
            "while it has not, e.g. without list and watch on pods in the ClusterRole.",
        )
        self._named: dict[IPAddress, tuple[tuple[str, ...], float]] = {}

    def record(self, peers: Iterable[IPAddress], *, lookup: Lookup, now: float) -> None:
        """Name this interval's peers (those the flow families show) that are pods, and let
        go at once of a peer named before whose pod went or changed."""
        shown = frozenset(peers)
        for peer in shown | self._named.keys():
            pod = lookup(peer)
            labels = _labels(peer, pod) if pod is not None else None
            before = self._named.pop(peer, None)
            if before is not None and before[0] != labels:
                self.info.remove(*before[0])
                before = None
            if labels is not None and peer in shown:
                self.info.labels(*labels).set(1)
                self._named[peer] = (labels, now)
            elif before is not None:
                self._named[peer] = before

    def expire(self, now: float) -> int:
        """Let go of the peers not named for ttl_seconds; how many."""
        old = [peer for peer, (_, at) in self._named.items() if now - at > self.ttl_seconds]
        for peer in old:
            self.info.remove(*self._named.pop(peer)[0])
        return len(old)


def _labels(peer: IPAddress, pod: PeerPod) -> tuple[str, ...]:
    return (str(peer), pod.namespace, pod.pod, pod.workload_kind, pod.workload)
