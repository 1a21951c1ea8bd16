"""KubeApiServer: the emulator's HTTP server, plus the Python handle tests and scenarios use.

Serves the Kubernetes REST API (handlers.py) over plain HTTP/1.1 with chunked watch streams,
so `kubernetes.client` and its Watch and SharedInformer work against it unmodified. Start it
from a test fixture or with `lens sim kube --port PORT`.
"""

from __future__ import annotations

import collections
import json
import logging
import random
import sys
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from lens.runtime import lifecycle
from lens.runtime.clock import Clock, SystemClock
from lens.sim.kube.collecting import Collector
from lens.sim.kube.faults import Faults
from lens.sim.kube.handlers import Api, Reply
from lens.sim.kube.recording import ApiRequest, RequestLog, parse_request
from lens.sim.kube.resources import Registry, ResourceType
from lens.sim.kube.status import ApiError
from lens.sim.kube.store import Store

log = logging.getLogger(__name__)

JsonObject = dict[str, Any]


class _HttpServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away mid-answer (a watch it closed) is routine, not an error."""
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class KubeApiServer:
    """An in-process Kubernetes API server on 127.0.0.1 (or `host`)."""

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        clock: Clock | None = None,
        history_size: int = 100,
        bookmark_interval: float = 60.0,
        token: str | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.registry = Registry()
        self.faults = Faults()
        self.store = Store(
            self.registry, clock=clock or SystemClock(), history_size=history_size, rng=rng
        )
        self.collector = Collector(self.store)
        self.api = Api(self.store, self.faults, bookmark_interval=bookmark_interval)
        self.token_reviews = self.api.token_reviews  # tokens a test makes known, as users
        self._token = token
        self._host = host
        self._http = _HttpServer((host, port), _handler_class(self))
        self._http.daemon_threads = True
        self._thread: threading.Thread | None = None
        self._requests: collections.Counter[tuple[str, str]] = collections.Counter()
        self._requests_lock = threading.Lock()
        self._log = RequestLog()
        # A test's RBAC: what it refuses is answered 403 Forbidden, as the API server would.
        self.authorizer: Callable[[ApiRequest], bool] | None = None

    def count_request(self, method: str, path: str, query: str) -> None:
        watching = method == "GET" and "watch=" in query and "watch=0" not in query
        verb = "WATCH" if watching else method
        with self._requests_lock:
            self._requests[(verb, path)] += 1

    def requests(self) -> collections.Counter[tuple[str, str]]:
        """The requests served so far by (method, path), WATCH for a GET that watches: what a
        client under test asked of the API (benchmarks count them; `recorded` says what each
        was, as RBAC sees it)."""
        with self._requests_lock:
            return collections.Counter(self._requests)

    def record_request(self, method: str, path: str, query: str) -> ApiRequest:
        request = parse_request(method, path, query)
        self._log.add(request)
        return request

    def recorded(self) -> collections.Counter[ApiRequest]:
        """Every request served since the start (or `clear_recorded`), by its authorization
        attributes (verb, group, resource, subresource, namespace, name), with its count."""
        return self._log.recorded()

    def clear_recorded(self) -> None:
        self._log.clear()

    def forbidden(self, request: ApiRequest) -> ApiError | None:
        """The 403 a test's authorizer gives `request`, or None when it is allowed."""
        if self.authorizer is None or self.authorizer(request):
            return None
        return ApiError(403, "Forbidden", f"forbidden: cannot {request.describe()}")

    @property
    def url(self) -> str:
        return f"http://{self._host}:{self._http.server_address[1]}"

    def start(self) -> KubeApiServer:
        if self._thread is not None:
            return self  # already serving
        self._thread = threading.Thread(
            target=self._http.serve_forever,
            kwargs={"poll_interval": 0.1},
            name="kube-sim",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving (if started), release the port and end the garbage collector."""
        self.faults.close_watches()
        if self._thread is not None:
            self._http.shutdown()
        self._http.server_close()
        self.collector.close()

    def __enter__(self) -> KubeApiServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- the Python side (scenarios and tests) ---------------------------------------------

    def resource(self, api_version: str, kind: str) -> ResourceType:
        rtype = self.registry.by_kind(api_version, kind)
        if rtype is None:
            raise KeyError(f"no resource {api_version} {kind}")
        return rtype

    def create(self, obj: JsonObject, *, keep_status: bool = True) -> JsonObject:
        """Store an object as a controller would (its status kept unless told otherwise)."""
        rtype = self.resource(obj["apiVersion"], obj["kind"])
        namespace = (obj.get("metadata") or {}).get("namespace") if rtype.namespaced else None
        if rtype.kind == "CustomResourceDefinition":
            reply = self.api.handle(
                "POST",
                f"/apis/{rtype.api_version}/{rtype.plural}",
                "",
                "application/json",
                json.dumps(obj).encode(),
            )
            assert reply.body is not None
            return reply.body
        return self.store.create(rtype, namespace, obj, keep_status=keep_status)

    def restart(self) -> None:
        """An API server restart: every watch ends and the history before now is lost."""
        self.store.forget_history()
        self.faults.close_watches()

    def settle(self, timeout: float = 5.0) -> bool:
        """Wait until garbage collection has caught up."""
        return self.collector.settle(timeout)

    def write_kubeconfig(self, path: Path, *, context: str = "lens-sim") -> Path:
        user: JsonObject = {"token": self._token} if self._token else {}
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": context, "cluster": {"server": self.url}}],
            "users": [{"name": context, "user": user}],
            "contexts": [{"name": context, "context": {"cluster": context, "user": context}}],
            "current-context": context,
        }
        path.write_text(yaml.safe_dump(config, sort_keys=False))
        return path

    def authorized(self, header: str | None) -> bool:
        return self._token is None or header == f"Bearer {self._token}"


class _RequestHandler(BaseHTTPRequestHandler):
    """One connection; `sim` is set on a per-server subclass (see _handler_class)."""

    sim: KubeApiServer
    protocol_version = "HTTP/1.1"
    server_version = "kube-sim"
    # Headers and body leave in one segment, and small answers are not held back by Nagle's
    # algorithm waiting on the client's delayed ACK (40 ms per request on Linux otherwise).
    wbufsize = 1 << 16
    disable_nagle_algorithm = True

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    def do_PUT(self) -> None:
        self._serve("PUT")

    def do_PATCH(self) -> None:
        self._serve("PATCH")

    def do_DELETE(self) -> None:
        self._serve("DELETE")

    def _serve(self, method: str) -> None:
        parts = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        self.sim.count_request(method, parts.path, parts.query)
        request = self.sim.record_request(method, parts.path, parts.query)
        try:
            if not self.sim.authorized(self.headers.get("Authorization")):
                raise ApiError(401, "Unauthorized", "Unauthorized")
            refused = self.sim.forbidden(request)
            if refused is not None:
                raise refused
            failure = self.sim.faults.take_failure(method, parts.path)
            if failure is not None:
                raise failure
            reply = self.sim.api.handle(
                method, parts.path, parts.query, self.headers.get("Content-Type", ""), body
            )
        except ApiError as exc:
            self._send_json(exc.code, exc.status(), retry_after=exc.retry_after)
            return
        if reply.watch is not None:
            self._stream(reply)
        else:
            self._send_json(reply.code, reply.body)

    def _send_json(self, code: int, body: Any, *, retry_after: int | None = None) -> None:
        data = json.dumps(body, separators=(",", ":")).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if retry_after is not None:
            self.send_header("Retry-After", str(retry_after))
        self.end_headers()
        self.wfile.write(data)

    def _stream(self, reply: Reply) -> None:
        assert reply.watch is not None
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            self.wfile.flush()  # the client waits for the headers before any event
            for event in reply.watch.events():
                data = json.dumps(event, separators=(",", ":")).encode() + b"\n"
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("kube-sim request", extra={"request": format % args})


def _handler_class(server: KubeApiServer) -> type[BaseHTTPRequestHandler]:
    return type("KubeSimHandler", (_RequestHandler,), {"sim": server})


class ServerPart:
    """A KubeApiServer as a Service part, for `lens sim kube`."""

    name = "kube-sim"

    def __init__(self, server: KubeApiServer) -> None:
        self._server = server

    async def start(self) -> None:
        self._server.start()

    async def stop(self) -> None:
        await lifecycle.in_thread(self._server.stop, name="kube-sim-stop")
