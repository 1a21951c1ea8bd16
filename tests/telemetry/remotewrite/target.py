"""A remote-write target for tests: answers the statuses it is told, keeps what it received."""

from __future__ import annotations

import queue
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import cramjam


class Target:
    """A remote-write endpoint answering the statuses it is told, in order (then 204), and
    keeping what it received."""

    def __init__(self) -> None:
        self.statuses: queue.Queue[tuple[int, dict[str, str]]] = queue.Queue()
        self.received: queue.Queue[tuple[dict[str, str], bytes]] = queue.Queue()
        target = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                try:
                    status, headers = target.statuses.get_nowait()
                except queue.Empty:
                    status, headers = 204, {}
                if status < 300:
                    raw = bytes(cramjam.snappy.decompress_raw(body))
                    target.received.put((dict(self.headers.items()), raw))
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/api/v1/write"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
