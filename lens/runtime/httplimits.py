"""Limits on runtime/httpserver.py's connections: how many at once, and how long each may wait.

`LimitedServer` refuses a connection beyond `Limits.max_connections` with a 503 from the accepting
thread; `DeadlineReader` bounds the wait for the next request (idle) and for its head (read),
and `TimedRequestHandler` reads every request through it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import logging
import socket
import sys
import threading
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING

from prometheus_client import Counter, Gauge

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

log = logging.getLogger(__name__)

_REFUSAL_BODY = json.dumps({"error": "too many connections"}).encode()
_REFUSAL = (
    b"HTTP/1.1 503 Service Unavailable\r\n"
    b"Content-Type: application/json\r\n"
    b"Content-Length: " + str(len(_REFUSAL_BODY)).encode() + b"\r\n"
    b"Retry-After: 1\r\n"
    b"Connection: close\r\n\r\n" + _REFUSAL_BODY
)
_DRAIN_BYTES = 1 << 16
# Line ends ignored before a request line (RFC 9112 2.2 asks for at least one CRLF); past them a
# blank request line is answered 400.
_EMPTY_LINE_BYTES = 16


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Limits:
    """How long a connection may wait and how many are served at once (see ServerConfig)."""

    read_timeout_seconds: float = 10.0
    idle_timeout_seconds: float = 75.0
    max_connections: int = 64

    def __post_init__(self) -> None:
        if self.read_timeout_seconds <= 0 or self.idle_timeout_seconds <= 0:
            raise ValueError("HTTP timeouts must be positive")
        if self.max_connections < 1:
            raise ValueError("max_connections must be at least 1")


class DeadlineReader(io.RawIOBase):
    """A connection's socket reads, each bounded by the phase it is in.

    Waiting for a further request on a kept-alive connection, a read may wait the idle timeout.
    Once a request begins, all reads of its line and headers share one read timeout, so a client
    dribbling a byte at a time is cut off as surely as one that stops.
    """

    def __init__(self, sock: socket.socket, limits: Limits) -> None:
        super().__init__()
        self._sock = sock
        self._limits = limits
        self._deadline: float | None = None
        self._timeout = limits.read_timeout_seconds

    def readable(self) -> bool:
        return True

    def expect_idle(self) -> None:
        """The next read waits for a new request, at most the idle timeout."""
        self._deadline = None
        self._timeout = self._limits.idle_timeout_seconds

    def expect_head(self) -> None:
        """From now until `head_done`, reads share one read timeout: the request's head."""
        self._deadline = time.monotonic() + self._limits.read_timeout_seconds

    def head_done(self) -> None:
        """Any further read or write of this request may each wait the read timeout."""
        self._deadline = None
        self._timeout = self._limits.read_timeout_seconds
        # Writes use the socket's timeout too: a client that stops reading its answer is cut off.
        self._sock.settimeout(self._timeout)

    def readinto(self, buffer: WriteableBuffer, /) -> int:
        timeout = self._timeout
        if self._deadline is not None:
            timeout = self._deadline - time.monotonic()
            if timeout <= 0:
                raise TimeoutError("request head not received within the read timeout")
        self._sock.settimeout(timeout)
        return self._sock.recv_into(buffer)


class LimitedServer(ThreadingHTTPServer):
    """A ThreadingHTTPServer serving at most `max_connections` connections, one thread each."""

    daemon_threads = True
    # stop() shuts the open connections instead of joining their threads: a kept-alive scraper
    # would otherwise hold it for the whole idle timeout.
    block_on_close = False

    def __init__(
        self,
        address: tuple[str, int],
        handler_class: type[BaseHTTPRequestHandler],
        *,
        limits: Limits,
        refused: Counter,
        open_connections: Gauge,
    ) -> None:
        # Before binding: a bind that fails calls server_close(), which reads them.
        self._lock = threading.Lock()
        self._open: set[socket.socket] = set()
        super().__init__(address, handler_class)
        self.limits = limits
        self._refused = refused
        open_connections.set_function(lambda: len(self._open))

    def process_request(self, request: socket.socket, client_address: object) -> None:  # type: ignore[override]  # a TCP server's requests are sockets
        with self._lock:
            admitted = len(self._open) < self.limits.max_connections
            if admitted:
                self._open.add(request)
        if not admitted:
            # Answered here, without a thread: a flood of connections costs no more than this.
            self._refused.inc()
            refuse(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._forget(request)
            raise

    def process_request_thread(self, request: socket.socket, client_address: object) -> None:  # type: ignore[override]  # as above
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._forget(request)

    def _forget(self, request: socket.socket) -> None:
        with self._lock:
            self._open.discard(request)

    def handle_error(self, request: object, client_address: object) -> None:
        error = sys.exc_info()[1]
        if isinstance(error, ConnectionError | TimeoutError):
            log.debug("http connection ended", extra={"error": str(error)})
        else:
            log.exception("http connection failed")

    def server_close(self) -> None:
        """Close the listener, then end every open connection once its current answer is sent."""
        super().server_close()
        with self._lock:
            connections = list(self._open)
        for connection in connections:
            # Reads end (the handler sees the client gone); a response being written still is.
            with contextlib.suppress(OSError):  # it closed meanwhile
                connection.shutdown(socket.SHUT_RD)


def refuse(sock: socket.socket) -> None:
    """Answer 503 and close, never blocking: the answer fits a fresh socket's send buffer."""
    try:
        sock.setblocking(False)
        sock.send(_REFUSAL)
        sock.shutdown(socket.SHUT_WR)
        # Closing with unread request bytes would reset the connection, and the client could
        # lose the 503; read what has arrived.
        drained = 0
        while drained < _DRAIN_BYTES:
            chunk = sock.recv(4096)
            if not chunk:
                break
            drained += len(chunk)
    except OSError:
        pass  # BlockingIOError: nothing more to read; others: the client is gone
    finally:
        sock.close()


class TimedRequestHandler(BaseHTTPRequestHandler):
    """A request handler whose reads wait at most what `timed_by` allows: the request head within
    the read timeout, the next request on a kept-alive connection within the idle timeout.
    Line ends before a request line are ignored, and a blank request line is answered 400."""

    timed_by: Limits
    _reader: DeadlineReader
    _input: io.BufferedReader
    _answered = False

    def setup(self) -> None:
        super().setup()
        # Reads go through a reader that bounds each wait.
        self.rfile.close()
        self._reader = DeadlineReader(self.connection, self.timed_by)
        self._input = io.BufferedReader(self._reader)
        self.rfile = self._input

    def handle_one_request(self) -> None:
        if self._answered:
            # Kept alive: wait for the next request's first byte, at most the idle timeout.
            self._reader.expect_idle()
            try:
                if not self._input.peek(1):
                    self.close_connection = True
                    return
            except OSError:  # TimeoutError: idle too long; others: the client is gone
                self.close_connection = True
                return
        # The first request's head must arrive within the read timeout of the connection.
        self._answered = True
        self._reader.expect_head()
        try:
            self._skip_empty_lines()
        except OSError:  # TimeoutError: no request line in time; others: the client is gone
            self.close_connection = True
            return
        super().handle_one_request()

    def _skip_empty_lines(self) -> None:
        """Drop the line ends a client sent before its request line (a stray CRLF after the last
        request's body): the stdlib would close the connection without a word."""
        for _ in range(_EMPTY_LINE_BYTES):
            if self._input.peek(1)[:1] not in (b"\r", b"\n"):
                return
            self._input.read(1)

    def parse_request(self) -> bool:
        parsed = super().parse_request()
        self._reader.head_done()
        if not parsed and not self.requestline.split():
            # A blank request line: the stdlib closes without an answer; say what was wrong.
            self.send_error(HTTPStatus.BAD_REQUEST, "Empty request line")
        return parsed
