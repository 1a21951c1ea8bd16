"""Each socket's interval (`flows.py`) classified for the metrics: which way it goes, who the
peer is and what type (`classify.py`), the server's port, and whether it came to a listening
port (the original's "ingress" flows); and which peers are told apart this interval — the
top K by bytes, the rest counted together as `other`, so that a node talking to a million
addresses stays a bounded set of series."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from lens.netflow import classify
from lens.netflow.classify import Classifier, Direction
from lens.netflow.flows import FlowDelta
from lens.netflow.listeners import Listeners
from lens.netflow.sockets import IPAddress

OTHER = "other"


@dataclass(frozen=True, slots=True, kw_only=True)
class Flow:
    """One socket's interval, classified."""

    direction: Direction
    peer: IPAddress
    peer_type: str
    port: int  # the server's: this node's for inbound, the peer's for outbound
    listening: bool  # to a port this node listens on (the original's "ingress")
    delta: FlowDelta

    @property
    def bytes(self) -> int:
        return self.delta.sent + self.delta.received


def classify_all(
    deltas: Iterable[FlowDelta], classifier: Classifier, listening: Listeners
) -> list[Flow]:
    flows = []
    for delta in deltas:
        way = classify.direction(delta.opened, delta.local, listening)
        flows.append(
            Flow(
                direction=way,
                peer=delta.remote.address,
                peer_type=classifier.peer_type(delta.remote.address),
                port=delta.local.port if way == "inbound" else delta.remote.port,
                listening=listening.accepts(delta.local),
                delta=delta,
            )
        )
    return flows


def top_peers(flows: Sequence[Flow], count: int) -> frozenset[IPAddress]:
    """The `count` peers with the most bytes this interval (ties: the lower address)."""
    totals: dict[IPAddress, int] = {}
    for flow in flows:
        totals[flow.peer] = totals.get(flow.peer, 0) + flow.bytes
    ranked = sorted(totals, key=lambda peer: (-totals[peer], peer.version, int(peer)))
    return frozenset(ranked[:count])


def peer_label(peer: IPAddress, shown: frozenset[IPAddress]) -> str:
    return str(peer) if peer in shown else OTHER
