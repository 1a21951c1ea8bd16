"""The servers bench_http.py compares, one a process: `python -m bench.http_servers KIND PORT FILE`.

Every kind answers GET /metrics with the bytes of FILE (a pre-rendered exposition) and
runs until SIGTERM. stdlib is a role's OpsServer (runtime/httpserver.py); the others are uvicorn
serving a plain ASGI callable or a FastAPI route.
"""

from __future__ import annotations

import asyncio
import signal
import sys
import time
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

from lens.runtime import exposition, httpserver
from lens.runtime.clock import SystemClock
from lens.runtime.health import Health
from lens.runtime.selfmetrics import SelfMetrics

KINDS = ("stdlib", "uvicorn_h11", "uvicorn_httptools", "fastapi", "fastapi_async")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


async def _serve_stdlib(port: int, body: bytes) -> None:
    metrics = SelfMetrics()
    health = Health(clock=SystemClock(), metrics=metrics, stale_after=30)
    cache = exposition.ExpositionCache()
    cache.store(body, rendered_at=time.time())
    server = httpserver.OpsServer(
        host="127.0.0.1", port=port, routes=httpserver.ops_routes(health, cache), metrics=metrics
    )
    await server.start()
    stopping = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stopping.set)
    await stopping.wait()
    await server.stop()


def _asgi_app(body: bytes) -> Callable[[Scope, Receive, Send], Awaitable[None]]:
    """The least an ASGI server can be asked to do: one route of fixed bytes."""
    found = [
        (b"content-type", exposition.CONTENT_TYPE.encode()),
        (b"content-length", str(len(body)).encode()),
    ]
    missing = b'{"error":"no route"}'

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["path"] == "/metrics":
            await send({"type": "http.response.start", "status": 200, "headers": found})
            await send({"type": "http.response.body", "body": body})
            return
        headers = [(b"content-type", b"application/json")]
        await send({"type": "http.response.start", "status": 404, "headers": headers})
        await send({"type": "http.response.body", "body": missing})

    return app


def _fastapi_app(body: bytes, *, sync: bool) -> Any:
    import fastapi

    app = fastapi.FastAPI(openapi_url=None, docs_url=None, redoc_url=None)

    def metrics() -> fastapi.Response:
        return fastapi.Response(content=body, media_type=exposition.CONTENT_TYPE)

    async def metrics_async() -> fastapi.Response:
        return metrics()

    # A sync route, as the roles' handlers are, runs in FastAPI's thread pool; an async one
    # runs on the event loop.
    app.get("/metrics")(metrics if sync else metrics_async)
    return app


def fast_stack_installed() -> bool:
    """Whether uvicorn[standard]'s httptools and uvloop are importable."""
    try:
        import httptools  # noqa: F401
        import uvloop  # noqa: F401
    except ImportError:
        return False
    return True


def _serve_uvicorn(kind: str, port: int, body: bytes) -> None:
    import uvicorn

    framework = kind.startswith("fastapi")
    fast = kind == "uvicorn_httptools" or (framework and fast_stack_installed())
    app = _fastapi_app(body, sync=kind == "fastapi") if framework else _asgi_app(body)
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=port,
        loop="uvloop" if fast else "asyncio",
        http="httptools" if fast else "h11",
        lifespan="off",
        timeout_keep_alive=75,  # as OpsServer's idle timeout; uvicorn's default is 5 s
        log_level="warning",
        access_log=False,
    )
    uvicorn.Server(config).run()  # stops on SIGTERM


def main(argv: list[str]) -> int:
    kind, port, body_path = argv[0], int(argv[1]), Path(argv[2])
    body = body_path.read_bytes()
    if kind == "stdlib":
        asyncio.run(_serve_stdlib(port, body))
    elif kind in KINDS:
        _serve_uvicorn(kind, port, body)
    else:
        print(f"unknown server kind {kind!r}; expected one of {', '.join(KINDS)}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
