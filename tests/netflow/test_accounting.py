from __future__ import annotations

import dataclasses
import ipaddress

from lens.netflow import accounting, classify
from lens.netflow.flows import FlowDelta
from lens.netflow.listeners import Listeners
from lens.netflow.sockets import Endpoint

NODE = ipaddress.ip_address("10.1.0.5")


def delta(
    peer: str, *, sent: int = 0, received: int = 0, port: int = 443, **kw: object
) -> FlowDelta:
    base = FlowDelta(
        local=Endpoint(address=NODE, port=50000),
        remote=Endpoint(address=ipaddress.ip_address(peer), port=port),
        opened="here",
        sent=sent,
        received=received,
        segments_in=1,
        rtt_sum_us=0,
        rtt_count=0,
        rtt_min_us=None,
        rtt_max_us=None,
        retransmits=0,
        connections=0,
        closes=0,
    )
    return dataclasses.replace(base, **kw)  # type: ignore[arg-type]


LISTENING = Listeners(endpoints=frozenset({Endpoint(address=NODE, port=8080)}))
CLASSIFIER = classify.Classifier(classify.DEFAULT_POLICY)


def test_flows_are_classified_with_the_servers_port() -> None:
    inbound = delta(
        "8.8.4.4", received=10, opened="there", local=Endpoint(address=NODE, port=8080), port=51000
    )
    out, into = accounting.classify_all([delta("10.9.9.9", sent=5), inbound], CLASSIFIER, LISTENING)
    assert (out.direction, out.peer_type, out.port, out.listening) == (
        "outbound",
        classify.INTERNAL,
        443,
        False,
    )
    assert (into.direction, into.peer_type, into.port, into.listening) == (
        "inbound",
        classify.EXTERNAL,
        8080,
        True,
    )


def test_the_top_peers_by_bytes_are_shown_the_rest_are_other() -> None:
    flows = accounting.classify_all(
        [
            delta("10.0.0.1", sent=100),
            delta("10.0.0.2", sent=50, received=60),
            delta("10.0.0.3", sent=10),
            delta("10.0.0.1", received=1),
        ],
        CLASSIFIER,
        LISTENING,
    )
    shown = accounting.top_peers(flows, 2)
    assert shown == {ipaddress.ip_address("10.0.0.1"), ipaddress.ip_address("10.0.0.2")}
    assert accounting.peer_label(ipaddress.ip_address("10.0.0.3"), shown) == accounting.OTHER
