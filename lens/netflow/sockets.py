"""What the kernel-side aggregation gives per TCP socket, decoded: its two endpoints, who opened
it, and counters that only grow while it lives (`bpf/flows.c`). `flows.py` turns successive
readings into what happened in each interval.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Literal, Protocol

from lens.runtime import errors

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Opened = Literal["here", "there", "unknown"]

AF_INET = 2
AF_INET6 = 10
# The kernel program's codes for who opened a connection (LENS_OPENED_*).
OPENED_CODES: dict[int, Opened] = {0: "here", 1: "there", 2: "unknown"}


@dataclass(frozen=True, slots=True, kw_only=True)
class Endpoint:
    address: IPAddress
    port: int


@dataclass(frozen=True, slots=True, kw_only=True)
class SocketCounters:
    """One socket's totals since the program first saw it."""

    socket: int  # the kernel's address of the socket: unique while it lives
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
    closed: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class EndedCounters:
    """The sockets that ended unread, summed in the kernel by who opened them, the peer and the
    server's port (`local.port` 0 when this side opened: its ephemeral ports are not kept;
    `remote.port` 0 when the peer did); totals since the program started."""

    local: Endpoint
    remote: Endpoint
    opened: Opened
    sent: int
    received: int
    segments_in: int
    rtt_sum_us: int
    rtt_count: int
    retransmits: int
    sockets: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Reading:
    """One read of a backend: the live sockets, the sockets that ended after being read (their
    final counters), and the sums of those that ended unread."""

    live: list[SocketCounters]
    closed: list[SocketCounters]
    ended: list[EndedCounters]


def parse_address(family: int, raw: bytes) -> IPAddress:
    """An address as the program stores it (16 bytes, IPv4 in the first 4); an IPv4-mapped IPv6
    address (an IPv4 peer of a dual-stack socket) is the IPv4 address."""
    if len(raw) != 16:
        raise errors.SourceError(f"a socket address of {len(raw)} bytes, expected 16")
    if family == AF_INET:
        return ipaddress.IPv4Address(raw[:4])
    if family == AF_INET6:
        address = ipaddress.IPv6Address(raw)
        return address.ipv4_mapped or address
    raise errors.SourceError(f"address family {family}, expected {AF_INET} or {AF_INET6}")


def parse_opened(code: int) -> Opened:
    opened = OPENED_CODES.get(code)
    if opened is None:
        raise errors.SourceError(f"an opened code {code}, expected one of {sorted(OPENED_CODES)}")
    return opened


@dataclass(frozen=True, slots=True, kw_only=True)
class Dropped:
    """Sockets a backend could not keep because a map was full, since it started."""

    flows_full: int
    closed_full: int


class FlowBackend(Protocol):
    """What reads the sockets' counters: eBPF (loader.py) or sock_diag (diagflows.py)."""

    name: str
    attachment: str  # how eBPF's programs attach (raw_tracepoint, tracepoint); "" for sock_diag

    def read(self) -> Reading:
        """The sockets' counters now (live read before ended: see `flows.DeltaTracker`)."""
        ...

    def dropped(self) -> Dropped: ...

    def close(self) -> None: ...
