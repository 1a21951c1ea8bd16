"""The sock_diag backend: the sockets' TCP_INFO (`sockdiag.py`) sampled each interval into the
same readings the eBPF backend gives. What it cannot know it says: who opened a connection is
read from the listeners (a socket to a listening port was opened by the peer), sockets open at
the first sample are `unknown`, and a socket gone since the last sample ends with the counters
of that sample (what it did after is lost: the fallback's limit)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from lens.netflow import sockdiag
from lens.netflow.listeners import Listeners
from lens.netflow.netlinkdump import SockDiag
from lens.netflow.sockets import AF_INET, AF_INET6, Dropped, Opened, Reading, SocketCounters


class SockDiagFlows:
    """A netlink socket of the network namespace it was made in; `read()` each interval."""

    name = "sockdiag"
    attachment = ""

    def __init__(self, listening: Callable[[], Listeners]) -> None:
        self._diag = SockDiag()
        self._listening = listening
        self._rtt: dict[int, tuple[int, int]] = {}
        self._last: dict[int, SocketCounters] = {}
        self._first = True

    def dump(self) -> list[sockdiag.DiagSocket]:
        """Every TCP socket of both families now."""
        found: list[sockdiag.DiagSocket] = []
        for family in (AF_INET, AF_INET6):
            found += self._diag.dump(family, sockdiag.parse_dump, states=sockdiag.STATES, info=True)
        return found

    def read(self) -> Reading:
        now = self.dump()
        listening = self._listening()
        live = [self._counters(found, listening) for found in now]
        seen = {counters.socket for counters in live}
        closed = [
            dataclasses.replace(counters, closed=True)
            for cookie, counters in self._last.items()
            if cookie not in seen
        ]
        self._last = {counters.socket: counters for counters in live}
        self._rtt = {cookie: total for cookie, total in self._rtt.items() if cookie in seen}
        self._first = False
        return Reading(live=live, closed=closed, ended=[])

    def dropped(self) -> Dropped:
        return Dropped(flows_full=0, closed_full=0)

    def close(self) -> None:
        self._diag.close()

    def _counters(self, found: sockdiag.DiagSocket, listening: Listeners) -> SocketCounters:
        total, count = self._rtt.get(found.cookie, (0, 0))
        if found.rtt_us:
            total, count = total + found.rtt_us, count + 1
            self._rtt[found.cookie] = (total, count)
        before = self._last.get(found.cookie)
        return SocketCounters(
            socket=found.cookie,
            local=found.local,
            remote=found.remote,
            opened=before.opened if before else self._opened(found, listening),
            sent=found.bytes_acked,
            received=found.bytes_received,
            segments_in=found.segments_in,
            rtt_sum_us=total,
            rtt_count=count,
            rtt_min_us=None,
            rtt_max_us=None,
            retransmits=found.retransmits,
            closed=False,
        )

    def _opened(self, found: sockdiag.DiagSocket, listening: Listeners) -> Opened:
        if self._first:
            return "unknown"
        return "there" if listening.accepts(found.local) else "here"
