"""The interval of each socket from growing counters: what was added since the last reading,
a socket's end counted once even when it is read live and closed in one reading, and the sums
of sockets that ended unread told by what they added."""

from __future__ import annotations

import dataclasses
import ipaddress

from hypothesis import given
from hypothesis import strategies as st

from lens.netflow.flows import DeltaTracker
from lens.netflow.sockets import EndedCounters, Endpoint, Reading, SocketCounters

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


def _ended(sent: int, sockets: int, opened: str = "here") -> EndedCounters:
    return EndedCounters(
        local=dataclasses.replace(CLIENT, port=0),
        remote=SERVER,
        opened=opened,  # type: ignore[arg-type]
        sent=sent,
        received=0,
        segments_in=sockets * 3,
        rtt_sum_us=0,
        rtt_count=0,
        retransmits=0,
        sockets=sockets,
    )


def _read(
    live: list[SocketCounters],
    closed: list[SocketCounters] | None = None,
    ended: list[EndedCounters] | None = None,
) -> Reading:
    return Reading(live=live, closed=closed or [], ended=ended or [])


def test_a_socket_is_told_in_intervals_and_closed_once() -> None:
    tracker = DeltaTracker()
    first = tracker.advance(_read([_socket(1000)]))
    assert [(d.sent, d.received, d.connections, d.closes) for d in first] == [(1000, 500, 1, 0)]
    assert tracker.advance(_read([_socket(1000)])) == []  # nothing moved
    second = tracker.advance(_read([_socket(5000)]))
    assert [(d.sent, d.connections) for d in second] == [(4000, 0)]
    last = tracker.advance(_read([], [_socket(6000, closed=True)]))
    assert [(d.sent, d.closes, d.connections) for d in last] == [(1000, 1, 0)]
    assert tracker.tracked == 0


def test_a_socket_read_live_and_closed_at_once_counts_its_end_only() -> None:
    tracker = DeltaTracker()
    tracker.advance(_read([_socket(1000)]))
    both = tracker.advance(_read([_socket(3000)], [_socket(3500, closed=True)]))
    assert [(d.sent, d.closes) for d in both] == [(2000, 0), (500, 1)]


def test_a_socket_met_twice_in_one_reading_is_counted_once() -> None:
    """A walk of the kernel's hash map starts over when the key it stood on is deleted: the
    sockets already walked come again, with counters that may have grown meanwhile."""
    tracker = DeltaTracker()
    first = tracker.advance(_read([_socket(65536), _socket(2000, socket=2), _socket(70000)]))
    assert [(d.sent, d.connections) for d in first] == [(65536, 1), (2000, 1), (4464, 0)]
    again = tracker.advance(_read([_socket(80000), _socket(80000)], [_socket(90000, closed=True)]))
    assert [(d.sent, d.connections, d.closes) for d in again] == [(10000, 0, 0), (10000, 0, 1)]


def test_a_socket_open_before_lens_is_not_a_connection() -> None:
    (delta,) = DeltaTracker().advance(_read([_socket(10, opened="unknown")]))
    assert delta.connections == 0


def test_a_reused_socket_address_with_another_tuple_is_another_socket() -> None:
    tracker = DeltaTracker()
    tracker.advance(_read([_socket(1000)]))
    other = dataclasses.replace(_socket(200), local=dataclasses.replace(CLIENT, port=40001))
    deltas = tracker.advance(_read([other], [_socket(1000, closed=True)]))
    assert sorted((d.local.port, d.sent, d.connections) for d in deltas) == [
        (40000, 0, 0),
        (40001, 200, 1),
    ]


def test_the_sums_of_sockets_ended_unread_are_told_by_what_they_added() -> None:
    tracker = DeltaTracker()
    (first,) = tracker.advance(_read([], ended=[_ended(6400, 100)]))
    assert (first.sent, first.connections, first.closes, first.local.port) == (6400, 100, 100, 0)
    (second,) = tracker.advance(_read([], ended=[_ended(9600, 150)]))
    assert (second.sent, second.connections, second.closes) == (3200, 50, 50)
    assert tracker.advance(_read([], ended=[_ended(9600, 150)])) == []
    (unknown,) = tracker.advance(_read([], ended=[_ended(10, 1, opened="unknown")]))
    assert (unknown.connections, unknown.closes) == (0, 1)


def test_a_sum_started_again_is_all_new() -> None:
    tracker = DeltaTracker()
    tracker.advance(_read([], ended=[_ended(6400, 100)]))
    (again,) = tracker.advance(_read([], ended=[_ended(64, 1)]))
    assert (again.sent, again.closes) == (64, 1)


@given(st.lists(st.integers(min_value=0, max_value=10**6), min_size=1, max_size=20))
def test_the_intervals_add_up_to_the_total(increments: list[int]) -> None:
    tracker = DeltaTracker()
    total = 0
    told = 0
    for step in increments[:-1]:
        total += step
        told += sum(d.sent for d in tracker.advance(_read([_socket(total)])))
    total += increments[-1]
    told += sum(d.sent for d in tracker.advance(_read([], [_socket(total, closed=True)])))
    assert told == total
