"""A TCP connection over 127.0.0.1 for the netflow tests: the client, the accepted socket and
the server's port, and bytes carried from one to the other."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class Loopback:
    client: socket.socket
    accepted: socket.socket
    port: int

    def carry(self, count: int) -> None:
        """`count` bytes sent by the client, all read by the accepted socket."""
        self.client.sendall(b"x" * count)
        got = 0
        while got < count:
            got += len(self.accepted.recv(65536))


@contextlib.contextmanager
def connection() -> Iterator[Loopback]:
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        with socket.create_connection(("127.0.0.1", port)) as client:
            accepted, _ = server.accept()
            with accepted:
                yield Loopback(client, accepted, port)
