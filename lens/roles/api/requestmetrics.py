"""Requests and latency of `lens api` by route template, method and status (the outermost ASGI
middleware, so 401s and 500s count too), on the process's registry; /metrics on the ops port.

Labels are bounded: the route is a template of the app (`/v1/nodes/{name}`) or "other", the
method one of HTTP's or "other". No label holds a value of the request.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from starlette.routing import BaseRoute, Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from lens.runtime.selfmetrics import SelfMetrics

REQUESTS = (
    "lens_api_requests_total",
    "API requests answered, by route template, method and status code.",
    ("route", "method", "status"),
)
DURATION = (
    "lens_api_request_duration_seconds",
    "Time spent answering an API request, by route template, in seconds.",
    ("route",),
)
_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"})
OTHER = "other"


class RequestMetrics:
    """The API's request instruments."""

    def __init__(self, metrics: SelfMetrics) -> None:
        self.requests = metrics.counter(*REQUESTS)
        self.duration = metrics.histogram(*DURATION)

    def observe(self, *, route: str, method: str, status: int, seconds: float) -> None:
        shown = method if method in _METHODS else OTHER
        self.requests.labels(route, shown, str(status)).inc()
        self.duration.labels(route).observe(seconds)


def route_template(routes: Sequence[BaseRoute], scope: Scope) -> str:
    """The template of the route `scope` asks for (one with another method will do), or
    "other" for a path the app does not serve."""
    partial = None
    for route in routes:
        match, _ = route.matches(scope)
        if match == Match.FULL:
            return str(getattr(route, "path", OTHER))
        if match == Match.PARTIAL and partial is None:
            partial = str(getattr(route, "path", OTHER))
    return partial or OTHER


class MeasureRequests:
    """ASGI middleware: each HTTP request counted and timed once it is answered."""

    def __init__(
        self, app: ASGIApp, *, metrics: RequestMetrics, routes: Sequence[BaseRoute]
    ) -> None:
        self._app = app
        self._metrics = metrics
        self._routes = routes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500  # unless an answer starts: the server drops the connection

        async def noting(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self._app(scope, receive, noting)
        finally:
            self._metrics.observe(
                route=route_template(self._routes, scope),
                method=str(scope.get("method", "")),
                status=status,
                seconds=time.perf_counter() - started,
            )
