"""A netlink sock_diag socket of the network namespace it was made in, and the dumps asked of
it: one request per address family, its datagrams parsed (`sockdiag.py`) until the dump ends."""

from __future__ import annotations

import socket
from collections.abc import Callable
from typing import TypeVar

from lens.netflow import sockdiag
from lens.runtime import errors

RECEIVE_BYTES = 1 << 20
TIMEOUT_SECONDS = 10.0  # a dump of a node's sockets takes milliseconds
Parsed = TypeVar("Parsed")


class SockDiag:
    """The netlink socket; `close()` once."""

    def __init__(self) -> None:
        self._netlink = _open()
        self._sequence = 0
        self._closed = False

    def dump(
        self,
        family: int,
        parse: Callable[[bytes], tuple[list[Parsed], bool]],
        *,
        states: int,
        info: bool,
    ) -> list[Parsed]:
        """The TCP sockets of `family` in `states`, as `parse` reads each datagram."""
        if self._closed:
            raise errors.SourceError("sock_diag: asked for a dump after close()")
        self._sequence += 1
        found: list[Parsed] = []
        try:
            self._netlink.send(sockdiag.request(family, self._sequence, states=states, info=info))
            done = False
            while not done:
                parsed, done = parse(self._netlink.recv(RECEIVE_BYTES))
                found += parsed
        except (OSError, errors.SourceError) as exc:
            # What is left of this dump must not be read as the next one's answer.
            self._netlink.close()
            self._netlink = _open()
            if isinstance(exc, errors.SourceError):
                raise
            raise errors.SourceError(f"sock_diag: {exc.strerror or exc}") from None
        return found

    def close(self) -> None:
        self._closed = True
        self._netlink.close()


def _open() -> socket.socket:
    try:
        netlink = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, sockdiag.NETLINK_SOCK_DIAG)
    except OSError as exc:
        raise errors.SourceError(f"sock_diag: no netlink socket ({exc.strerror})") from None
    netlink.settimeout(TIMEOUT_SECONDS)
    return netlink
