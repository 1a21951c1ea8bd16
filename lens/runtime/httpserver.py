"""A small threaded HTTP/1.1 server for a role's port: /healthz, /readyz, /metrics and GET routes.

It serves bytes prepared elsewhere (runtime/exposition.py, runtime/health.py) or produced by a
role's route handlers, so a scrape never waits on a collection. The api role, which needs more,
serves the same handlers through FastAPI instead. runtime/httplimits.py bounds its connections.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import threading
import time
from collections.abc import Callable, Mapping
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, urlsplit

from lens.runtime import exposition, httplimits, lifecycle
from lens.runtime.health import Health, Verdict
from lens.runtime.selfmetrics import SelfMetrics

log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Request:
    path: str
    query: Mapping[str, list[str]]
    headers: Mapping[str, str]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Response:
    status: int
    body: bytes
    content_type: str = "application/json"


Handler = Callable[[Request], Response]


def json_response(payload: object, *, status: int = 200) -> Response:
    body = json.dumps(payload, separators=(",", ":"), default=str).encode()
    return Response(status=status, body=body)


def _verdict_response(verdict: Verdict) -> Response:
    return json_response(verdict.to_json(), status=200 if verdict.ok else 503)


def ops_routes(health: Health, cache: exposition.ExpositionCache) -> dict[str, Handler]:
    """The routes every role serves."""

    def metrics(_: Request) -> Response:
        body, _rendered_at = cache.latest()
        return Response(status=200, body=body, content_type=exposition.CONTENT_TYPE)

    return {
        "/healthz": lambda _: _verdict_response(health.liveness()),
        "/readyz": lambda _: _verdict_response(health.readiness()),
        "/metrics": metrics,
    }


class _Metrics:
    def __init__(self, metrics: SelfMetrics) -> None:
        self.requests = metrics.counter(
            "lens_http_requests_total",
            "HTTP requests served, by route and status code.",
            ("route", "code"),
        )
        self.duration = metrics.histogram(
            "lens_http_request_duration_seconds",
            "Time spent answering an HTTP request, by route, in seconds.",
            ("route",),
        )
        self.refused = metrics.counter(
            "lens_http_connections_refused_total",
            "HTTP connections answered 503 and closed because max_connections were open.",
        )
        self.connections = metrics.gauge(
            "lens_http_connections",
            "HTTP connections open now, idle kept-alive ones included.",
        )


class OpsServer:
    """Serves a route table on host:port from a background thread; a Service part.

    A thread per connection, at most `max_connections` of them; httplimits bounds their waits.
    """

    name = "http"

    def __init__(
        self,
        *,
        host: str,
        port: int,
        routes: Mapping[str, Handler],
        metrics: SelfMetrics,
        read_timeout_seconds: float = 10.0,
        idle_timeout_seconds: float = 75.0,
        max_connections: int = 64,
    ) -> None:
        """Defaults as in ServerConfig: see its help for what each limit bounds."""
        self._host = host
        self._port = port
        self._routes = dict(routes)
        self._metrics = _Metrics(metrics)
        self._limits = httplimits.Limits(
            read_timeout_seconds=read_timeout_seconds,
            idle_timeout_seconds=idle_timeout_seconds,
            max_connections=max_connections,
        )
        self._server: httplimits.LimitedServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        """The bound port (useful when configured as 0)."""
        if self._server is None:
            raise RuntimeError("server not started")
        return int(self._server.server_address[1])

    def add_route(self, path: str, handler: Handler) -> None:
        """Serve `path` with `handler`; a path is served by one handler only."""
        if self._server is not None:
            raise RuntimeError("routes are fixed once the server has started")
        if path in self._routes:
            raise ValueError(f"HTTP route {path} is added twice")
        self._routes[path] = handler

    async def start(self) -> None:
        handler_class = _make_handler(self._routes, metrics=self._metrics, limits=self._limits)
        server = httplimits.LimitedServer(
            (self._host, self._port),
            handler_class,
            limits=self._limits,
            refused=self._metrics.refused,
            open_connections=self._metrics.connections,
        )
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.2},
            name="lens-http",
            daemon=True,
        )
        self._thread.start()
        log.info("http server listening", extra={"host": self._host, "port": self.port})

    async def stop(self) -> None:
        server = self._server
        if server is None:
            return
        await lifecycle.in_thread(server.shutdown, name="lens-http-shutdown")
        server.server_close()


def _make_handler(
    routes: Mapping[str, Handler], *, metrics: _Metrics, limits: httplimits.Limits
) -> type[BaseHTTPRequestHandler]:
    class _RequestHandler(httplimits.TimedRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "lens"
        # Headers and body leave in one segment, and small answers are not held back by Nagle's
        # algorithm waiting on the client's delayed ACK (40 ms per request on Linux otherwise).
        wbufsize = 1 << 16
        disable_nagle_algorithm = True
        # An error answered before the request line was understood (400, 505) still starts
        # with a status line; the stdlib's default, HTTP/0.9, sends the page alone.
        default_request_version = "HTTP/1.0"
        timed_by = limits

        @property
        def request_version(self) -> str:
            return self._request_version

        @request_version.setter
        def request_version(self, version: str) -> None:
            # A request line naming HTTP/0.9 is no HTTP/0.9 request (those had no version), but
            # the stdlib would answer it, errors included, with the body alone: answer as 1.0.
            self._request_version = "HTTP/1.0" if version == "HTTP/0.9" else version

        def do_GET(self) -> None:
            started = time.perf_counter()
            parts = urlsplit(self.path)
            handler = routes.get(parts.path)
            route = parts.path if handler is not None else "other"
            if handler is None:
                response = json_response({"error": f"no route {parts.path}"}, status=404)
            else:
                request = Request(
                    path=parts.path, query=parse_qs(parts.query), headers=dict(self.headers.items())
                )
                response = _answer(handler, request)
            # Counted before sending, so a client that has its answer also sees it counted.
            metrics.requests.labels(route, str(response.status)).inc()
            metrics.duration.labels(route).observe(time.perf_counter() - started)
            self._send(response)

        def _send(self, response: Response) -> None:
            self.send_response(response.status)
            self.send_header("Content-Type", response.content_type)
            self.send_header("Content-Length", str(len(response.body)))
            self.end_headers()
            self.wfile.write(response.body)

        def log_message(self, format: str, *args: object) -> None:
            log.debug("http request", extra={"request": format % args})

    return _RequestHandler


def _answer(handler: Handler, request: Request) -> Response:
    try:
        return handler(request)
    except Exception:  # a broken handler answers 500 and is logged; the server goes on
        log.exception("http handler failed", extra={"path": request.path})
        return json_response({"error": "internal error"}, status=500)
