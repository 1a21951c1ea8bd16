"""A small threaded HTTP/1.1 server for a role's port: /healthz, /readyz, /metrics, GET routes and
the POST routes of telemetry intake (bodies bounded by runtime/httpbody.py).

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

from lens.runtime import exposition, httpbody, httplimits, lifecycle, listening
from lens.runtime.health import Health, Verdict
from lens.runtime.selfmetrics import SelfMetrics

log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Request:
    path: str
    query: Mapping[str, list[str]]
    headers: Mapping[str, str]
    method: str = "GET"
    body: bytes = b""
    client: str = ""

    def header(self, name: str) -> str | None:
        """The value of header `name`, whatever its case (HTTP field names are case-blind)."""
        return httpbody.header(self.headers, name.lower())


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Response:
    status: int
    body: bytes
    content_type: str = "application/json"
    headers: Mapping[str, str] = dataclasses.field(default_factory=dict)


Handler = Callable[[Request], Response]


def json_response(payload: object, *, status: int = 200) -> Response:
    body = json.dumps(payload, separators=(",", ":"), default=str).encode()
    return Response(status=status, body=body)


# The original's success code in its envelope (REFERENCE.md 1.3).
CODE_OK = 2000


def enveloped(data: object, *, code: int = CODE_OK, message: str = "OK") -> Response:
    """`data` in the original's envelope, which the node agent's and netflow's REST routes keep:
    {"meta": {"code": 2000, "message": "OK"}, "data": ..., "tracing": null}."""
    return json_response(
        {"meta": {"code": code, "message": message}, "data": data, "tracing": None}
    )


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
        max_body_bytes: int = 16 << 20,
        endpoint: listening.Endpoint = listening.OPS,
    ) -> None:
        """Defaults as in ServerConfig: see its help for what each limit bounds. `endpoint`
        names the settings a ListenError at start points to."""
        self._host = host
        self._port = port
        self._endpoint = endpoint
        self._routes: dict[str, dict[str, Handler]] = {p: {"GET": h} for p, h in routes.items()}
        self._max_body_bytes = max_body_bytes
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

    def add_route(self, path: str, handler: Handler, *, method: str = "GET") -> None:
        """Serve `method` requests of `path` with `handler` (GET or POST); a path and method are
        served by one handler only."""
        if self._server is not None:
            raise RuntimeError("routes are fixed once the server has started")
        if method not in ("GET", "POST"):
            raise ValueError(f"HTTP method {method} is not served")
        methods = self._routes.setdefault(path, {})
        if method in methods:
            raise ValueError(f"HTTP route {method} {path} is added twice")
        methods[method] = handler

    async def start(self) -> None:
        handler_class = _make_handler(
            self._routes,
            metrics=self._metrics,
            limits=self._limits,
            max_body_bytes=self._max_body_bytes,
        )
        try:
            server = httplimits.LimitedServer(
                (self._host, self._port),
                handler_class,
                limits=self._limits,
                refused=self._metrics.refused,
                open_connections=self._metrics.connections,
            )
        except OSError as exc:
            raise listening.refused(
                exc, host=self._host, port=self._port, endpoint=self._endpoint
            ) from exc
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
    routes: Mapping[str, Mapping[str, Handler]],
    *,
    metrics: _Metrics,
    limits: httplimits.Limits,
    max_body_bytes: int,
) -> type[BaseHTTPRequestHandler]:
    class _Configured(_RequestHandler):
        pass

    _Configured.routes = routes
    _Configured.metrics = metrics
    _Configured.timed_by = limits
    _Configured.max_body_bytes = max_body_bytes
    return _Configured


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
    routes: Mapping[str, Mapping[str, Handler]]
    metrics: _Metrics
    max_body_bytes: int

    @property
    def request_version(self) -> str:
        return self._request_version

    @request_version.setter
    def request_version(self, version: str) -> None:
        # A request line naming HTTP/0.9 is no HTTP/0.9 request (those had no version), but
        # the stdlib would answer it, errors included, with the body alone: answer as 1.0.
        self._request_version = "HTTP/1.0" if version == "HTTP/0.9" else version

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    def _serve(self, method: str) -> None:
        started = time.perf_counter()
        parts = urlsplit(self.path)
        methods = self.routes.get(parts.path)
        handler = methods.get(method) if methods is not None else None
        route = parts.path if methods is not None else "other"
        if handler is None and method != "GET":
            self.close_connection = True  # its body, unread, is still on the wire
        if methods is None:
            response = json_response({"error": f"no route {parts.path}"}, status=404)
        elif handler is None:
            response = _not_allowed(method, parts.path, methods)
        else:
            response = self._handle(handler, method, parts.path, parts.query)
        # Counted before sending, so a client that has its answer also sees it counted.
        self.metrics.requests.labels(route, str(response.status)).inc()
        self.metrics.duration.labels(route).observe(time.perf_counter() - started)
        self._send(response)

    def _handle(self, handler: Handler, method: str, path: str, query: str) -> Response:
        headers = dict(self.headers.items())
        body = b""
        if method == "POST":
            try:
                body = httpbody.read_body(headers, self.rfile, max_bytes=self.max_body_bytes)
            except httpbody.BodyError as exc:
                # What is left of the body is still on the wire: this connection is done.
                self.close_connection = True
                return json_response({"error": exc.reason}, status=exc.status)
        request = Request(
            path=path,
            query=parse_qs(query),
            headers=headers,
            method=method,
            body=body,
            client=str(self.client_address[0]),
        )
        return _answer(handler, request)

    def _send(self, response: Response) -> None:
        self.send_response(response.status)
        self.send_header("Content-Type", response.content_type)
        self.send_header("Content-Length", str(len(response.body)))
        for name, value in response.headers.items():
            self.send_header(name, value)
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(response.body)

    def log_message(self, format: str, *args: object) -> None:
        log.debug("http request", extra={"request": format % args})


def _not_allowed(method: str, path: str, methods: Mapping[str, Handler]) -> Response:
    allowed = ", ".join(sorted(methods))
    return Response(
        status=405,
        body=json.dumps({"error": f"{method} is not allowed on {path}: {allowed}"}).encode(),
        headers={"Allow": allowed},
    )


def _answer(handler: Handler, request: Request) -> Response:
    try:
        return handler(request)
    except Exception:  # a broken handler answers 500 and is logged; the server goes on
        log.exception("http handler failed", extra={"path": request.path})
        return json_response({"error": "internal error"}, status=500)
