"""The TCP sockets listening on the node, IPv4 and IPv6, through sock_diag or /proc/net/tcp
and tcp6 (the original read tcp only and missed every dual-stack listener). They tell a
connection a peer opened to this node from one it opened (`classify.py`), and
/v1/net-flow/tcp-listen lists their ports."""

from __future__ import annotations

import errno
import ipaddress
import struct
from dataclasses import dataclass
from pathlib import Path

from lens.netflow import sockdiag
from lens.netflow.netlinkdump import SockDiag
from lens.netflow.sockets import AF_INET, AF_INET6, Endpoint, IPAddress
from lens.runtime import errors

TCP_LISTEN = "0A"
_ANY_V4 = ipaddress.IPv4Address("0.0.0.0")
_ANY_V6 = ipaddress.IPv6Address("::")
PROC_NET = ("proc/net/tcp", "proc/net/tcp6")
# What the kernel answers an IPv6 dump where IPv6 is off (no such family).
IPV6_OFF = (errno.ENOENT, errno.EAFNOSUPPORT)


@dataclass(frozen=True, slots=True, kw_only=True)
class Listeners:
    """Listening endpoints; an unspecified address (0.0.0.0, ::) listens on every one.
    `source`: where they were read (sock_diag, or the proc files where netlink is refused)."""

    endpoints: frozenset[Endpoint]
    source: str = "sock_diag"

    @property
    def ports(self) -> list[int]:
        return sorted({endpoint.port for endpoint in self.endpoints})

    def accepts(self, local: Endpoint) -> bool:
        """Whether a connection to `local` came to a listening socket."""
        # A socket on :: takes IPv4 too (dual stack, the Linux default).
        candidates: tuple[IPAddress, ...] = (local.address, _ANY_V4, _ANY_V6)
        return any(Endpoint(address=a, port=local.port) in self.endpoints for a in candidates)


def parse_address(text: str) -> IPAddress:
    """/proc/net/tcp's hex address: 4-byte words in the kernel's (little-endian) order."""
    try:
        raw = bytes.fromhex(text)
    except ValueError:
        raise errors.SourceError(f"/proc/net/tcp address {text!r} is not hex") from None
    if len(raw) not in (4, 16):
        raise errors.SourceError(f"/proc/net/tcp address {text!r}: {len(raw)} bytes")
    words = struct.unpack(f"<{len(raw) // 4}I", raw)
    packed = struct.pack(f">{len(words)}I", *words)
    address = ipaddress.ip_address(packed)
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def parse_listening(text: str, *, source: str) -> frozenset[Endpoint]:
    """The LISTEN sockets of one /proc/net/tcp{,6} text; a line it cannot read is a
    SourceError naming it."""
    found = set()
    for number, line in enumerate(text.splitlines()[1:], start=2):
        fields = line.split()
        if not fields:
            continue
        if len(fields) < 4 or ":" not in fields[1]:
            raise errors.SourceError(f"{source}:{number}: not a socket line")
        if fields[3] != TCP_LISTEN:
            continue
        address, _, port = fields[1].partition(":")
        try:
            number_port = int(port, 16)
        except ValueError:
            raise errors.SourceError(f"{source}:{number}: port {port!r} is not hex") from None
        found.add(Endpoint(address=parse_address(address), port=number_port))
    return frozenset(found)


def read_listeners(root: Path) -> Listeners:
    """The listening sockets of the network namespace the reader is in (the DaemonSet runs in
    the host's: hostNetwork): asked of the kernel through sock_diag for LISTEN sockets only,
    else read from /proc/net/tcp and tcp6 under the host root, which walks every socket."""
    try:
        return read_diag_listeners()
    except errors.SourceError as exc:
        found = read_proc_listeners(root)
        return Listeners(endpoints=found.endpoints, source=f"{found.source} ({exc})")


def read_diag_listeners() -> Listeners:
    """The LISTEN sockets of both families through netlink sock_diag."""
    diag = SockDiag()
    try:
        endpoints = set(_listening(diag, AF_INET))
        try:
            endpoints |= set(_listening(diag, AF_INET6))
        except sockdiag.DumpRefused as exc:
            if exc.code not in IPV6_OFF:
                raise
    finally:
        diag.close()
    return Listeners(endpoints=frozenset(endpoints))


def _listening(diag: SockDiag, family: int) -> list[Endpoint]:
    return diag.dump(family, sockdiag.parse_listening, states=sockdiag.LISTEN_STATES, info=False)


def read_proc_listeners(root: Path) -> Listeners:
    """The listening sockets of /proc/net/tcp and tcp6 under `root`."""
    endpoints: set[Endpoint] = set()
    for relative in PROC_NET:
        path = root / relative
        try:
            text = path.read_text(errors="replace")
        except FileNotFoundError:
            continue  # IPv6 disabled
        except OSError as exc:
            raise errors.SourceError(f"{path}: cannot read ({exc.strerror})") from None
        endpoints |= parse_listening(text, source=str(path))
    return Listeners(endpoints=frozenset(endpoints), source="/proc/net/tcp")
