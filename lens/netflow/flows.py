"""Successive readings of the sockets' counters (`sockets.py`) turned into what happened in each
interval: bytes each way, segments, RTT samples, retransmits, connections opened and closed.
The kernel's counters only grow, so the interval's share is the difference from the last
reading; nothing is reset in the kernel, and nothing is lost to a reset racing an update.
"""

from __future__ import annotations

from dataclasses import dataclass

from lens.netflow.sockets import EndedCounters, Endpoint, Opened, Reading, SocketCounters


@dataclass(frozen=True, slots=True, kw_only=True)
class FlowDelta:
    """One socket's interval, or the interval of the sockets of one peer that ended unread."""

    local: Endpoint
    remote: Endpoint
    opened: Opened
    sent: int
    received: int
    segments_in: int
    rtt_sum_us: int
    rtt_count: int
    rtt_min_us: int | None
    rtt_max_us: int | None
    retransmits: int
    connections: int  # opened (by either side) in the interval, as far as known
    closes: int


_Identity = tuple[int, Endpoint, Endpoint]
_EndedKey = tuple[Endpoint, Endpoint, Opened]


class DeltaTracker:
    """The last reading of each live socket and of each peer's ended sum."""

    def __init__(self) -> None:
        self._last: dict[_Identity, SocketCounters] = {}
        self._ended: dict[_EndedKey, EndedCounters] = {}

    def advance(self, reading: Reading) -> list[FlowDelta]:
        """The intervals of everything read now. The live sockets were read before the closed
        ones, so a socket that ended in between is in both, and its closed reading adds only
        what came after its live one."""
        deltas = []
        seen: dict[_Identity, SocketCounters] = {}
        for now in reading.live:
            identity = _identity(now)
            seen[identity] = now
            deltas.append(_socket_delta(now, self._last.get(identity)))
        for final in reading.closed:
            identity = _identity(final)
            before = seen.pop(identity, None) or self._last.get(identity)
            deltas.append(_socket_delta(final, before))
        self._last = seen
        for total in reading.ended:
            key = (total.local, total.remote, total.opened)
            deltas.append(_ended_delta(total, self._ended.get(key)))
            self._ended[key] = total
        return [delta for delta in deltas if _moved(delta)]

    @property
    def tracked(self) -> int:
        return len(self._last)


def _socket_delta(now: SocketCounters, last: SocketCounters | None) -> FlowDelta:
    before = _counts(last) if last is not None else (0, 0, 0, 0, 0, 0)
    sent, received, segments_in, rtt_sum_us, rtt_count, retransmits = (
        value - earlier for value, earlier in zip(_counts(now), before, strict=True)
    )
    return FlowDelta(
        local=now.local,
        remote=now.remote,
        opened=now.opened,
        sent=sent,
        received=received,
        segments_in=segments_in,
        rtt_sum_us=rtt_sum_us,
        rtt_count=rtt_count,
        rtt_min_us=now.rtt_min_us,
        rtt_max_us=now.rtt_max_us,
        retransmits=retransmits,
        connections=int(last is None and now.opened != "unknown"),
        closes=int(now.closed),
    )


def _ended_delta(now: EndedCounters, last: EndedCounters | None) -> FlowDelta:
    """A peer's ended sockets since the last reading: none of them was ever read live, so each
    one's opening is counted here too (unless it was open before Lens)."""
    if last is not None and last.sockets > now.sockets:
        last = None  # the sum started again (its entry was evicted): all of it is new
    before = _ended_counts(last) if last is not None else (0, 0, 0, 0, 0, 0, 0)
    sent, received, segments_in, rtt_sum_us, rtt_count, retransmits, sockets = (
        value - earlier for value, earlier in zip(_ended_counts(now), before, strict=True)
    )
    return FlowDelta(
        local=now.local,
        remote=now.remote,
        opened=now.opened,
        sent=sent,
        received=received,
        segments_in=segments_in,
        rtt_sum_us=rtt_sum_us,
        rtt_count=rtt_count,
        rtt_min_us=None,
        rtt_max_us=None,
        retransmits=retransmits,
        connections=sockets if now.opened != "unknown" else 0,
        closes=sockets,
    )


def _counts(counters: SocketCounters) -> tuple[int, int, int, int, int, int]:
    return (
        counters.sent,
        counters.received,
        counters.segments_in,
        counters.rtt_sum_us,
        counters.rtt_count,
        counters.retransmits,
    )


def _ended_counts(total: EndedCounters) -> tuple[int, int, int, int, int, int, int]:
    return (
        total.sent,
        total.received,
        total.segments_in,
        total.rtt_sum_us,
        total.rtt_count,
        total.retransmits,
        total.sockets,
    )


def _identity(counters: SocketCounters) -> _Identity:
    return counters.socket, counters.local, counters.remote


def _moved(delta: FlowDelta) -> bool:
    return bool(
        delta.sent
        or delta.received
        or delta.segments_in
        or delta.retransmits
        or delta.connections
        or delta.closes
    )
