"""The fallback without eBPF: each TCP socket's TCP_INFO through netlink sock_diag (what `ss -tin`
shows: bytes acked and received, segments, retransmits, smoothed RTT), sampled every interval.
It needs no program, no headers and no capability beyond reading the netns's sockets, and it
misses what a socket did between its last sample and its end (documented in docs/netflow.md).
The socket dump is parsed here; `SockDiagFlows` gives the same readings as the eBPF backend.
"""

from __future__ import annotations

import ipaddress
import socket
import struct
from dataclasses import dataclass

from lens.netflow import sockets
from lens.netflow.sockets import Endpoint
from lens.runtime import errors

NETLINK_SOCK_DIAG = 4
SOCK_DIAG_BY_FAMILY = 20
NLM_F_REQUEST_DUMP = 0x301
NLMSG_ERROR = 2
NLMSG_DONE = 3
INET_DIAG_INFO = 2
# Every state with a full socket and a TCP_INFO: not LISTEN, nor TIME_WAIT (a minisocket). CLOSE
# is kept: a socket whose both sides closed stays there while its application holds it.
STATES = ((1 << 12) - 1) & ~((1 << 10) | (1 << 6))
# LISTEN only: the kernel then walks its listening sockets, not every connection's bucket
# (reading /proc/net/tcp walks them all: milliseconds on a node with many connections).
LISTEN_STATES = 1 << 10
_HEADER = struct.Struct("=IHHII")
_DIAG_MSG_SIZE = 72
# struct tcp_info (include/uapi/linux/tcp.h): the offsets of the fields read.
_RTT_US = 68
_TOTAL_RETRANS = 100
_BYTES_ACKED = 120
_BYTES_RECEIVED = 128
_SEGS_IN = 140
_INFO_NEEDED = 144
TCP_FIN_WAIT2 = 5


class DumpRefused(errors.SourceError):
    """The kernel answered a dump with an error (ENOENT: no such family, e.g. IPv6 off)."""

    def __init__(self, code: int) -> None:
        super().__init__(f"sock_diag refused the dump (errno {code})")
        self.code = code


@dataclass(frozen=True, slots=True, kw_only=True)
class DiagSocket:
    """One socket of the dump."""

    cookie: int
    local: Endpoint
    remote: Endpoint
    rtt_us: int
    bytes_acked: int  # payload bytes the peer acknowledged (not the SYN's and FIN's numbers)
    bytes_received: int
    segments_in: int
    retransmits: int


def request(family: int, sequence: int, *, states: int = STATES, info: bool = True) -> bytes:
    """A dump request of the TCP sockets of `family` in `states`, with their TCP_INFO or not."""
    extensions = 1 << (INET_DIAG_INFO - 1) if info else 0
    body = struct.pack("=BBBBI", family, socket.IPPROTO_TCP, extensions, 0, states)
    body += bytes(48)  # inet_diag_sockid: any
    return _HEADER.pack(_HEADER.size + len(body), SOCK_DIAG_BY_FAMILY, NLM_F_REQUEST_DUMP,
                        sequence, 0) + body  # fmt: skip


def parse_dump(data: bytes) -> tuple[list[DiagSocket], bool]:
    """The sockets in one datagram of the dump, and whether the dump ended; a message that
    cannot be read is a SourceError."""
    bodies, done = _socket_messages(data)
    return [parsed for parsed in map(_socket, bodies) if parsed is not None], done


def parse_listening(data: bytes) -> tuple[list[Endpoint], bool]:
    """The local endpoints of the sockets in one datagram of a LISTEN dump, and whether the
    dump ended."""
    bodies, done = _socket_messages(data)
    return [_endpoints(body)[0] for body in bodies], done


def _socket_messages(data: bytes) -> tuple[list[bytes], bool]:
    bodies: list[bytes] = []
    offset = 0
    while offset + _HEADER.size <= len(data):
        length, kind, _, _, _ = _HEADER.unpack_from(data, offset)
        if length < _HEADER.size or offset + length > len(data):
            raise errors.SourceError(f"sock_diag: a message of {length} bytes at {offset}")
        body = data[offset + _HEADER.size : offset + length]
        if kind == NLMSG_DONE:
            return bodies, True
        if kind == NLMSG_ERROR:
            code = -struct.unpack_from("=i", body)[0] if len(body) >= 4 else 0
            raise DumpRefused(code)
        if kind == SOCK_DIAG_BY_FAMILY:
            if len(body) < _DIAG_MSG_SIZE:
                raise errors.SourceError(f"sock_diag: a socket message of {len(body)} bytes")
            bodies.append(body)
        offset += (length + 3) & ~3
    return bodies, False


def _endpoints(body: bytes) -> tuple[Endpoint, Endpoint]:
    family = body[0]
    local_port, remote_port = struct.unpack_from(">HH", body, 4)
    size = 4 if family == sockets.AF_INET else 16
    try:
        local = _address(family, body[8 : 8 + size])
        remote = _address(family, body[24 : 24 + size])
    except ValueError:
        raise errors.SourceError(f"sock_diag: address family {family}") from None
    return Endpoint(address=local, port=local_port), Endpoint(address=remote, port=remote_port)


def _socket(body: bytes) -> DiagSocket | None:
    local, remote = _endpoints(body)
    cookie_low, cookie_high = struct.unpack_from("=II", body, 44)
    info = _info(body[_DIAG_MSG_SIZE:])
    if info is None:
        return None
    # bytes_acked counts the SYN's sequence number, and the FIN's once acked (FIN_WAIT2).
    control = 2 if body[1] == TCP_FIN_WAIT2 else 1
    return DiagSocket(
        cookie=cookie_high << 32 | cookie_low,
        local=local,
        remote=remote,
        rtt_us=struct.unpack_from("=I", info, _RTT_US)[0],
        bytes_acked=max(0, struct.unpack_from("=Q", info, _BYTES_ACKED)[0] - control),
        bytes_received=struct.unpack_from("=Q", info, _BYTES_RECEIVED)[0],
        segments_in=struct.unpack_from("=I", info, _SEGS_IN)[0],
        retransmits=struct.unpack_from("=I", info, _TOTAL_RETRANS)[0],
    )


def _address(family: int, raw: bytes) -> sockets.IPAddress:
    if family == sockets.AF_INET:
        return ipaddress.IPv4Address(raw)
    if family == sockets.AF_INET6:
        address = ipaddress.IPv6Address(raw)
        return address.ipv4_mapped or address
    raise ValueError(family)


def _info(attributes: bytes) -> bytes | None:
    """The TCP_INFO attribute's payload (None: the socket has none, or an older, shorter one)."""
    offset = 0
    while offset + 4 <= len(attributes):
        length, kind = struct.unpack_from("=HH", attributes, offset)
        if length < 4:
            return None
        if kind == INET_DIAG_INFO:
            payload = attributes[offset + 4 : offset + length]
            return payload if len(payload) >= _INFO_NEEDED else None
        offset += (length + 3) & ~3
    return None
