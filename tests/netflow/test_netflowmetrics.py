"""The families as Prometheus reads them: counters that only grow, the RTT in seconds and the
original's in microseconds, peers beyond the top K as `other`, series removed after the TTL."""

from __future__ import annotations

from lens.netflow import accounting, classify
from lens.netflow.listeners import Listeners
from lens.netflow.netflowmetrics import NetflowMetrics
from lens.netflow.sockets import Endpoint
from lens.runtime.selfmetrics import SelfMetrics

from .test_accounting import NODE, delta

POLICY = classify.with_networks(
    classify.DEFAULT_POLICY,
    k8s_pod=classify.networks(["10.244.0.0/16"], source="t", key="k8s_pod"),
    dns=classify.networks(["10.0.0.53"], source="t", key="dns"),
)
LISTENING = Listeners(endpoints=frozenset({Endpoint(address=NODE, port=8080)}))


def _record(families: NetflowMetrics, deltas: list, now: float, top: int = 10) -> None:
    flows = accounting.classify_all(deltas, classify.Classifier(POLICY), LISTENING)
    families.record(flows, accounting.top_peers(flows, top), now)


def test_bytes_connections_and_rtt_by_direction_peer_and_port() -> None:
    metrics = SelfMetrics(process=False)
    families = NetflowMetrics(metrics, ttl_seconds=600)
    first = delta("8.8.8.8", sent=1000, received=200, connections=1, rtt_sum_us=40_000, rtt_count=2)
    _record(families, [first], now=0)
    _record(families, [delta("8.8.8.8", sent=500, closes=1)], now=5)
    get = metrics.registry.get_sample_value
    labels = {
        "direction": "outbound",
        "peer": "8.8.8.8",
        "peer_type": "externalHosts",
        "port": "443",
    }
    assert get("lens_netflow_tcp_sent_bytes_total", labels) == 1500
    assert get("lens_netflow_tcp_received_bytes_total", labels) == 200
    kinds = {"direction": "outbound", "peer_type": "externalHosts"}
    assert get("lens_netflow_tcp_connections_opened_total", kinds) == 1
    assert get("lens_netflow_tcp_connections_closed_total", kinds) == 1
    assert get("lens_netflow_tcp_rtt_seconds_sum", kinds) == 0.02
    assert get("lens_netflow_tcp_rtt_seconds_bucket", {**kinds, "le": "0.025"}) == 1
    original = {
        "raddr": "8.8.8.8",
        "rport": "443",
        "direction": "outbound",
        "type": "externalHosts",
    }
    assert get("primus_lens_network_tcp_flow_egress_total", original) == 200
    assert (
        get("primus_lens_network_tcp_flow_rtt_sum", {"raddr": "8.8.8.8", "direction": "outbound"})
        == 20_000
    )


def test_the_originals_aggregates_and_ingress() -> None:
    metrics = SelfMetrics(process=False)
    families = NetflowMetrics(metrics, ttl_seconds=600)
    into = delta(
        "8.8.4.4", received=30, opened="there", local=Endpoint(address=NODE, port=8080), port=51000
    )
    _record(
        families, [delta("10.0.0.53", received=7), delta("10.244.1.1", received=9), into], now=0
    )
    get = metrics.registry.get_sample_value
    assert get("primus_lens_network_flow_dns_total", {}) == 7
    assert get("primus_lens_network_k8s_tcp_flow_total", {"type": "k8sPod"}) == 9
    assert (
        get(
            "primus_lens_network_tcp_flow_ingress_total",
            {"lport": "8080", "raddr": "8.8.4.4", "direction": "outbound", "type": "externalHosts"},
        )
        == 30
    )


def test_peers_beyond_the_top_are_other_and_old_series_go() -> None:
    metrics = SelfMetrics(process=False)
    families = NetflowMetrics(metrics, ttl_seconds=60)
    _record(families, [delta("1.1.1.1", sent=100), delta("2.2.2.2", sent=1)], now=0, top=1)
    get = metrics.registry.get_sample_value
    other = {"direction": "outbound", "peer": "other", "peer_type": "externalHosts", "port": "443"}
    assert get("lens_netflow_tcp_sent_bytes_total", other) == 1
    _record(families, [delta("2.2.2.2", sent=5)], now=50, top=1)  # 2.2.2.2 shown now
    assert families.expire(now=100) > 0  # 1.1.1.1 and other: not updated since 0
    shown = {**other, "peer": "1.1.1.1"}
    assert get("lens_netflow_tcp_sent_bytes_total", shown) is None
    assert get("lens_netflow_tcp_sent_bytes_total", {**other, "peer": "2.2.2.2"}) == 5
