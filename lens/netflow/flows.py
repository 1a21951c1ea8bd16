"""Successive readings of the per-socket counters (`sockets.py`) turned into what each socket
did in the interval: bytes each way, segments, RTT samples, retransmits, and whether it was
opened or closed then. The kernel's counters only grow, so the interval's share is the
difference from the last reading; nothing is reset in the kernel, and nothing is lost to a
reset racing an update.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from lens.netflow.sockets import Endpoint, Opened, SocketCounters


@dataclass(frozen=True, slots=True, kw_only=True)
class FlowDelta:
    """One socket's interval."""

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
    connected: bool  # opened (by either side) since the last reading
    closed: bool


_Identity = tuple[int, Endpoint, Endpoint]


class DeltaTracker:
    """The last reading of each live socket, to subtract from the next."""

    def __init__(self) -> None:
        self._last: dict[_Identity, SocketCounters] = {}

    def advance(
        self, live: Iterable[SocketCounters], closed: Iterable[SocketCounters]
    ) -> list[FlowDelta]:
        """The interval of every socket read now: `live` first, then `closed`, the final
        counters of sockets destroyed since the last reading, read after `live` — so a socket
        destroyed in between is in both, and the closed reading adds only what came after the
        live one."""
        deltas = []
        seen: dict[_Identity, SocketCounters] = {}
        for now in live:
            identity = _identity(now)
            seen[identity] = now
            deltas.append(self._delta(now, self._last.get(identity)))
        for final in closed:
            identity = _identity(final)
            before = seen.pop(identity, None) or self._last.get(identity)
            deltas.append(self._delta(final, before))
        self._last = seen
        return [delta for delta in deltas if _moved(delta)]

    @property
    def tracked(self) -> int:
        return len(self._last)

    @staticmethod
    def _delta(now: SocketCounters, last: SocketCounters | None) -> FlowDelta:
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
            connected=last is None and now.opened != "unknown",
            closed=now.closed,
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


def _identity(counters: SocketCounters) -> _Identity:
    return counters.socket, counters.local, counters.remote


def _moved(delta: FlowDelta) -> bool:
    return bool(
        delta.sent
        or delta.received
        or delta.segments_in
        or delta.retransmits
        or delta.connected
        or delta.closed
    )
