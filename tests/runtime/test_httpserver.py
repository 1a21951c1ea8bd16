from __future__ import annotations

import asyncio
import http.client
import json
from collections.abc import Iterator

import pytest

from lens.runtime import exposition, httpserver
from lens.runtime.clock import FakeClock
from lens.runtime.health import Health
from lens.runtime.httpserver import Request, Response
from lens.runtime.selfmetrics import SelfMetrics


class Server:
    def __init__(self) -> None:
        self.metrics = SelfMetrics(process=False)
        self.health = Health(clock=FakeClock(), metrics=self.metrics, stale_after=30)
        self.cache = exposition.ExpositionCache()
        routes = httpserver.ops_routes(self.health, self.cache)
        self.server = httpserver.OpsServer(
            host="127.0.0.1", port=0, routes=routes, metrics=self.metrics
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
