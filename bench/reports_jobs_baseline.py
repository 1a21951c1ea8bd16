"""The original's way of taking nodes' device readings into the database, for bench_reports_jobs.

REFERENCE.md 5.4: every 10 s the original's jobs pulled each node exporter over HTTP, then saved
what it read row by row through its ORM, each row selected by its key first and inserted or saved
(1.11), every statement committed on its own. Here one local HTTP server (`serve`) stands in for
the node exporters, answering GET /nodes/<node> with that node's minute as JSON; `pull` GETs each
node's document, parses it and saves its rows that way, into the same tables as Lens, through the
same row builders (storing/minuterows.py), so that the database stores the same rows.
"""

from __future__ import annotations

import dataclasses
import datetime
import http.client
import json
import sys
import threading
import time
from collections.abc import Sequence
from concurrent import futures
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import peewee

from bench import processes
from lens.reports.attribution import Attribution, Share
from lens.reports.gpuminutes import GpuMinute
from lens.reports.portminutes import PortMinute
from lens.reports.samples import Holder
from lens.reports.storing import minuterows, partitions
from lens.runtime.config import DatabaseConfig
from lens.store import database, migrating, models, upserting

CLUSTER = "default"  # the cluster `lens jobs` records under when none is configured


def document(node: str, gpus: Sequence[GpuMinute], ports: Sequence[PortMinute]) -> bytes:
    """A node exporter's answer: the node's GPU and port readings of the minute, as JSON."""
    return json.dumps(
        {
            "node": node,
            "gpus": [dataclasses.asdict(m) for m in gpus],
            "ports": [dataclasses.asdict(m) for m in ports],
        }
    ).encode()


class _Handler(BaseHTTPRequestHandler):
    documents: ClassVar[dict[str, bytes]] = {}

    def do_GET(self) -> None:  # the stdlib's name
        body = self.documents.get(self.path)
        if body is None:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # the stdlib's signature
        pass  # a line on stderr per request would cost more than the answer


def serve(documents: dict[str, bytes], port: int) -> ThreadingHTTPServer:
    """An HTTP server on 127.0.0.1:`port` answering GET PATH with `documents[PATH]`, not yet
    serving (call serve_forever)."""
    _Handler.documents = documents
    server = ThreadingHTTPServer(("127.0.0.1", port), _Handler)
    server.daemon_threads = True
    return server


def pull(db: peewee.Database, port: int, nodes: Sequence[str], workers: int) -> int:
    """GET every node's document from 127.0.0.1:`port` and save its rows one at a time, `workers`
    nodes at once; the rows saved."""
    with futures.ThreadPoolExecutor(max_workers=workers) as pool:
        return sum(pool.map(lambda node: _pull_node(db, port, node), nodes))


def _pull_node(db: peewee.Database, port: int, node: str) -> int:
    # A connection per node, as the original's nodes were each another host.
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request("GET", f"/nodes/{node}")
        response = connection.getresponse()
        body = response.read()
        if response.status != 200:
            raise RuntimeError(f"GET /nodes/{node}: HTTP {response.status}")
    finally:
        connection.close()
    name, gpus, ports = parse_document(body)
    return save_node(db, name, gpus, ports)


def parse_document(body: bytes) -> tuple[str, list[GpuMinute], list[PortMinute]]:
    found = json.loads(body)
    return found["node"], [_gpu(g) for g in found["gpus"]], [_port(p) for p in found["ports"]]


def _gpu(values: dict[str, Any]) -> GpuMinute:
    held = values["held_by"]
    shares = tuple(
        Share(holder=Holder(**s["holder"]), held_seconds=s["held_seconds"], seconds=s["seconds"])
        for s in held["shares"]
    )
    return GpuMinute(
        **{
            **values,
            "temperatures_max_celsius": tuple(
                (sensor, celsius) for sensor, celsius in values["temperatures_max_celsius"]
            ),
            "held_by": Attribution(shares=shares, idle_seconds=held["idle_seconds"]),
        }
    )


def _port(values: dict[str, Any]) -> PortMinute:
    return PortMinute(
        **{
            **values,
            "counters": tuple((name, value) for name, value in values["counters"]),
            "hw_counters": tuple((name, value) for name, value in values["hw_counters"]),
        }
    )


def save_node(
    db: peewee.Database, node: str, gpus: Sequence[GpuMinute], ports: Sequence[PortMinute]
) -> int:
    """Save one node's rows one at a time, each committed on its own (peewee autocommits a
    statement outside a transaction, as gorm did); the rows saved."""
    saved = 0
    with database.session(db):
        for gpu in gpus:
            start = at(gpu.start)
            row = minuterows.gpu_row(gpu, cluster=CLUSTER, node=node, start=start)
            saved += _save(models.GpuMinuteReport, minuterows.GPU_COLUMNS, row)
            for holder in minuterows.holder_rows(gpu, cluster=CLUSTER, node=node, start=start):
                saved += _save(models.GpuMinuteHolder, minuterows.HOLDER_COLUMNS, holder)
        for port in ports:
            row = minuterows.port_row(port, cluster=CLUSTER, node=node, start=at(port.start))
            saved += _save(models.RdmaPortMinute, minuterows.PORT_COLUMNS, row)
    return saved


def _save(
    model: type[models.LensModel], columns: tuple[str, ...], values: tuple[object, ...]
) -> int:
    """The original's upsert: SELECT by the natural key, then INSERT when absent (a minute's rows
    are new, so its Save of every column never happens here)."""
    row: upserting.Row = dict(zip(columns, values, strict=True))
    key = models.natural_key(model)
    if model.get_or_none(*[field == row[field.name] for field in key]) is not None:
        return 0
    model.create(**row)
    return 1


def at(seconds: int) -> datetime.datetime:
    return datetime.datetime.fromtimestamp(seconds, datetime.UTC)


def serve_until_closed(documents: dict[str, bytes], port: int) -> None:
    """The nodes' side in its child: "ready" once serving, until stdin closes."""
    server = serve(documents, port)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print("ready", flush=True)
    sys.stdin.read()
    server.shutdown()


def measure(
    url: str, port: int, nodes: Sequence[str], start: int, workers: int, nodes_pid: int
) -> dict[str, float]:
    """Pull and save every node's minute into the fresh database at `url`: the seconds it took
    and the CPU seconds of this process, PostgreSQL and the nodes' server (pid) meanwhile."""
    db = database.open_database(DatabaseConfig(url=url, max_connections=workers + 2))
    try:
        migrating.migrate(db)
        partitions.ensure_days(db, [partitions.day_of(at(start))])
        before = _cpu(nodes_pid)
        started = time.perf_counter()
        pull(db, port, nodes, workers)
        seconds = time.perf_counter() - started
        after = _cpu(nodes_pid)
    finally:
        database.close_all(db)
    parts = ("ingest_process", "postgresql", "nodes_side")
    return {"seconds": seconds} | {
        part: a - b for part, a, b in zip(parts, after, before, strict=True)
    }


def _cpu(nodes_pid: int) -> tuple[float, float, float]:
    return (
        processes.own_cpu_seconds(),
        processes.cpu_seconds_of("postgres"),
        processes.cpu_seconds(nodes_pid),
    )
