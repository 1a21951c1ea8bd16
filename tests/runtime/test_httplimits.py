from __future__ import annotations

import io
import json
import socket
import time
from collections.abc import Iterator

import pytest

from lens.runtime import httplimits


@pytest.fixture
def pair() -> Iterator[tuple[socket.socket, socket.socket]]:
    server, client = socket.socketpair()
    with server, client:
        yield server, client


def test_impossible_limits_are_refused() -> None:
    with pytest.raises(ValueError, match="positive"):
        httplimits.Limits(read_timeout_seconds=0)
    with pytest.raises(ValueError, match="positive"):
        httplimits.Limits(idle_timeout_seconds=-1)
    with pytest.raises(ValueError, match="at least 1"):
        httplimits.Limits(max_connections=0)


def test_the_reads_of_a_head_share_one_read_timeout(
    pair: tuple[socket.socket, socket.socket],
) -> None:
    server, client = pair
    reader = httplimits.DeadlineReader(server, httplimits.Limits(read_timeout_seconds=0.3))
    buffered = io.BufferedReader(reader)
    reader.expect_head()
    client.sendall(b"GET / HTTP/1.1\r\n")
    assert buffered.readline() == b"GET / HTTP/1.1\r\n"
    time.sleep(0.35)  # the head's time is spent, although no single read waited
    client.sendall(b"Host: x\r\n")
    with pytest.raises(TimeoutError):
        buffered.readline()


def test_after_the_head_each_read_waits_the_read_timeout(
    pair: tuple[socket.socket, socket.socket],
) -> None:
    server, client = pair
    reader = httplimits.DeadlineReader(server, httplimits.Limits(read_timeout_seconds=0.2))
    reader.expect_head()
    reader.head_done()
    assert server.gettimeout() == 0.2  # the answer's writes are bounded as well
    client.sendall(b"abc")
    assert reader.read(10) == b"abc"
    started = time.monotonic()
    with pytest.raises(TimeoutError):
        reader.read(10)
    assert 0.15 < time.monotonic() - started < 1


def test_an_idle_wait_lasts_the_idle_timeout(pair: tuple[socket.socket, socket.socket]) -> None:
    server, client = pair
    limits = httplimits.Limits(read_timeout_seconds=0.05, idle_timeout_seconds=0.3)
    reader = httplimits.DeadlineReader(server, limits)
    reader.expect_idle()
    started = time.monotonic()
    with pytest.raises(TimeoutError):
        reader.read(10)
    assert 0.25 < time.monotonic() - started < 1
    reader.expect_idle()
    client.sendall(b"GET")
    assert reader.read(10) == b"GET"


def test_a_refused_connection_gets_a_json_503_and_is_closed(
    pair: tuple[socket.socket, socket.socket],
) -> None:
    server, client = pair
    client.sendall(b"GET /metrics HTTP/1.1\r\n\r\n")  # unread request bytes are drained
    httplimits.refuse(server)
    assert server.fileno() == -1
    client.settimeout(2)
    answer = b""
    while chunk := client.recv(4096):
        answer += chunk
    head, body = answer.split(b"\r\n\r\n", 1)
    assert head.startswith(b"HTTP/1.1 503 Service Unavailable\r\n")
    assert b"\r\nConnection: close" in head
    assert f"Content-Length: {len(body)}".encode() in head
    assert json.loads(body) == {"error": "too many connections"}
