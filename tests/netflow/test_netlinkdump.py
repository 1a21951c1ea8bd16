"""A sock_diag dump asked of the kernel for real."""

from __future__ import annotations

import socket

import pytest

from lens.netflow import sockdiag
from lens.netflow.netlinkdump import SockDiag
from lens.netflow.sockets import AF_INET
from lens.runtime import errors


def test_a_dump_reads_every_datagram_until_done() -> None:
    """More sockets than one datagram holds: all of them, each once."""
    with socket.create_server(("127.0.0.1", 0), backlog=512) as server:
        port = server.getsockname()[1]
        clients = [socket.create_connection(("127.0.0.1", port)) for _ in range(300)]
        diag = SockDiag()
        try:
            found = diag.dump(AF_INET, sockdiag.parse_dump, states=sockdiag.STATES, info=True)
            listening = diag.dump(
                AF_INET, sockdiag.parse_listening, states=sockdiag.LISTEN_STATES, info=False
            )
        finally:
            diag.close()
            for client in clients:
                client.close()
    ours = [s for s in found if s.remote.port == port and s.local.port != port]
    assert len({s.local.port for s in ours}) == len(ours) == 300
    assert [e.port for e in listening].count(port) == 1


def test_a_refused_dump_is_a_source_error() -> None:
    diag = SockDiag()
    try:
        with pytest.raises(errors.SourceError, match="refused the dump"):
            diag.dump(99, sockdiag.parse_listening, states=sockdiag.LISTEN_STATES, info=False)
    finally:
        diag.close()


def test_a_closed_socket_is_a_source_error() -> None:
    diag = SockDiag()
    diag.close()
    with pytest.raises(errors.SourceError, match="sock_diag"):
        diag.dump(AF_INET, sockdiag.parse_dump, states=sockdiag.STATES, info=True)
