"""A traffic generator with known byte counts, run inside a network namespace by the netflow
tests (`ip netns exec NS python traffic.py ...`):

    serve HOST PORT REPLY_BYTES [HOLD]  accept one connection, read until EOF, send
                                    REPLY_BYTES, keep the connection HOLD seconds more, print
                                    the bytes read
    send HOST PORT BYTES [HOLD]     connect, send BYTES, shut down writing, read the reply to
                                    EOF, keep the connection HOLD seconds more, print the bytes
                                    read
"""

from __future__ import annotations

import socket
import sys
import time

CHUNK = 65536


def _drain(connection: socket.socket) -> int:
    total = 0
    while True:
        data = connection.recv(CHUNK)
        if not data:
            return total
        total += len(data)


def _send(connection: socket.socket, count: int) -> None:
    block = b"x" * CHUNK
    while count > 0:
        step = min(count, CHUNK)
        connection.sendall(block[:step])
        count -= step


def serve(host: str, port: int, reply: int, hold: float = 0.0) -> None:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as listener:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((host, port))
        listener.listen()
        print("listening", flush=True)
        connection, _ = listener.accept()
        with connection:
            got = _drain(connection)
            _send(connection, reply)
            time.sleep(hold)
    print(got, flush=True)


def send(host: str, port: int, count: int, hold: float = 0.0) -> None:
    with socket.create_connection((host, port), timeout=60) as connection:
        _send(connection, count)
        connection.shutdown(socket.SHUT_WR)
        got = _drain(connection)
        time.sleep(hold)
    print(got, flush=True)


if __name__ == "__main__":
    command, host, port, count = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    hold = float(sys.argv[5]) if len(sys.argv) > 5 else 0.0
    {"serve": serve, "send": send}[command](host, port, count, hold)
