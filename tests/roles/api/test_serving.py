"""uvicorn as a part: the socket bound at start (a port in use fails the start), requests served
on its own thread, a stop that waits for it, and a server that dies told as a failure."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import socket
import urllib.request
from collections.abc import Iterator

import pytest
from fastapi import FastAPI

from lens.roles.api import serving
from lens.runtime import config, errors
from lens.runtime import logging as lens_logging


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


@pytest.fixture
def json_log() -> Iterator[io.StringIO]:
    """The process's log as JSON lines at debug, into a buffer; the root logger put back."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    out = io.StringIO()
    lens_logging.configure(config.LoggingConfig(format="json", level="debug"), stream=out)
    yield out
    for handler in list(root.handlers):
        root.removeHandler(handler)
    for handler in handlers:
        root.addHandler(handler)
    root.setLevel(level)


def test_json_logs_of_a_request_carry_no_terminal_escapes(json_log: io.StringIO) -> None:
    # uvicorn's `color_message` put ANSI color codes into every JSON line of its own.
    server = serving.ApiServer(
        _app(), host="127.0.0.1", port=0, limits=serving.ServerLimits(), on_failure=print
    )
    asyncio.run(server.start())
    with urllib.request.urlopen(f"http://127.0.0.1:{server.port}/ping", timeout=5) as answer:
        assert answer.status == 200
    asyncio.run(server.stop())
    lines = json_log.getvalue().splitlines()
    entries = [json.loads(line) for line in lines]
    uvicorn = [e["msg"] for e in entries if e["logger"].startswith("uvicorn")]
    assert any(msg.startswith("Started server process [") for msg in uvicorn), lines
    assert not [line for line in lines if "\\u001b" in line or "\x1b" in line]
    assert not [e for e in entries if "color_message" in e]
