"""uvicorn as a part: the socket bound at start (a port in use fails the start), requests served
on its own thread, a stop that waits for it, and a server that dies told as a failure."""

from __future__ import annotations

import asyncio
import socket
import urllib.request

import pytest
from fastapi import FastAPI

from lens.roles.api import serving
from lens.runtime import errors


def _app() -> FastAPI:
    app = FastAPI()
    app.add_api_route("/ping", lambda: {"pong": True}, methods=["GET"])
    return app


def test_serves_until_stopped_without_a_failure() -> None:
    failures: list[BaseException] = []
    server = serving.ApiServer(
        _app(), host="127.0.0.1", port=0, limits=serving.ServerLimits(), on_failure=failures.append
    )
    asyncio.run(server.start())
    with urllib.request.urlopen(f"http://127.0.0.1:{server.port}/ping", timeout=5) as answer:
        assert answer.read() == b'{"pong":true}'
    asyncio.run(server.stop())
    assert failures == []
    with pytest.raises(OSError):
        urllib.request.urlopen(f"http://127.0.0.1:{server.port}/ping", timeout=2)


def test_a_port_in_use_fails_the_start() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        server = serving.ApiServer(
            _app(), host="127.0.0.1", port=port, limits=serving.ServerLimits(), on_failure=print
        )
        with pytest.raises(errors.ListenError) as caught:
            asyncio.run(server.start())
    assert (caught.value.key, caught.value.env) == ("api.port", "LENS_API__PORT")
    assert caught.value.purpose == "the REST API and dashboard"
    with pytest.raises(RuntimeError):
        _ = server.port  # never bound
    asyncio.run(server.stop())  # nothing to stop: no error
