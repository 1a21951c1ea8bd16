"""lens_netflow_peer_pod_info: one series per named peer, replaced at once when its address
passes to another pod or the pod goes, let go when the peer is not shown for the TTL."""

from __future__ import annotations

import ipaddress

from lens.netflow.peerpodmetrics import PeerPodMetrics
from lens.netflow.peerpods import PeerPod
from lens.netflow.sockets import IPAddress
from lens.runtime.selfmetrics import SelfMetrics

A = ipaddress.ip_address("10.244.1.5")
B = ipaddress.ip_address("10.244.1.6")
WEB = PeerPod(namespace="ml", pod="web-1", workload_kind="Deployment", workload="web")
DB = PeerPod(namespace="data", pod="db-0", workload_kind="StatefulSet", workload="db")


def _series(metrics: SelfMetrics) -> set[tuple[str, ...]]:
    (family,) = [f for f in metrics.registry.collect() if f.name == "lens_netflow_peer_pod_info"]
    return {
        tuple(s.labels[k] for k in ("peer", "namespace", "pod", "workload_kind", "workload"))
        for s in family.samples
        if s.value == 1
    }


def test_shown_peers_that_are_pods_are_named_and_others_not() -> None:
    metrics = SelfMetrics(process=False)
    names = PeerPodMetrics(metrics, ttl_seconds=600)
    pods: dict[IPAddress, PeerPod] = {A: WEB}
    names.record(frozenset({A, B}), lookup=pods.get, now=0)
    assert _series(metrics) == {("10.244.1.5", "ml", "web-1", "Deployment", "web")}


def test_an_address_passed_to_another_pod_keeps_one_series() -> None:
    metrics = SelfMetrics(process=False)
    names = PeerPodMetrics(metrics, ttl_seconds=600)
    pods: dict[IPAddress, PeerPod] = {A: WEB}
    names.record(frozenset({A}), lookup=pods.get, now=0)
    pods[A] = DB
    names.record(frozenset({A}), lookup=pods.get, now=5)
    assert _series(metrics) == {("10.244.1.5", "data", "db-0", "StatefulSet", "db")}
    del pods[A]  # the pod went: its name goes now, not after the TTL, shown or not
    names.record(frozenset(), lookup=pods.get, now=10)
    assert _series(metrics) == set()


def test_a_peer_not_shown_for_the_ttl_is_let_go() -> None:
    metrics = SelfMetrics(process=False)
    names = PeerPodMetrics(metrics, ttl_seconds=60)
    pods: dict[IPAddress, PeerPod] = {A: WEB, B: DB}
    names.record(frozenset({A, B}), lookup=pods.get, now=0)
    names.record(frozenset({B}), lookup=pods.get, now=50)
    assert len(_series(metrics)) == 2  # A not shown but still its pod's: kept until the TTL
    assert names.expire(now=61) == 1
    assert _series(metrics) == {("10.244.1.6", "data", "db-0", "StatefulSet", "db")}
    assert names.expire(now=100) == 0
