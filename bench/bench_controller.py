"""`python -m bench controller [--pods N]`: the controller's watches into a fresh PostgreSQL.

The cluster (API emulator + driver, bench/controller_cluster.py) runs in its own process; the
controller's ClusterSync runs here, so this process's memory is the controller's. Measured:
- the first listing of N pods (default 10,000) into the store: seconds, and RSS after it;
- sustained pod events/s: the driver flips a condition on GPU pods as fast as it can and the
  controller's commit rate is timed until it has caught up — against the original's way in the
  same run (bench/controller_baseline.py: a reconcile per event that GETs every owner and writes
  row by row);
- event-to-row latency at 100 events/s, from each change's own time to its commit;
- finalizer release: Jobs deleted at 5/s; seconds from the request until the object is gone.
"""

from __future__ import annotations

import argparse
import datetime
import json
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import kubernetes

from bench import controller_baseline
from bench.databases import fresh_database_url
from lens.kube.machinery import resources
from lens.kube.machinery.batching import Batch
from lens.kube.machinery.reflector import WatchSettings
from lens.kube.workloads.clustersync import ClusterSync
from lens.kube.workloads.syncmetrics import SyncMetrics
from lens.runtime.config import ControllerConfig, DatabaseConfig
from lens.runtime.selfmetrics import SelfMetrics
from lens.runtime.timestamps import parse_rfc3339
from lens.store import database, migrating

CONDITION = "LensBench"


class Cluster:
    """The child process: send a command, read its answer."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self._process = process
        assert process.stdout is not None
        hello = json.loads(process.stdout.readline())
        self.url: str = hello["url"]
        self.gpu_pods: int = hello["gpu_pods"]

    def ask(self, **command: object) -> dict[str, Any]:
        assert self._process.stdin is not None and self._process.stdout is not None
        self._process.stdin.write(json.dumps(command) + "\n")
        self._process.stdin.flush()
        answer: dict[str, Any] = json.loads(self._process.stdout.readline())
        return answer


@contextmanager
def cluster(pods: int) -> Iterator[Cluster]:
    command = [sys.executable, "-m", "bench.controller_cluster", str(pods)]
    root = Path(__file__).resolve().parents[1]
    with subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=root
    ) as process:
        try:
            yield Cluster(process)
        finally:
            assert process.stdin is not None
            process.stdin.close()
            process.wait(30)


class Latencies:
    """Event-to-row seconds of the bench's condition changes, taken at each commit."""

    def __init__(self) -> None:
        self.seconds: list[float] = []
        self.committed = 0
        self._lock = threading.Lock()

    def __call__(self, batch: Batch) -> None:
        now = time.time()
        found = []
        for change in batch.pods:
            for condition in change.object.get("status", {}).get("conditions") or []:
                if condition.get("type") == CONDITION:
                    made = parse_rfc3339(condition.get("lastTransitionTime"))
                    if made is not None:
                        found.append(now - made.timestamp())
        with self._lock:
            self.seconds.extend(found)
            self.committed += len(batch.pods)


def _rss_mib(field: str = "VmRSS") -> float:
    """The process's resident memory now (VmRSS) or at its peak so far (VmHWM)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return round(int(line.split()[1]) / 1024, 1)
    return float("nan")


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def _caught_up(sync: ClusterSync, api: kubernetes.client.ApiClient, timeout: float) -> None:
    listed = resources.request_json(api, "GET", "/api/v1/nodes", query={"limit": 1})
    version = int(listed["metadata"]["resourceVersion"])
    deadline = time.monotonic() + timeout
    while not sync.caught_up(version):
        if time.monotonic() > deadline:
            raise RuntimeError("the controller did not catch up")
        time.sleep(0.01)


def _lens(pods: int, churn: int, latency_seconds: float, jobs: int) -> dict[str, object]:
    with fresh_database_url("postgresql") as url, cluster(pods) as world:
        db = migrating.open_for_role(DatabaseConfig(url=url))
        configuration = kubernetes.client.Configuration()
        configuration.host = world.url
        api = kubernetes.client.ApiClient(configuration)
        latencies = Latencies()
        sync = ClusterSync(
            api,
            db,
            cluster="bench",
            config=ControllerConfig(finalizer_kinds=("Job",), finalizer_grace_seconds=30),
            watch=WatchSettings(stall_seconds=30),
            metrics=SyncMetrics(SelfMetrics(process=False)),
            wall_time=lambda: datetime.datetime.now(datetime.UTC),
            on_commit=latencies,
        )
        rss_before = _rss_mib()
        began = time.monotonic()
        sync.start()
        _caught_up(sync, api, 600)
        listed_seconds = time.monotonic() - began
        rss_listed = _rss_mib()
        throughput = _sustained(sync, api, world, latencies, churn)
        latencies.seconds.clear()
        world.ask(rate=100, seconds=latency_seconds)
        _caught_up(sync, api, 60)
        at_100 = list(latencies.seconds)
        release = _finalizers(world, jobs)
        rss_end, rss_peak = _rss_mib(), _rss_mib("VmHWM")
        sync.stop()
        api.close()
        database.close_all(db)
    return {
        "pods": pods,
        "gpu_pods_running": world.gpu_pods,
        "first_listing_seconds": round(listed_seconds, 2),
        "rss_mib": {
            "before": rss_before,
            "after_listing": rss_listed,
            "at_end": rss_end,
            "peak": rss_peak,
        },
        "sustained": throughput,
        "latency_at_100_per_second": {
            "changes": len(at_100),
            "p50_ms": round(_percentile(at_100, 0.5) * 1000, 1),
            "p99_ms": round(_percentile(at_100, 0.99) * 1000, 1),
            "max_ms": round(max(at_100) * 1000, 1) if at_100 else None,
        },
        "finalizer_release": release,
    }


def _sustained(
    sync: ClusterSync,
    api: kubernetes.client.ApiClient,
    world: Cluster,
    latencies: Latencies,
    churn: int,
) -> dict[str, object]:
    cpu_before = time.process_time()
    committed_before = latencies.committed
    timed = world.ask(churn=churn)
    _caught_up(sync, api, 600)
    done = time.time()
    cpu = time.process_time() - cpu_before
    return {
        "changes": churn,
        "driver_seconds": round(timed["ended"] - timed["began"], 3),
        "events_per_second": round(churn / (done - timed["began"])),
        "committed": latencies.committed - committed_before,
        "controller_cpu_ms_per_event": round(cpu * 1000 / churn, 3),
    }


def _finalizers(world: Cluster, jobs: int) -> dict[str, object]:
    deadline = time.monotonic() + 60
    while world.ask(finalized=jobs)["finalized"] < jobs and time.monotonic() < deadline:
        time.sleep(0.2)
    waits = world.ask(delete_jobs=jobs, rate=5)["release_seconds"]
    return {
        "jobs": len(waits),
        "p50_s": round(statistics.median(waits), 3) if waits else None,
        "p99_s": round(_percentile(waits, 0.99), 3),
        "max_s": round(max(waits), 3) if waits else None,
    }


def _original(pods: int, churn: int) -> dict[str, object]:
    with fresh_database_url("postgresql") as url, cluster(pods) as world:
        migrating.migrate(database.open_database(DatabaseConfig(url=url)))
        with controller_baseline.running(world.url, url) as baseline:
            baseline.watching.wait(60)
            time.sleep(1.0)  # the watch request is on its way
            began = time.time()
            world.ask(churn=churn)
            baseline.wait_settled(1800)
            # settled means the last event was processed; subtract the final quiet wait
            elapsed = baseline.last_event_at - began
    return {"changes": churn, "events_per_second": round(churn / elapsed)}


def run(argv: list[str]) -> dict[str, object]:
    parser = argparse.ArgumentParser(prog="python -m bench controller")
    parser.add_argument("--pods", type=int, default=10_000, help="pods in the cluster")
    parser.add_argument("--churn", type=int, default=20_000, help="changes for the rate")
    parser.add_argument("--baseline-churn", type=int, default=2_000, help="changes for it")
    parser.add_argument("--latency-seconds", type=float, default=10.0, help="at 100/s")
    parser.add_argument("--jobs", type=int, default=50, help="Jobs deleted for finalizers")
    args = parser.parse_args(argv)
    lens = _lens(args.pods, args.churn, args.latency_seconds, args.jobs)
    original = _original(args.pods, args.baseline_churn)
    lens_rate = lens["sustained"]["events_per_second"]  # type: ignore[index]
    return {
        "lens": lens,
        "original_way": original,
        "ratio_events_per_second": round(lens_rate / original["events_per_second"], 1),  # type: ignore[operator]
        "budgets": {
            "events_per_second": ">= 500",
            "p99_event_to_row_at_100_per_second": "<= 1 s",
            "rss_at_10000_pods": "<= 250 MiB",
            "finalizer_release_p99": "<= 2 s",
        },
    }
