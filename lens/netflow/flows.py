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
            # A socket met twice in one reading adds only what came between (its counters only
            # grow): the eBPF backend takes each key of its map walk once, this holds for any.
            earlier = seen.get(identity)
            deltas.append(
                _socket_delta(now, self._last.get(identity) if earlier is None else earlier)
            )
            seen[identity] = now
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
    return _delta(
        now,
        _less(_counts(now), before),
        rtt=(now.rtt_min_us, now.rtt_max_us),
        connections=int(last is None and now.opened != "unknown"),
        closes=int(now.closed),
    )


def _ended_delta(now: EndedCounters, last: EndedCounters | None) -> FlowDelta:
    """A peer's ended sockets since the last reading: none of them was ever read live, so each
    one's opening is counted here too (unless it was open before Lens)."""
    if last is not None and last.sockets > now.sockets:
        last = None  # the sum started again (its entry was evicted): all of it is new
    before = _counts(last) if last is not None else (0, 0, 0, 0, 0, 0)
    sockets = now.sockets - (last.sockets if last is not None else 0)
    return _delta(
        now,
        _less(_counts(now), before),
        rtt=(None, None),
        connections=sockets if now.opened != "unknown" else 0,
        closes=sockets,
    )


_Counts = tuple[int, int, int, int, int, int]


def _less(now: _Counts, before: _Counts) -> _Counts:
    sent, received, segments_in, rtt_sum_us, rtt_count, retransmits = (
        value - earlier for value, earlier in zip(now, before, strict=True)
    )
    return sent, received, segments_in, rtt_sum_us, rtt_count, retransmits


def _delta(
    now: SocketCounters | EndedCounters,
    counts: _Counts,
    *,
    rtt: tuple[int | None, int | None],
    connections: int,
    closes: int,
) -> FlowDelta:
    sent, received, segments_in, rtt_sum_us, rtt_count, retransmits = counts
    return FlowDelta(
        local=now.local,
        remote=now.remote,
        opened=now.opened,
        sent=sent,
        received=received,
        segments_in=segments_in,
        rtt_sum_us=rtt_sum_us,
        rtt_count=rtt_count,
        rtt_min_us=rtt[0],
        rtt_max_us=rtt[1],
        retransmits=retransmits,
        connections=connections,
        closes=closes,
    )


def _counts(counters: SocketCounters | EndedCounters) -> _Counts:
    return (
        counters.sent,
        counters.received,
        counters.segments_in,
        counters.rtt_sum_us,
        counters.rtt_count,
        counters.retransmits,
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
