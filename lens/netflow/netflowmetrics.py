"""lens netflow's metric families: Lens's own in base units, and the original's names
(REFERENCE.md 3.4) fed right — counters that only grow (the original reset and re-added them
every 15 s) and an RTT histogram of real round trips (the original's was fed NaN). A series not
updated for `ttl_seconds` is removed: flows end, their series should too."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lens.netflow import classify
from lens.netflow.accounting import Flow, peer_label
from lens.netflow.sockets import IPAddress
from lens.runtime.selfmetrics import SelfMetrics

# The original's RTT buckets, in microseconds (its histogram's unit, kept under its name).
ORIGINAL_RTT_BUCKETS_US = (50, 100, 200, 300, 500, 700, 1000, 1300, 1600, 2000, 2500, 3000,
                           4000, 5000, 7000, 10000)  # fmt: skip
RTT_BUCKETS_SECONDS = (0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                       0.05, 0.1, 0.25, 0.5, 1.0)  # fmt: skip
# Peers the original left out of its RTT histogram.
NO_ORIGINAL_RTT = frozenset(
    {classify.K8S_POD, classify.K8S_SVC, classify.DNS, classify.LOCALHOST, classify.DOCKER}
)
FLOW_LABELS = ("direction", "peer", "peer_type", "port")


class NetflowMetrics:
    """The families, and when each series was last updated (for its removal)."""

    def __init__(self, metrics: SelfMetrics, *, ttl_seconds: float) -> None:
        self.ttl_seconds = ttl_seconds
        self.sent = metrics.counter(
            "lens_netflow_tcp_sent_bytes_total",
            "Bytes the node's applications sent over TCP, by direction, peer and server port.",
            FLOW_LABELS,
        )
        self.received = metrics.counter(
            "lens_netflow_tcp_received_bytes_total",
            "Bytes the node's applications read over TCP, by direction, peer and server port.",
            FLOW_LABELS,
        )
        self.retransmits = metrics.counter(
            "lens_netflow_tcp_retransmits_total",
            "TCP segments the node retransmitted, by direction, peer and server port.",
            FLOW_LABELS,
        )
        self.opened = metrics.counter(
            "lens_netflow_tcp_connections_opened_total",
            "TCP connections established, by direction and peer type.",
            ("direction", "peer_type"),
        )
        self.closed = metrics.counter(
            "lens_netflow_tcp_connections_closed_total",
            "TCP connections ended, by direction and peer type.",
            ("direction", "peer_type"),
        )
        self.rtt = metrics.histogram(
            "lens_netflow_tcp_rtt_seconds",
            "Smoothed round-trip time of TCP connections, one observation per connection (or "
            "per peer's connections that ended unread) and interval, the mean of its samples, "
            "by direction and peer type.",
            ("direction", "peer_type"),
            buckets=RTT_BUCKETS_SECONDS,
        )
        self._backend_families(metrics)
        self._original = _OriginalFamilies(metrics)
        self._updated: dict[tuple[Any, tuple[str, ...]], float] = {}

    def _backend_families(self, metrics: SelfMetrics) -> None:
        self.backend = metrics.gauge(
            "lens_netflow_backend",
            "1 for the backend reading TCP flows: ebpf, sockdiag (the fallback), or none when "
            "neither can run here (the log and /readyz say why); eBPF's attachment: "
            "raw_tracepoint (at the kernel's BTF offsets), or tracepoint where the kernel has "
            "no BTF (the log says why).",
            ("backend", "attachment"),
        )
        self.dropped = metrics.counter(
            "lens_netflow_kernel_dropped_total",
            "Sockets the kernel program could not keep because a map was full: flows (not "
            "tracked) or closed (their last interval lost).",
            ("map",),
        )
        self.tracked = metrics.gauge(
            "lens_netflow_sockets_tracked", "Sockets the kernel program holds counters of."
        )

    def record(self, flows: Sequence[Flow], shown: frozenset[IPAddress], now: float) -> None:
        """Add one interval's flows; a peer not in `shown` is counted as `other`."""
        for flow in flows:
            delta = flow.delta
            labels = (flow.direction, peer_label(flow.peer, shown), flow.peer_type, str(flow.port))
            for family, amount in (
                (self.sent, delta.sent),
                (self.received, delta.received),
                (self.retransmits, delta.retransmits),
            ):
                if amount:
                    family.labels(*labels).inc(amount)
                    self._updated[(family, labels)] = now
            kinds = (flow.direction, flow.peer_type)
            for family, count in ((self.opened, delta.connections), (self.closed, delta.closes)):
                if count:
                    family.labels(*kinds).inc(count)
                    self._updated[(family, kinds)] = now
            if delta.rtt_count:
                self.rtt.labels(*kinds).observe(delta.rtt_sum_us / delta.rtt_count / 1e6)
                self._updated[(self.rtt, kinds)] = now
            for family, original in self._original.record(flow, shown):
                self._updated[(family, original)] = now

    def expire(self, now: float) -> int:
        """Remove the series not updated for ttl_seconds; how many."""
        old = [key for key, at in self._updated.items() if now - at > self.ttl_seconds]
        for family, labels in old:
            family.remove(*labels)
            del self._updated[(family, labels)]
        return len(old)


class _OriginalFamilies:
    """The original's families: received payload bytes (what its tcp_probe counted), flows
    to a listening port as "ingress" and the others as "egress", pods, Services and DNS as
    aggregates, and its RTT histogram in microseconds."""

    def __init__(self, metrics: SelfMetrics) -> None:
        self.egress = metrics.counter(
            "primus_lens_network_tcp_flow_egress_total",
            "Payload bytes received on connections this node opened (the original's name).",
            ("raddr", "rport", "direction", "type"),
        )
        self.ingress = metrics.counter(
            "primus_lens_network_tcp_flow_ingress_total",
            "Payload bytes received on connections to a listening port (the original's name).",
            ("lport", "raddr", "direction", "type"),
        )
        self.dns = metrics.counter(
            "primus_lens_network_flow_dns_total",
            "Payload bytes received from the cluster's DNS (the original's name).",
        )
        self.k8s = metrics.counter(
            "primus_lens_network_k8s_tcp_flow_total",
            "Payload bytes received from pods and Services (the original's name).",
            ("type",),
        )
        self.rtt = metrics.histogram(
            "primus_lens_network_tcp_flow_rtt",
            "Smoothed TCP round-trip time in microseconds (the original's name and unit).",
            ("raddr", "direction"),
            buckets=ORIGINAL_RTT_BUCKETS_US,
        )

    def record(self, flow: Flow, shown: frozenset[IPAddress]) -> list[tuple[Any, tuple[str, ...]]]:
        """Add one flow; the series it updated."""
        updated: list[tuple[Any, tuple[str, ...]]] = []
        delta = flow.delta
        kind = flow.peer_type
        raddr = peer_label(flow.peer, shown)
        # The original's direction: from its (local, remote) = (source, destination) reading,
        # "outbound" whenever the local side is the source, which it always is here.
        way = "outbound"
        if delta.received:
            if kind == classify.DNS:
                self.dns.inc(delta.received)  # one series for the node: never removed
            elif kind in (classify.K8S_POD, classify.K8S_SVC):
                self.k8s.labels(kind).inc(delta.received)
                updated.append((self.k8s, (kind,)))
            elif flow.listening:
                labels = (str(delta.local.port), raddr, way, kind)
                self.ingress.labels(*labels).inc(delta.received)
                updated.append((self.ingress, labels))
            else:
                labels = (raddr, str(delta.remote.port), way, kind)
                self.egress.labels(*labels).inc(delta.received)
                updated.append((self.egress, labels))
        if delta.rtt_count and kind not in NO_ORIGINAL_RTT:
            self.rtt.labels(raddr, way).observe(delta.rtt_sum_us / delta.rtt_count)
            updated.append((self.rtt, (raddr, way)))
        return updated
