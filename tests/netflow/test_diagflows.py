"""The sock_diag fallback for real: its netlink socket made in the client's network namespace,
sampled while traffic of known size crosses the 40 ms link: bytes within 1 % (the connection
held open past its last sample), RTT within 10 %, who opened it from the listeners, and its end
told once it is gone."""

from __future__ import annotations

import ipaddress
import threading
import time

import pytest

from lens.netflow.diagflows import SockDiagFlows
from lens.netflow.flows import DeltaTracker, FlowDelta
from lens.netflow.listeners import Listeners
from lens.netflow.sockets import Endpoint

from .conftest import Link, inside

pytestmark = pytest.mark.slow_timeout

SENT = 2_000_000
REPLY = 150_000
PORT = 7800


def test_a_connections_bytes_and_rtt_through_sock_diag(link: Link) -> None:
    listening = Listeners(endpoints=frozenset())  # the client listens on nothing
    reader = inside(link.client, lambda: SockDiagFlows(lambda: listening))
    tracker = DeltaTracker()
    try:
        tracker.advance(reader.read())  # the first sample: everything open is unknown
        moved: list[FlowDelta] = []
        done = threading.Event()

        def traffic() -> None:
            link.transfer(to=link.server_ip, port=PORT, send=SENT, reply=REPLY, hold=1.0)
            done.set()

        sender = threading.Thread(target=traffic)
        sender.start()
        while not done.is_set():
            moved += [d for d in tracker.advance(reader.read()) if d.remote.port == PORT]
            time.sleep(0.1)
        sender.join(60)
        moved += [d for d in tracker.advance(reader.read()) if d.remote.port == PORT]
    finally:
        reader.close()
    assert {d.opened for d in moved} == {"here"}
    assert sum(d.connections for d in moved) == 1 and sum(d.closes for d in moved) == 1
    assert moved[0].local == Endpoint(
        address=ipaddress.ip_address(link.client_ip), port=moved[0].local.port
    )
    sent = sum(d.sent for d in moved)
    received = sum(d.received for d in moved)
    assert abs(sent - SENT) <= SENT / 100 and abs(received - REPLY) <= REPLY / 100
    rtt_us = sum(d.rtt_sum_us for d in moved) / sum(d.rtt_count for d in moved)
    assert abs(rtt_us - link.rtt_ms * 1000) <= link.rtt_ms * 100
