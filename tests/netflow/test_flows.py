"""The interval of each socket from growing counters: what was added since the last reading,
a socket's end counted once even when it is read live and closed in one reading."""

from __future__ import annotations

import dataclasses
import ipaddress

from hypothesis import given
from hypothesis import strategies as st

from lens.netflow.flows import DeltaTracker
from lens.netflow.sockets import Endpoint, SocketCounters

CLIENT = Endpoint(address=ipaddress.IPv4Address("10.0.0.1"), port=40000)
SERVER = Endpoint(address=ipaddress.IPv4Address("10.0.0.2"), port=443)


def _socket(
    sent: int, *, closed: bool = False, socket: int = 1, opened: str = "here"
) -> SocketCounters:
    return SocketCounters(
        socket=socket,
        local=CLIENT,
        remote=SERVER,
        opened=opened,  # type: ignore[arg-type]
        sent=sent,
        received=sent // 2,
        segments_in=sent // 100,
        rtt_sum_us=sent,
        rtt_count=sent // 1000,
        rtt_min_us=None,
        rtt_max_us=None,
        retransmits=0,
        closed=closed,
    )


def test_a_socket_is_told_in_intervals_and_closed_once() -> None:
    tracker = DeltaTracker()
    first = tracker.advance([_socket(1000)], [])
    assert [(d.sent, d.received, d.connected, d.closed) for d in first] == [
        (1000, 500, True, False)
    ]
    assert tracker.advance([_socket(1000)], []) == []  # nothing moved
    second = tracker.advance([_socket(5000)], [])
    assert [(d.sent, d.connected) for d in second] == [(4000, False)]
    last = tracker.advance([], [_socket(6000, closed=True)])
    assert [(d.sent, d.closed, d.connected) for d in last] == [(1000, True, False)]
    assert tracker.tracked == 0


def test_a_socket_read_live_and_closed_at_once_counts_its_end_only() -> None:
    tracker = DeltaTracker()
    tracker.advance([_socket(1000)], [])
    both = tracker.advance([_socket(3000)], [_socket(3500, closed=True)])
    assert [(d.sent, d.closed) for d in both] == [(2000, False), (500, True)]


def test_a_socket_opened_and_closed_between_readings_is_whole() -> None:
    tracker = DeltaTracker()
    (delta,) = tracker.advance([], [_socket(700, closed=True)])
    assert (delta.sent, delta.connected, delta.closed) == (700, True, True)


def test_a_socket_open_before_lens_is_not_a_connection() -> None:
    (delta,) = DeltaTracker().advance([_socket(10, opened="unknown")], [])
    assert not delta.connected


def test_a_reused_socket_address_with_another_tuple_is_another_socket() -> None:
    tracker = DeltaTracker()
    tracker.advance([_socket(1000)], [])
    other = dataclasses.replace(_socket(200), local=dataclasses.replace(CLIENT, port=40001))
    deltas = tracker.advance([other], [_socket(1000, closed=True)])
    assert sorted((d.local.port, d.sent, d.connected) for d in deltas) == [
        (40000, 0, False),
        (40001, 200, True),
    ]


@given(st.lists(st.integers(min_value=0, max_value=10**6), min_size=1, max_size=20))
def test_the_intervals_add_up_to_the_total(increments: list[int]) -> None:
    tracker = DeltaTracker()
    total = 0
    told = 0
    for step in increments[:-1]:
        total += step
        told += sum(d.sent for d in tracker.advance([_socket(total)], []))
    total += increments[-1]
    told += sum(d.sent for d in tracker.advance([], [_socket(total, closed=True)]))
    assert told == total
