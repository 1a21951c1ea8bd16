"""Traffic for the netflow benchmark, run in a network namespace (`ip netns exec NS python
bench/netflow_traffic.py ...`); prints one JSON object when done.

    accept PORT SECONDS             serve short connections: read a request, close first (so
                                    TIME_WAIT stays on this side, not the client's ports)
    connect HOST PORT SECONDS RATE  open RATE connections a second (0: as fast as it can), each
                                    sending 64 bytes and reading to EOF
    sink PORT SECONDS               accept one connection and read everything
    bulk HOST PORT SECONDS          send as fast as the link takes for SECONDS
"""

from __future__ import annotations

import json
import socket
import sys
import time

REQUEST = b"x" * 64
BLOCK = b"x" * (1 << 20)


def accept(port: int, seconds: float) -> dict[str, float]:
    served = 0
    with socket.create_server(("0.0.0.0", port), backlog=4096, reuse_port=True) as server:
        server.settimeout(0.5)
        print(json.dumps({"listening": port}), flush=True)
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                connection, _ = server.accept()
            except TimeoutError:
                continue
            with connection:
                connection.recv(256)
            served += 1
    return {"served": served}


def connect(host: str, port: int, seconds: float, rate: float) -> dict[str, float]:
    opened = 0
    start = time.monotonic()
    while (now := time.monotonic()) - start < seconds:
        if rate and opened >= (now - start) * rate:
            time.sleep(0.001)
            continue
        with socket.create_connection((host, port), timeout=5) as connection:
            connection.sendall(REQUEST)
            while connection.recv(256):
                pass
        opened += 1
    return {"connections": opened, "per_second": opened / (time.monotonic() - start)}


def sink(port: int, seconds: float) -> dict[str, float]:
    got = 0
    with socket.create_server(("0.0.0.0", port)) as server:
        print(json.dumps({"listening": port}), flush=True)
        connection, _ = server.accept()
        with connection:
            while data := connection.recv(1 << 20):
                got += len(data)
    return {"received": got}


def bulk(host: str, port: int, seconds: float) -> dict[str, float]:
    sent = 0
    start = time.monotonic()
    with socket.create_connection((host, port), timeout=10) as connection:
        while time.monotonic() - start < seconds:
            connection.sendall(BLOCK)
            sent += len(BLOCK)
    elapsed = time.monotonic() - start
    return {"sent": sent, "bytes_per_second": sent / elapsed}


if __name__ == "__main__":
    command, *args = sys.argv[1:]
    if command == "accept":
        result = accept(int(args[0]), float(args[1]))
    elif command == "connect":
        result = connect(args[0], int(args[1]), float(args[2]), float(args[3]))
    elif command == "sink":
        result = sink(int(args[0]), float(args[1]))
    else:
        result = bulk(args[0], int(args[1]), float(args[2]))
    print(json.dumps(result), flush=True)
