"""A sock_diag dump asked of the kernel for real."""

from __future__ import annotations

import contextlib
import socket

import pytest

from lens.netflow import sockdiag
from lens.netflow.netlinkdump import SockDiag
from lens.netflow.sockets import AF_INET
from lens.runtime import errors


def test_a_dump_reads_every_datagram_until_done() -> None:
    """More sockets than one datagram holds: all of them, each once."""
    with contextlib.ExitStack() as stack:
        server = stack.enter_context(socket.create_server(("127.0.0.1", 0), backlog=512))
        port = server.getsockname()[1]
        for _ in range(300):
            stack.enter_context(socket.create_connection(("127.0.0.1", port)))
        diag = SockDiag()
        stack.callback(diag.close)
        found = diag.dump(AF_INET, sockdiag.parse_dump, states=sockdiag.STATES, info=True)
        listening = diag.dump(
            AF_INET, sockdiag.parse_listening, states=sockdiag.LISTEN_STATES, info=False
        )
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


def test_a_dump_after_an_error_reads_its_own_answer() -> None:
    """A dump that failed leaves nothing behind for the next one to read as its answer."""
    diag = SockDiag()
    try:
        with pytest.raises(sockdiag.DumpRefused):
            diag.dump(99, sockdiag.parse_listening, states=sockdiag.LISTEN_STATES, info=False)
        with socket.create_server(("127.0.0.1", 0)) as server:
            port = server.getsockname()[1]
            found = diag.dump(
                AF_INET, sockdiag.parse_listening, states=sockdiag.LISTEN_STATES, info=False
            )
        assert [e.port for e in found].count(port) == 1
    finally:
        diag.close()


def test_a_closed_socket_is_a_source_error() -> None:
    diag = SockDiag()
    diag.close()
    with pytest.raises(errors.SourceError, match="sock_diag"):
        diag.dump(AF_INET, sockdiag.parse_dump, states=sockdiag.STATES, info=True)
