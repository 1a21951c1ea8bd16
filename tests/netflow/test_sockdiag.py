"""The sock_diag dump: parsed from the kernel's own answer for sockets of this test, and from any
bytes without a foreign exception."""

from __future__ import annotations

import ipaddress
import struct
import time
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lens.netflow import sockdiag, sockets
from lens.netflow.diagflows import SockDiagFlows
from lens.netflow.listeners import Listeners
from lens.netflow.sockets import Endpoint
from lens.runtime import errors

from . import loopback

NOTHING_LISTENS = Listeners(endpoints=frozenset())


def test_a_loopback_connections_counters_are_the_kernels() -> None:
    with loopback.connection() as connection:
        connection.carry(100_000)
        time.sleep(0.05)  # the last ACK
        reader = SockDiagFlows(lambda: NOTHING_LISTENS)
        try:
            found = {s.local.port: s for s in reader.dump()}
        finally:
            reader.close()
    port = connection.port
    sender = next(each for each in found.values() if each.remote.port == port)
    assert sender.bytes_acked == 100_000
    assert found[port].bytes_received == 100_000
    assert sender.cookie != found[port].cookie


def test_the_end_of_a_dump_and_an_error_are_told() -> None:
    done = struct.pack("=IHHII", 20, sockdiag.NLMSG_DONE, 2, 1, 0) + bytes(4)
    assert sockdiag.parse_dump(done) == ([], True)
    refused = struct.pack("=IHHII", 20, sockdiag.NLMSG_ERROR, 0, 1, 0) + struct.pack("=i", -1)
    with pytest.raises(errors.SourceError, match="errno 1"):
        sockdiag.parse_dump(refused)


def test_a_truncated_message_is_a_source_error() -> None:
    header = struct.pack("=IHHII", 200, sockdiag.SOCK_DIAG_BY_FAMILY, 2, 1, 0)
    with pytest.raises(errors.SourceError, match="a message of 200 bytes"):
        sockdiag.parse_dump(header + bytes(20))


def _ports_of_sockets(data: bytes) -> list[int]:
    return [found.local.port for found in sockdiag.parse_dump(data)[0]]


def _ports_of_listeners(data: bytes) -> list[int]:
    return [endpoint.port for endpoint in sockdiag.parse_listening(data)[0]]


@pytest.mark.parametrize("ports_of", [_ports_of_sockets, _ports_of_listeners])
@given(data=st.binary(max_size=600))
def test_any_bytes_are_ports_or_a_source_error(
    ports_of: Callable[[bytes], list[int]], data: bytes
) -> None:
    """Both parsers: sockets (parse_dump) and listeners (parse_listening)."""
    try:
        ports = ports_of(data)
    except errors.SourceError:
        return
    assert all(0 <= port <= 65535 for port in ports)


def test_a_listener_message_is_its_local_endpoint() -> None:
    message = struct.pack("=BBBB", sockets.AF_INET6, 10, 0, 0) + struct.pack(">HH", 8080, 0)
    message += ipaddress.IPv6Address("::ffff:10.0.0.7").packed + bytes(16)  # an IPv4 peer's
    message += bytes(72 - len(message))  # struct inet_diag_msg is 72 bytes
    datagram = struct.pack("=IHHII", 16 + len(message), sockdiag.SOCK_DIAG_BY_FAMILY, 2, 1, 0)
    found, done = sockdiag.parse_listening(datagram + message)
    assert (found, done) == (
        [Endpoint(address=ipaddress.IPv4Address("10.0.0.7"), port=8080)],
        False,
    )
    refused = struct.pack("=IHHII", 20, sockdiag.NLMSG_ERROR, 0, 1, 0) + struct.pack("=i", -2)
    with pytest.raises(sockdiag.DumpRefused) as raised:
        sockdiag.parse_listening(refused)
    assert raised.value.code == 2
