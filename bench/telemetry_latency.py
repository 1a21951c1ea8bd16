"""How long a training-log line takes from its arrival at `lens jobs` to its row committed: the
log intake (lens/telemetry/trainlogs/intake.py) on a fresh database with the training pods and
their workloads stored, fed a steady stream of fluent-bit-sized bodies — Megatron iteration lines
among the chatter of their jobs — for a while; each iteration's latency is the time from the
offer of its body to the observer call that follows its commit."""

from __future__ import annotations

import dataclasses
import datetime
import statistics
import threading
import time

import peewee

from bench.api_load import percentile
from lens.runtime.config import DatabaseConfig
from lens.runtime.selfmetrics import SelfMetrics
from lens.store import database, migrating, models
from lens.telemetry.trainlogs.batching import StoredIteration
from lens.telemetry.trainlogs.intake import IntakeSettings, LogIntake
from lens.telemetry.trainlogs.records import LogRecord, ParsedBody

CLUSTER = "bench"
NOISE = (
    "NCCL INFO Channel 02/32 : 0[3] -> 1[3] via P2P/IPC/read",
    "[WARNING] torch.distributed: the default process group timeout is 10 minutes",
    "  forward-backward ..............................: (5012.31, 5040.77)",
)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class LatencyFigures:
    lines: int
    iterations: int
    rows_stored: int  # training_performance rows after the run: one per iteration line
    lines_per_second: float
    p50_seconds: float
    p99_seconds: float
    max_seconds: float


def _megatron(iteration: int, at: float) -> str:
    stamp = datetime.datetime.fromtimestamp(at, datetime.UTC).strftime("%Y-%m-%d %H:%M:%S.%f")
    return (
        f" [{stamp}] iteration {iteration:8d}/   10000 | consumed samples: {iteration * 64:12d} |"
        " elapsed time per iteration (ms): 5123.4 | throughput per GPU (TFLOP/s/GPU): 487.2 |"
        " learning rate: 1.499250E-05 | global batch size:    64 | lm loss: 7.214836E+00 |"
        " loss scale: 1.0 | grad norm: 2.143 | number of skipped iterations:   0 |"
        " number of nan iterations:   0 |"
    )


def _store_cluster(db: peewee.Database, pods: int) -> None:
    now = datetime.datetime.now(datetime.UTC) - datetime.timedelta(hours=1)
    with database.session(db), db.atomic():
        models.GpuWorkload.insert_many(
            [
                {"cluster": CLUSTER, "uid": f"job-{p}", "kind": "PyTorchJob", "name": f"llama-{p}",
                 "namespace": "ml", "parent_uid": "", "status": "Running", "created_at": now,
                 "updated_at": now}
                for p in range(pods)
            ]
        ).execute()  # fmt: skip
        models.GpuPod.insert_many(
            [
                {"cluster": CLUSTER, "uid": f"pod-{p}", "name": f"llama-{p}-0", "namespace": "ml",
                 "node_name": f"gpu-node-{p:03d}", "running": True, "phase": "Running",
                 "owner_uid": f"job-{p}", "gpu_allocated": 8, "created_at": now, "updated_at": now}
                for p in range(pods)
            ]
        ).execute()  # fmt: skip
        models.WorkloadPodReference.insert_many(
            [
                {"cluster": CLUSTER, "workload_uid": f"job-{p}", "pod_uid": f"pod-{p}",
                 "created_at": now}
                for p in range(pods)
            ]
        ).execute()  # fmt: skip


class _Clockings:
    """Offer times of each (pod, iteration), and latencies once stored (threads share it)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.offered: dict[tuple[str, int], float] = {}
        self.latencies: list[float] = []

    def observe(self, stored: StoredIteration) -> None:
        done = time.monotonic()
        with self.lock:
            self.latencies.append(done - self.offered[(stored.pod_uid, stored.iteration)])


def _body(pods: int, iteration: int, per_pod: int) -> tuple[ParsedBody, list[tuple[str, int]]]:
    """One flush of every pod's log: an iteration line and (per_pod - 1) lines of chatter."""
    now = time.time()
    found: list[LogRecord] = []
    keys = []
    for p in range(pods):
        lines = [_megatron(iteration, now)] + [NOISE[i % 3] for i in range(per_pod - 1)]
        for line in lines:
            found.append(
                LogRecord(line=line, at=now, pod_uid=f"pod-{p}", pod_name=f"llama-{p}-0",
                          namespace="ml", node=f"gpu-node-{p:03d}", container="trainer")
            )  # fmt: skip
        keys.append((f"pod-{p}", iteration))
    return ParsedBody(records=tuple(found), skipped={}), keys


def measure(url: str, *, seconds: float = 20.0, pods: int = 64, per_pod: int = 4) -> LatencyFigures:
    """Every pod logs an iteration line and per_pod - 1 other lines each tenth of a second (a
    fluent-bit flush per tenth): pods * per_pod * 10 lines/s, for `seconds`."""
    db = migrating.open_for_role(DatabaseConfig(url=url))
    _store_cluster(db, pods)
    clockings = _Clockings()
    intake = LogIntake(
        db,
        IntakeSettings(cluster=CLUSTER),
        metrics=SelfMetrics(process=False),
        observers=[clockings.observe],
    )
    intake.start_thread()
    lines = iterations = 0
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        iterations += 1
        body, keys = _body(pods, iterations, per_pod)
        with clockings.lock:
            offer = time.monotonic()
            clockings.offered.update((key, offer) for key in keys)
        assert intake.offer(body), "the queue refused a body"
        lines += len(body.records)
        time.sleep(max(0.0, started + iterations * 0.1 - time.monotonic()))
    elapsed = time.monotonic() - started
    intake.wait_idle(30)
    intake.stop_thread()
    with database.session(db):
        rows = models.TrainingPerformance.select().count()
    ordered = sorted(clockings.latencies)
    db.close()
    return LatencyFigures(
        lines=lines,
        iterations=iterations * pods,
        rows_stored=rows,
        lines_per_second=lines / elapsed,
        p50_seconds=statistics.median(ordered),
        p99_seconds=percentile(ordered, 0.99),
        max_seconds=ordered[-1],
    )
