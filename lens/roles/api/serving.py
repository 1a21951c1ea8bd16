"""The API's HTTP server: uvicorn serving the app on `api.host:api.port`, a part of the process.

uvicorn runs on a thread of its own with its own event loop: off the main thread it leaves the
process's signal handlers alone (runtime/lifecycle.py owns them), and a slow request never
stalls the service's loop. The socket is bound in `start`, so a port in use fails the start
with a ListenError naming api.port.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import math
import socket
import threading
from collections.abc import Callable

import uvicorn
from starlette.types import ASGIApp

from lens.runtime import lifecycle, listening

log = logging.getLogger(__name__)

ENDPOINT = listening.Endpoint(
    purpose="the REST API and dashboard", host_key="api.host", port_key="api.port"
)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ServerLimits:
    """Bounds of the API's connections (server.* for the ops port; the same keys apply)."""

    idle_timeout_seconds: float = 75.0
    max_connections: int = 64
    graceful_shutdown_seconds: float = 5.0


class ApiServer:
    """uvicorn serving `app`; `on_failure` is told when it stops without being asked to."""

    name = "api-server"

    def __init__(
        self,
        app: ASGIApp,
        *,
        host: str,
        port: int,
        limits: ServerLimits,
        on_failure: Callable[[BaseException], None],
    ) -> None:
        self._app = app
        self._host = host
        self._port = port
        self._limits = limits
        self._on_failure = on_failure
        self._socket: socket.socket | None = None
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._stopping = False

    @property
    def port(self) -> int:
        """The bound port (useful when configured as 0)."""
        if self._socket is None:
            raise RuntimeError("server not started")
        return int(self._socket.getsockname()[1])

    async def start(self) -> None:
        self._socket = listening.bind(self._host, self._port, endpoint=ENDPOINT)
        config = uvicorn.Config(
            self._app,
            log_config=None,  # runtime/logging.py configures the handlers
            access_log=False,  # requests are counted (requestmetrics.py), not logged each
            lifespan="off",
            server_header=False,
            timeout_keep_alive=math.ceil(self._limits.idle_timeout_seconds),
            limit_concurrency=self._limits.max_connections,
            timeout_graceful_shutdown=math.ceil(self._limits.graceful_shutdown_seconds),
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._serve, name="lens-api", daemon=True)
        self._thread.start()
        log.info("api server listening", extra={"host": self._host, "port": self.port})

    def _serve(self) -> None:
        assert self._server is not None and self._socket is not None
        try:
            asyncio.run(self._server.serve(sockets=[self._socket]))
        except BaseException as exc:  # uvicorn exits with SystemExit on a failed start
            self._on_failure(exc)
            return
        if not self._stopping:
            self._on_failure(RuntimeError("the API server stopped by itself"))

    async def stop(self) -> None:
        self._stopping = True
        server, thread = self._server, self._thread
        if server is None or thread is None:
            return
        server.should_exit = True
        await lifecycle.in_thread(thread.join, name="lens-api-stop")
        if self._socket is not None:
            self._socket.close()
