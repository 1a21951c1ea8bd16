"""Container events/s from a node agent to PostgreSQL, Lens against the original's way, and
event-to-row latency at a steady 100 events/s.

The agent side runs in this process as in `lens node-agent`: each event goes into the outbox
(encoded, numbered and written to the journal), and the shipper streams batches over gRPC. The
server runs as its own process on a fresh PostgreSQL database:

- **Lens**: `lens jobs`, batches merged and written in one upsert transaction each.
- **baseline**: bench/events_baseline.py, the original's way: the shipper sends one event per
  message, and per event the server selects then inserts or saves each row, autocommitted.

An event counts as delivered when the server's acknowledgement of it arrives; servers
acknowledge only what they committed, so put-to-acknowledgement bounds event-to-row from above.
Every run then checks that the database holds exactly the event rows sent.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

from bench import databases, processes
from lens.containers.model import (
    STATUS_AFTER,
    Container,
    ContainerEvent,
    Device,
    EventType,
    Pod,
    Record,
    Source,
)
from lens.containers.node.journal import Journal
from lens.containers.node.outbox import Outbox
from lens.containers.node.shipping import EventShipper, ShipperMetrics
from lens.runtime.config import DatabaseConfig, EventsConfig
from lens.runtime.selfmetrics import SelfMetrics
from lens.store import database, models

# Devices per container: a whole 8-GPU node with its 8 RDMA NICs, and a one-GPU pod.
SHAPES = {"full_node": (8, 8), "one_gpu": (1, 1)}
LIFECYCLE = (EventType.CREATED, EventType.STARTED, EventType.EXITED, EventType.DELETED)


def lifecycles(
    count: int, *, prefix: str, start: float, gpus: int = 8, nics: int = 8
) -> list[ContainerEvent]:
    """`count` events: created, started, exited, deleted of count/4 containers with `gpus` GPUs
    and `nics` RDMA devices each; 64 containers at a time overlap, as on a busy node."""
    devices = tuple(
        Device(type="gpu", name="AMD Instinct MI300X", number=i, uuid=f"0x{i:016x}")
        for i in range(gpus)
    ) + tuple(Device(type="ib", name=f"mlx5_{i}", number=i, uuid=f"mlx5_{i}") for i in range(nics))
    events: list[ContainerEvent] = []
    containers = -(-count // len(LIFECYCLE))
    for group in range(0, containers, 64):
        for step, kind in enumerate(LIFECYCLE):
            for n in range(group, min(group + 64, containers)):
                events.append(_event(kind, step, f"{prefix}{n:08d}", devices, start + n * 0.001))
    return events[:count]


def _event(
    kind: EventType, step: int, name: str, devices: tuple[Device, ...], created: float
) -> ContainerEvent:
    exited = kind in (EventType.EXITED, EventType.DELETED)
    container = Container(
        id=name.ljust(64, "0"),
        name="worker",
        pod=Pod(uid=f"uid-{name}", name=f"train-{name}-worker", namespace="team-a"),
        devices=devices,
        created_at=created,
        status=STATUS_AFTER[kind],
        exit_code=0 if exited else None,
    )
    return ContainerEvent(
        type=kind,
        source=Source.CONTAINERD,
        container=container,
        time=created + step,
        exit_code=0 if kind is EventType.EXITED else None,
    )


class TimedOutbox(Outbox):
    """An outbox that notes when each record went in and when its acknowledgement came back."""

    def __init__(self, *, boot_id: str, capacity: int, journal: Journal) -> None:
        super().__init__(boot_id=boot_id, capacity=capacity, wall_time=time.time, journal=journal)
        self.put_at: dict[int, float] = {}
        self.acked_at: dict[int, float] = {}
        self._acked_through = 0

    def put(self, record: Record) -> None:
        now = time.perf_counter()
        super().put(record)
        self.put_at[self.last_sequence] = now

    def acknowledge(self, boot_id: str, sequence: int) -> int:
        removed = super().acknowledge(boot_id, sequence)
        now = time.perf_counter()
        for acked in range(self._acked_through + 1, sequence + 1):
            self.acked_at[acked] = now
        self._acked_through = max(self._acked_through, sequence)
        return removed


@contextlib.contextmanager
def lens_jobs(url: str) -> Iterator[tuple[str, int]]:
    """`lens jobs` on `url`: yields its gRPC address and pid."""
    grpc_port, http_port = processes.free_port(), processes.free_port()
    env = {
        "LENS_DATABASE__URL": url,
        "LENS_JOBS__GRPC_HOST": "127.0.0.1",
        "LENS_JOBS__GRPC_PORT": str(grpc_port),
        "LENS_SERVER__HOST": "127.0.0.1",
        "LENS_SERVER__PORT": str(http_port),
        "LENS_LOGGING__LEVEL": "warning",
    }
    with _child([sys.executable, "-m", "lens", "jobs"], env) as process:
        processes.wait_ready(http_port, time.monotonic() + 60, what="lens jobs")
        yield f"127.0.0.1:{grpc_port}", process.pid


@contextlib.contextmanager
def baseline_server(url: str) -> Iterator[tuple[str, int]]:
    port = processes.free_port()
    command = [sys.executable, "-m", "bench.events_baseline", "--url", url, "--port", str(port)]
    with _child(command, {}) as process:
        processes.wait_listening(port, time.monotonic() + 60, what="the baseline server")
        yield f"127.0.0.1:{port}", process.pid


@contextlib.contextmanager
def _child(command: list[str], env: dict[str, str]) -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen(
        command,
        env={**os.environ, **env},
        cwd=Path(__file__).parents[1],
        stdout=subprocess.DEVNULL,  # this process's stdout is the figures
    )
    try:
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)


def ship(
    address: str,
    events: list[ContainerEvent],
    *,
    batch_records: int,
    pace_seconds: float = 0.0,
    timeout: float = 600.0,
) -> TimedOutbox:
    """Put `events` into an agent outbox (every `pace_seconds`, or as fast as it takes them)
    and ship them to `address` until all are acknowledged."""
    with tempfile.TemporaryDirectory() as journal_dir:
        boot_id = uuid.uuid4().hex
        outbox = TimedOutbox(
            boot_id=boot_id,
            capacity=len(events) + 10,
            journal=Journal(journal_dir, boot_id=boot_id),
        )
        shipper = EventShipper(
            EventsConfig(server_address=address, batch_records=batch_records),
            outbox=outbox,
            node="gpu-node-1",
            metrics=ShipperMetrics(SelfMetrics(process=False)),
        )
        shipper.start()
        try:
            _wait(lambda: shipper.streams > 0, time.monotonic() + 30, "the stream to open")
            started = time.perf_counter()
            for i, event in enumerate(events):
                if pace_seconds:
                    delay = started + i * pace_seconds - time.perf_counter()
                    if delay > 0:
                        time.sleep(delay)
                outbox.put(event)
            _wait(
                lambda: outbox.acknowledged >= len(events),
                time.monotonic() + timeout,
                "every event to be acknowledged",
            )
        finally:
            shipper.stop()
            outbox.close()
        return outbox


def _wait(condition: Callable[[], bool], deadline: float, what: str) -> None:
    while not condition():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(0.005)


def _event_rows(url: str) -> int:
    db = database.open_database(DatabaseConfig(url=url))
    try:
        with database.session(db):
            return int(models.NodeContainerEvent.select().count())
    finally:
        database.close_all(db)


def _throughput(
    url: str, server: str, events: int, batch_records: int, shape: str
) -> dict[str, object]:
    gpus, nics = SHAPES[shape]
    sent = lifecycles(events, prefix="t", start=time.time(), gpus=gpus, nics=nics)
    serve = lens_jobs if server == "lens" else baseline_server
    with serve(url) as (address, pid):
        before = _cpu(pid)
        outbox = ship(address, sent, batch_records=batch_records)
        used = [after - start for after, start in zip(_cpu(pid), before, strict=True)]
        rss = processes.peak_rss_mib(pid)
    first, last = min(outbox.put_at.values()), max(outbox.acked_at.values())
    rows = _event_rows(url)
    if rows != len(sent):
        raise RuntimeError(f"{server}: {rows} event rows in the database, {len(sent)} sent")
    return {
        "events": len(sent),
        "seconds": round(last - first, 2),
        "events_per_s": round(len(sent) / (last - first)),
        "cpu_seconds_per_1000_events": {
            part: round(1000 * seconds / len(sent), 3)
            for part, seconds in zip(("agent", "server", "postgresql"), used, strict=True)
        },
        "server_peak_rss_mib": rss,
        "event_rows": rows,
    }


def _cpu(server_pid: int) -> tuple[float, float, float]:
    """CPU seconds so far of this process (the agent side), the server and PostgreSQL."""
    return (
        processes.own_cpu_seconds(),
        processes.cpu_seconds(server_pid),
        processes.cpu_seconds_of("postgres"),
    )


def _latency(url: str, rate: float, seconds: float) -> dict[str, object]:
    sent = lifecycles(max(4, int(rate * seconds)), prefix="l", start=time.time())
    with lens_jobs(url) as (address, _):
        outbox = ship(address, sent, batch_records=1000, pace_seconds=1.0 / rate)
    delays = sorted(outbox.acked_at[s] - outbox.put_at[s] for s in outbox.put_at)
    rows = _event_rows(url)
    if rows != len(sent):
        raise RuntimeError(f"latency run: {rows} event rows in the database, {len(sent)} sent")

    def quantile(q: float) -> float:
        return round(1000 * delays[min(len(delays) - 1, int(q * len(delays)))], 2)

    return {
        "events_per_s": rate,
        "events": len(sent),
        "p50_ms": round(1000 * statistics.median(delays), 2),
        "p99_ms": quantile(0.99),
        "max_ms": round(1000 * delays[-1], 2),
    }


def _fresh_throughput(
    server: str, events: int, batch_records: int, shape: str
) -> dict[str, object]:
    with databases.fresh_database_url("postgresql") as url:
        return _throughput(url, server, events, batch_records, shape)


def _median_run(measure: Callable[[], dict[str, object]], runs: int) -> dict[str, object]:
    """The run of median rate among `runs` (this host's rate varies by some 10 % run to run),
    with every run's rate."""
    results = sorted((measure() for _ in range(max(1, runs))), key=_rate)
    return {**results[len(results) // 2], "runs_events_per_s": [_rate(r) for r in results]}


def _rate(figures: dict[str, object]) -> int:
    rate = figures["events_per_s"]
    assert isinstance(rate, int)
    return rate


def run(argv: list[str]) -> dict[str, object]:
    parser = argparse.ArgumentParser(prog="python -m bench events")
    parser.add_argument("--events", type=int, default=100_000, help="events through Lens")
    parser.add_argument(
        "--baseline-events", type=int, default=2_000, help="events through the baseline"
    )
    parser.add_argument("--batch-records", type=int, default=1000, help="agent batch size")
    parser.add_argument(
        "--runs", type=int, default=3, help="Lens throughput runs per shape (the median counts)"
    )
    parser.add_argument("--rate", type=float, default=100.0, help="events/s of the latency run")
    parser.add_argument("--latency-seconds", type=float, default=30.0, help="latency run length")
    args = parser.parse_args(argv)
    figures: dict[str, object] = {"database": "postgresql"}
    for shape, (gpus, nics) in SHAPES.items():
        lens = _median_run(
            functools.partial(_fresh_throughput, "lens", args.events, args.batch_records, shape),
            args.runs,
        )
        with databases.fresh_database_url("postgresql") as url:
            baseline = _throughput(url, "baseline", args.baseline_events, 1, shape)
        lens_rate, baseline_rate = lens["events_per_s"], baseline["events_per_s"]
        assert isinstance(lens_rate, int) and isinstance(baseline_rate, int)
        figures[shape] = {
            "gpus_per_container": gpus,
            "rdma_devices_per_container": nics,
            "lens": lens,
            "one_event_per_message_select_then_insert": baseline,
            "ratio": round(lens_rate / baseline_rate, 1),
        }
    with databases.fresh_database_url("postgresql") as url:
        figures["latency"] = _latency(url, args.rate, args.latency_seconds)
    return figures
