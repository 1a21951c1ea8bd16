from __future__ import annotations

import asyncio
import http.client
import json
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import Any

import pytest

from lens.runtime import exposition, httplimits, httpserver
from lens.runtime.clock import FakeClock
from lens.runtime.health import Health
from lens.runtime.httpserver import Request, Response
from lens.runtime.selfmetrics import SelfMetrics


class Server:
    def __init__(self, limits: httplimits.Limits | None = None) -> None:
        limits = limits or httplimits.Limits()
        self.metrics = SelfMetrics(process=False)
        self.health = Health(clock=FakeClock(), metrics=self.metrics, stale_after=30)
        self.cache = exposition.ExpositionCache()
        routes = httpserver.ops_routes(self.health, self.cache)
        self.server = httpserver.OpsServer(
            host="127.0.0.1",
            port=0,
            routes=routes,
            metrics=self.metrics,
            read_timeout_seconds=limits.read_timeout_seconds,
            idle_timeout_seconds=limits.idle_timeout_seconds,
            max_connections=limits.max_connections,
        )

    def get(self, path: str) -> tuple[int, str, bytes]:
        conn = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=3)
        try:
            conn.request("GET", path)
            response = conn.getresponse()
            return response.status, response.getheader("Content-Type") or "", response.read()
        finally:
            conn.close()


@pytest.fixture
def server() -> Iterator[Server]:
    s = Server()
    s.server.add_route("/v1/echo", lambda r: httpserver.json_response({"q": r.query.get("x", [])}))
    s.server.add_route("/v1/broken", _broken)
    asyncio.run(s.server.start())
    yield s
    asyncio.run(s.server.stop())


def _broken(_: Request) -> Response:
    raise RuntimeError("handler bug")


def test_metrics_serves_the_cached_bytes(server: Server) -> None:
    server.cache.store(b"lens_x 1.0\n", rendered_at=1.0)
    status, content_type, body = server.get("/metrics")
    assert (status, body) == (200, b"lens_x 1.0\n")
    assert content_type.startswith("text/plain; version=0.0.4")


def test_health_endpoints_answer_with_status_codes(server: Server) -> None:
    assert server.get("/healthz")[0] == 200
    server.health.add_readiness("db", lambda: None)
    status, _, body = server.get("/readyz")
    assert status == 503
    assert json.loads(body)["checks"]["db"]["detail"] == "not checked yet"
    server.health.evaluate_readiness()
    assert server.get("/readyz")[0] == 200


def test_routes_unknown_paths_and_broken_handlers(server: Server) -> None:
    status, _, body = server.get("/v1/echo?x=1&x=2")
    assert (status, json.loads(body)) == (200, {"q": ["1", "2"]})
    assert server.get("/nope")[0] == 404
    assert server.get("/v1/broken")[0] == 500
    requests = server.metrics.registry.get_sample_value
    assert requests("lens_http_requests_total", {"route": "other", "code": "404"}) == 1
    assert requests("lens_http_requests_total", {"route": "/v1/broken", "code": "500"}) == 1
    assert requests("lens_http_requests_total", {"route": "/v1/echo", "code": "200"}) == 1


def test_keep_alive_serves_several_requests_on_one_connection(server: Server) -> None:
    server.cache.store(b"x 1\n", rendered_at=1.0)
    conn = http.client.HTTPConnection("127.0.0.1", server.server.port, timeout=3)
    try:
        for _ in range(3):
            conn.request("GET", "/metrics")
            assert conn.getresponse().read() == b"x 1\n"
    finally:
        conn.close()


def test_routes_are_fixed_once_started(server: Server) -> None:
    with pytest.raises(RuntimeError, match="fixed"):
        server.server.add_route("/late", _broken)


@contextmanager
def _serving(**limits: Any) -> Iterator[Server]:
    s = Server(httplimits.Limits(**limits))
    s.cache.store(b"x 1\n", rendered_at=1.0)
    asyncio.run(s.server.start())
    try:
        yield s
    finally:
        asyncio.run(s.server.stop())


def _eventually(condition: Callable[[], bool], *, within: float = 2.0) -> bool:
    deadline = time.monotonic() + within
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def _kept_alive(server: Server) -> http.client.HTTPConnection:
    """A connection that has been answered once and is now idle."""
    conn = http.client.HTTPConnection("127.0.0.1", server.server.port, timeout=3)
    conn.request("GET", "/metrics")
    assert conn.getresponse().read() == b"x 1\n"
    return conn


def _seconds_until_closed(sock: socket.socket) -> float:
    """How long until the server closes `sock` (EOF or reset); fails past the socket timeout."""
    started = time.monotonic()
    with suppress(ConnectionResetError):
        assert sock.recv(1024) == b""
    return time.monotonic() - started


def _open_connections(server: Server) -> float | None:
    return server.metrics.registry.get_sample_value("lens_http_connections")


def test_an_idle_kept_alive_connection_is_closed_after_the_idle_timeout() -> None:
    with _serving(idle_timeout_seconds=0.3, read_timeout_seconds=2) as server:
        conn = _kept_alive(server)
        assert conn.sock is not None
        waited = _seconds_until_closed(conn.sock)
        assert 0.2 < waited < 2
        assert _eventually(lambda: _open_connections(server) == 0)
        conn.close()


def test_requests_on_a_kept_alive_connection_each_get_their_own_read_timeout() -> None:
    with _serving(idle_timeout_seconds=1, read_timeout_seconds=0.2) as server:
        conn = _kept_alive(server)
        try:
            for _ in range(4):  # 0.4 s in all: longer than one read timeout, each gap shorter
                time.sleep(0.1)
                conn.request("GET", "/metrics")
                assert conn.getresponse().read() == b"x 1\n"
        finally:
            conn.close()
        requests = server.metrics.registry.get_sample_value
        assert requests("lens_http_requests_total", {"route": "/metrics", "code": "200"}) == 5


def test_a_client_that_sends_half_a_request_is_cut_after_the_read_timeout() -> None:
    with (
        _serving(read_timeout_seconds=0.3, idle_timeout_seconds=30) as server,
        socket.create_connection(("127.0.0.1", server.server.port), timeout=3) as sock,
    ):
        sock.sendall(b"GET /metrics HTTP/1.1\r\nHost: lo")
        assert 0.2 < _seconds_until_closed(sock) < 2


def test_a_new_connection_that_sends_nothing_is_cut_after_the_read_timeout() -> None:
    with (
        _serving(read_timeout_seconds=0.3, idle_timeout_seconds=30) as server,
        socket.create_connection(("127.0.0.1", server.server.port), timeout=3) as sock,
    ):
        assert 0.2 < _seconds_until_closed(sock) < 2


def test_headers_dribbled_slowly_are_cut_when_the_whole_head_takes_too_long() -> None:
    with (
        _serving(read_timeout_seconds=0.3, idle_timeout_seconds=30) as server,
        socket.create_connection(("127.0.0.1", server.server.port), timeout=3) as sock,
    ):
        sock.sendall(b"GET /metrics HTTP/1.1\r\n")
        started = time.monotonic()
        sock.settimeout(0.05)  # each header comes sooner than the read timeout
        closed = False
        while not closed and time.monotonic() - started < 2:
            try:
                sock.sendall(b"X-Slow: 1\r\n")
                closed = sock.recv(1024) == b""
            except TimeoutError:
                continue
            except OSError:  # reset or broken pipe: closed by the server
                closed = True
        assert closed
        assert 0.2 < time.monotonic() - started < 1.5


def test_connections_beyond_the_limit_are_refused_with_503_and_counted() -> None:
    with _serving(max_connections=2, idle_timeout_seconds=30) as server:
        held = [_kept_alive(server), _kept_alive(server)]
        assert _open_connections(server) == 2
        third = http.client.HTTPConnection("127.0.0.1", server.server.port, timeout=3)
        third.request("GET", "/metrics")
        response = third.getresponse()
        assert response.status == 503
        assert response.getheader("Connection") == "close"
        assert json.loads(response.read()) == {"error": "too many connections"}
        third.close()
        refused = server.metrics.registry.get_sample_value
        assert refused("lens_http_connections_refused_total") == 1
        held.pop().close()
        assert _eventually(lambda: _open_connections(server) == 1)
        _kept_alive(server).close()
        held[0].request("GET", "/healthz")  # the held connection was served throughout
        assert held[0].getresponse().status == 200
        held[0].close()
        assert refused("lens_http_connections_refused_total") == 1


def test_stop_ends_idle_kept_alive_connections_at_once() -> None:
    with _serving(idle_timeout_seconds=30) as server:
        conn = _kept_alive(server)
        started = time.monotonic()
        asyncio.run(server.server.stop())
        assert time.monotonic() - started < 2
        assert conn.sock is not None
        assert _seconds_until_closed(conn.sock) < 2
        conn.close()


@pytest.mark.parametrize(
    ("request_line", "status"),
    [
        (b"GET / HTTP/1.1 and more\r\n\r\n", b"400"),
        (b"GET / HTTP/9.9\r\n\r\n", b"505"),
        (b"GET /" + b"a" * 70_000 + b" HTTP/1.1\r\n\r\n", b"414"),
        (b"BREW /pot HTTP/1.1\r\n\r\n", b"501"),
    ],
)
def test_a_malformed_request_gets_its_status_and_no_traceback(
    server: Server, request_line: bytes, status: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    # Issue 16, point 14: a malformed request line used to log a traceback.
    with socket.create_connection(("127.0.0.1", server.server.port), timeout=3) as sock:
        sock.sendall(request_line)
        answer = sock.recv(64)
    assert answer.startswith(b"HTTP/1.") and answer[9:12] == status
    assert server.get("/healthz")[0] == 200, "the server goes on"
    assert [r for r in caplog.records if r.levelno >= 30] == []
