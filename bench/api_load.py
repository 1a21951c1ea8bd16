"""Concurrent load on one route of a local HTTP server, from a process of its own:
`python -m bench.api_load PORT PATH [--clients 8] [--seconds 10] [--warmup 1]`.

CLIENTS connections, each kept alive, send GET PATH (with `Accept-Encoding: gzip`, as a browser
does) one after the other, as fast as they are answered, on one asyncio loop: no thread
switches between a reply and its timing. After WARMUP seconds the process prints `window` on a
line of its own (so a parent can read CPU counters as the measured window starts), then `end`
when it closes, then one JSON object: the answers completed in the window, requests per second,
their latency percentiles (each from the request sent to its last byte read) and how much CPU
this process used in the window. The client is in its own process so that it does not take the
server's GIL; on a small machine it still takes part of the same cores (reported, not hidden).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import math
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from bench import processes

REPO = Path(__file__).resolve().parents[1]
_HEADER_END = b"\r\n\r\n"


class LoadError(RuntimeError):
    """An answer that was not a 200 with a Content-Length, or a connection that closed."""


@dataclasses.dataclass(slots=True)
class _Tally:
    """Every answer's (end, latency) in seconds, and whether the clients should stop."""

    answers: list[tuple[float, float]] = dataclasses.field(default_factory=list)
    statuses: dict[int, int] = dataclasses.field(default_factory=dict)
    stopping: bool = False


def percentile(ordered: list[float], share: float) -> float:
    """The nearest-rank percentile of sorted values (share in (0, 1])."""
    if not ordered:
        raise ValueError("no values")
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


def _content_length(head: bytes) -> tuple[int, int]:
    """The status and Content-Length of a response head; LoadError without a length (the
    routes measured answer with one: chunked replies are not expected)."""
    lines = head.split(b"\r\n")
    parts = lines[0].split(b" ", 2)
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/1.") or not parts[1].isdigit():
        raise LoadError(f"not an HTTP/1.x status line: {lines[0][:80]!r}")
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(parts[1]), int(value.strip())
    raise LoadError(f"an answer without Content-Length: {lines[0][:80]!r}")


async def _client(port: int, request: bytes, tally: _Tally) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        while not tally.stopping:
            began = time.perf_counter()
            writer.write(request)
            head = await reader.readuntil(_HEADER_END)
            status, length = _content_length(head[: -len(_HEADER_END)])
            await reader.readexactly(length)
            ended = time.perf_counter()
            tally.answers.append((ended, ended - began))
            tally.statuses[status] = tally.statuses.get(status, 0) + 1
    except (asyncio.IncompleteReadError, ConnectionError) as exc:
        raise LoadError(f"the server closed a connection: {exc}") from exc
    finally:
        writer.close()


def _summary(tally: _Tally, began: float, ended: float, cpu: float) -> dict[str, object]:
    inside = sorted(latency for end, latency in tally.answers if began <= end < ended)
    seconds = ended - began
    figures: dict[str, object] = {
        "requests": len(inside),
        "seconds": round(seconds, 3),
        "requests_per_second": round(len(inside) / seconds, 1),
        "statuses": {str(code): count for code, count in sorted(tally.statuses.items())},
        "client_cpu_seconds": round(cpu, 3),
    }
    if inside:
        for name, share in (("p50_ms", 0.5), ("p95_ms", 0.95), ("p99_ms", 0.99)):
            figures[name] = round(1000 * percentile(inside, share), 2)
        figures["max_ms"] = round(1000 * inside[-1], 2)
    return figures


async def load(
    port: int, path: str, *, clients: int, seconds: float, warmup: float
) -> dict[str, object]:
    """`clients` kept-alive connections asking GET `path` for `warmup` + `seconds` seconds;
    the figures of the last `seconds`."""
    request = (
        f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept-Encoding: gzip\r\n"
        "User-Agent: lens-bench\r\n\r\n"
    ).encode()
    tally = _Tally()
    running = [asyncio.create_task(_client(port, request, tally)) for _ in range(clients)]
    await asyncio.wait(running, timeout=warmup, return_when=asyncio.FIRST_EXCEPTION)
    print("window", flush=True)
    began, cpu = time.perf_counter(), time.process_time()
    await asyncio.wait(running, timeout=seconds, return_when=asyncio.FIRST_EXCEPTION)
    ended, cpu = time.perf_counter(), time.process_time() - cpu
    print("end", flush=True)
    tally.stopping = True
    await asyncio.gather(*running)  # raises the first client's failure, if any
    return _summary(tally, began, ended, cpu)


def _expect(lines: Iterable[str], word: str) -> None:
    for line in lines:
        if line.strip() == word:
            return
    raise RuntimeError(f"the load process ended before its {word!r} line")


def under_load(
    port: int,
    path: str,
    *,
    clients: int,
    seconds: float,
    warmup: float = 1.0,
    backends: Callable[[], list[int]],
) -> dict[str, object]:
    """The figures of `clients` clients on GET `path` for `seconds` (this module run in a child
    process), with the CPU seconds in the window of this process (the server's, when it serves
    from a thread here), of the database's `backends()` (their pids, read as the window
    starts) and of the client; the load average of the machine as it starts (others' work on
    it shows there)."""
    command = [sys.executable, "-m", "bench.api_load", str(port), path]
    command += ["--clients", str(clients), "--seconds", str(seconds), "--warmup", str(warmup)]
    load_average = os.getloadavg()[0]
    with subprocess.Popen(
        command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as child:
        assert child.stdout is not None and child.stderr is not None
        _expect(child.stdout, "window")
        pids = backends()
        server, database = processes.own_cpu_seconds(), _cpu(pids)
        _expect(child.stdout, "end")
        server, database = processes.own_cpu_seconds() - server, _cpu(pids) - database
        # The rest through the same buffered stream: the figures' line may have come in one
        # read with "end", and communicate() would read past what that read kept.
        out, err = child.stdout.read(), child.stderr.read()
        child.wait(timeout=60)
    if child.returncode != 0:
        raise RuntimeError(f"the load process failed: {err.strip()[-2000:]}")
    figures: dict[str, object] = json.loads(out.strip().splitlines()[-1])
    window = float(str(figures["seconds"]))
    return {
        **figures,
        "server_cpu_seconds": round(server, 3),
        "database_cpu_seconds": round(database, 3),
        "cores_busy": round(
            (server + database + float(str(figures["client_cpu_seconds"]))) / window, 2
        ),
        "load_average_before": round(load_average, 2),
    }


def _cpu(pids: list[int]) -> float:
    total = 0.0
    for pid in pids:
        try:
            total += processes.cpu_seconds(pid)
        except OSError:
            continue  # a backend that ended meanwhile
    return total


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.api_load")
    parser.add_argument("port", type=int)
    parser.add_argument("path")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--warmup", type=float, default=1.0)
    args = parser.parse_args(argv)
    figures = asyncio.run(
        load(args.port, args.path, clients=args.clients, seconds=args.seconds, warmup=args.warmup)
    )
    print(json.dumps({"clients": args.clients, **figures}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
