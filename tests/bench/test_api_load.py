"""The API benchmark's load client: kept-alive connections counted in a window, latency
percentiles by nearest rank, answers without a length or status refused, and the CPU of the
server's process and of its database read around the window by a parent."""

from __future__ import annotations

import asyncio
import http.server
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from bench import api_load


class _Answers(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keeps connections open, as uvicorn does

    def do_GET(self) -> None:
        body = b'{"ok": true}'
        self.send_response(200 if self.path == "/ok" else 404)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def _served() -> Iterator[int]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Answers)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()


def _number(figures: dict[str, object], key: str) -> float:
    return float(str(figures[key]))


def _statuses(figures: dict[str, object]) -> dict[str, int]:
    found = figures["statuses"]
    assert isinstance(found, dict)
    return {str(code): int(count) for code, count in found.items()}


def test_percentiles_are_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]
    assert api_load.percentile(values, 0.5) == 50.0
    assert api_load.percentile(values, 0.95) == 95.0
    assert api_load.percentile(values, 0.99) == 99.0
    assert api_load.percentile([7.0], 0.99) == 7.0
    with pytest.raises(ValueError):
        api_load.percentile([], 0.5)


@pytest.mark.parametrize(
    "head",
    [
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked",
        b"SSH-2.0-OpenSSH\r\nContent-Length: 3",
        b"HTTP/1.1 OK 200\r\nContent-Length: 3",
    ],
)
def test_an_answer_without_status_or_length_is_refused(head: bytes) -> None:
    with pytest.raises(api_load.LoadError):
        api_load._content_length(head)


def test_clients_count_the_answers_of_the_window() -> None:
    with _served() as port:
        figures = asyncio.run(api_load.load(port, "/ok", clients=2, seconds=0.5, warmup=0.1))
    # Every answer is counted by status; those of the window alone make the rate.
    assert 0 < _number(figures, "requests") <= _statuses(figures)["200"]
    assert list(_statuses(figures)) == ["200"]
    assert _number(figures, "requests_per_second") == pytest.approx(
        _number(figures, "requests") / _number(figures, "seconds"), rel=0.01
    )
    assert 0.45 <= _number(figures, "seconds") <= 1.0
    p50, p95, p99, most = (_number(figures, k) for k in ("p50_ms", "p95_ms", "p99_ms", "max_ms"))
    assert 0 < p50 <= p95 <= p99 <= most


@pytest.mark.slow_timeout
def test_a_child_process_loads_the_server_and_the_parent_reads_cpu_around_it() -> None:
    with _served() as port:
        figures = api_load.under_load(
            port, "/missing", clients=2, seconds=0.5, warmup=0.2, backends=lambda: [2**22 + 1]
        )
    assert figures["clients"] == 2 and list(_statuses(figures)) == ["404"]
    # The server is a thread of this process: its CPU in the window is this process's.
    assert _number(figures, "server_cpu_seconds") > 0
    assert _number(figures, "database_cpu_seconds") == 0  # no such process as pid 2**22 + 1
    used = sum(_number(figures, f"{k}_cpu_seconds") for k in ("server", "database", "client"))
    assert _number(figures, "cores_busy") == pytest.approx(
        used / _number(figures, "seconds"), abs=0.01
    )
