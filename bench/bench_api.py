"""`python -m bench api [--requests N] [--clients C] [--seconds S] [--preset large]`: every
route of `lens api` answered over HTTP at 1,000 nodes (8,000 GPUs, about 5,000 GPU pods), the
routes issue 19 budgets also under concurrent clients, against the original's cluster overview
in the same run.

The cluster and the database are the jobs benchmark's (bench_jobs_cycle.py): the API emulator an
hour into the large scenario and a kubelet per node in a child process, and a fresh PostgreSQL
holding what the controller, the agents (GPU devices, the last MINUTES GPU-minutes, HOURS
GPU-hours) and one run of the jobs (node info, GPU-hours, idle GPUs) would hold, and the
biggest workload's last day (api_data.py). `lens api` then serves it with uvicorn on a local
port, as `lens api` runs, and:

* each route is asked N times on one kept-alive connection from this process: latency (the
  client's wall time, first answer apart) and the body's size;
* each LISTED route is asked from a process of its own (api_load.py) by one client for S/2
  seconds (latency percentiles without a client in the server's process), then by C clients at
  once for S seconds: requests/s and latency under load, with the CPU seconds of the server,
  of PostgreSQL's backends and of the client (which shares the same cores).

The workload's day is also asked as it was read before gpu_minute_pods (from the holder rows
joined to their GPU-minutes and devices: api_data.from_holder_rows), on the same server and
data, with how far its answer is from the rollup's (A/B).

The baseline asks the original's overview of the same cluster: a node LIST and a GET of every
GPU node three times over and every kubelet's pods twice, without its ~9 Prometheus queries
(bench/jobs_baseline.py).
Budgets: issue 19's (OVERVIEW_P95_BUDGET_MS, LISTED_P95_BUDGET_MS, OVERVIEW_RATE_BUDGET), and
this benchmark's earlier ones: a page or a lookup in P95_BUDGET_MS at the 95th percentile, an
aggregate over the whole cluster's GPUs (AGGREGATES) in AGGREGATE_BUDGET_MS, the overview at
least 100x faster than the original's.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import statistics
import time
from typing import Any

import kubernetes
import peewee
import urllib3

from bench import api_data, api_load, bench_jobs_cycle, jobs_baseline, jobs_data
from lens.kube.cluster.caches import ClusterCaches
from lens.roles.api import serving
from lens.roles.api.app import create_app
from lens.roles.api.requestmetrics import RequestMetrics
from lens.roles.api.routers.params import Context
from lens.runtime import interpreter
from lens.runtime.clock import FakeClock
from lens.runtime.selfmetrics import SelfMetrics
from lens.store import database, models

MINUTES, HOURS = 30, 30
P95_BUDGET_MS, AGGREGATE_BUDGET_MS, OVERVIEW_RATIO_BUDGET = 250.0, 1000.0, 100.0
# Issue 19's: the overview and every LISTED route at the 95th percentile (one client), and the
# overview's answers a second under concurrent clients on the 2 cores.
OVERVIEW_P95_BUDGET_MS, LISTED_P95_BUDGET_MS, OVERVIEW_RATE_BUDGET = 50.0, 100.0, 300.0
LISTED = (
    "clusters overview",
    "nodes",
    "workloads",
    "clusters gpuHeatmap",
    "workload metrics day",
)
# Routes that read every GPU or pod of the cluster for their answer: consumers (each top-level
# workload ranked by GPUs), GPUs sorted by a live figure, the cluster's series.
AGGREGATES = frozenset(
    {
        "clusters consumers",
        "gpus busiest",
        "nodes gpuUtilizationHistory",
        "nodes gpuUtilizationHistory day",
    }
)


def routes(now: int, node: str, workload: str) -> dict[str, str]:
    """Each route with the parameters a dashboard would send, the last half hour for series."""
    span = f"start={now - 1800}&end={now}&step=60"
    day = datetime.datetime.fromtimestamp(now, datetime.UTC).date().isoformat()
    return {
        "nodes": "/v1/nodes?page_size=100",
        "nodes sorted": "/v1/nodes?page_size=100&order_by=gpu_utilization&desc=true",
        "node": f"/v1/nodes/{node}",
        "node gpuDevices": f"/v1/nodes/{node}/gpuDevices",
        "node gpuMetrics": f"/v1/nodes/{node}/gpuMetrics?{span}",
        "node workloads": f"/v1/nodes/{node}/workloads",
        "node workloadsHistory": f"/v1/nodes/{node}/workloadsHistory",
        "node changelog": f"/v1/nodes/{node}/changelog",
        "nodes gpuAllocation": "/v1/nodes/gpuAllocation",
        "nodes gpuUtilization": "/v1/nodes/gpuUtilization",
        "nodes gpuUtilizationHistory": f"/v1/nodes/gpuUtilizationHistory?{span}",
        "nodes gpuUtilizationHistory day": (
            f"/v1/nodes/gpuUtilizationHistory?start={now - 86400}&end={now}&step=300"
        ),
        "clusters overview": "/v1/clusters/overview",
        "clusters consumers": "/v1/clusters/consumers?page_size=100",
        "clusters gpuHeatmap": "/v1/clusters/gpuHeatmap",
        "workloads": "/v1/workloads?page_size=100",
        "workload": f"/v1/workloads/{workload}",
        "workload hierarchy": f"/v1/workloads/{workload}/hierarchy",
        "workload metrics": f"/v1/workloads/{workload}/metrics?{span}",
        # The dashboard's day: a step giving at most 360 points (chart.js), read from minutes.
        "workload metrics day": (
            f"/v1/workloads/{workload}/metrics?start={now - 86400}&end={now}&step=240"
        ),
        "workloadMetadata": "/v1/workloadMetadata",
        "storage stat": "/v1/storage/stat",
        "gpus": "/v1/gpus?page_size=100",
        "gpus busiest": "/v1/gpus?page_size=100&order_by=utilization&desc=true",
        "idle now": "/v1/idle?page_size=100",
        "gpuHours by namespace": f"/v1/gpuHours?group_by=namespace&start={day}&end={day}",
        "gpuHours by workload": f"/v1/gpuHours?group_by=workload&start={day}&end={day}",
    }


def _biggest_workload(db: Any) -> str:
    """The top-level workload with the most pods (a PyTorchJob of the scenario)."""
    table, reference = models.GpuWorkload, models.WorkloadPodReference
    with database.session(db):
        row = (
            table.select(table.uid)
            .join(reference, on=(reference.workload_uid == table.uid))
            .where(table.parent_uid == "")
            .group_by(table.uid)
            .order_by(peewee.fn.COUNT(reference.pod_uid).desc())
            .first()
        )
    return str(row.uid)


def _asked(http: urllib3.HTTPConnectionPool, path: str, times: int) -> dict[str, Any]:
    latencies, size, status = [], 0, 0
    for _ in range(times + 1):  # the first answer warms the connection and the caches
        began = time.perf_counter()
        answer = http.request("GET", path, headers={"Accept-Encoding": "gzip"})
        latencies.append((time.perf_counter() - began) * 1000)
        size, status = len(answer.data), answer.status
    measured = sorted(latencies[1:])
    return {
        "status": status,
        "p50_ms": round(statistics.median(measured), 2),
        "p95_ms": round(measured[max(0, round(0.95 * len(measured)) - 1)], 2),
        "max_ms": round(measured[-1], 2),
        "bytes": size,
    }


def serve(db: Any, clock: FakeClock) -> serving.ApiServer:
    context = Context(db=db, cluster=jobs_data.CLUSTER, max_page_size=1000, wall_time=clock.time)
    app = create_app(
        context=context, metrics=RequestMetrics(SelfMetrics(process=False)), tokens=None
    )
    server = serving.ApiServer(
        app, host="127.0.0.1", port=0, limits=serving.ServerLimits(), on_failure=print
    )
    interpreter.tune_for_throughput()  # as the launcher tunes `lens api` once it is built
    asyncio.run(server.start())
    return server


def run(argv: list[str]) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m bench api")
    parser.add_argument("--requests", type=int, default=20, help="answers measured per route")
    parser.add_argument("--preset", default="large", help="scenario preset (small for a smoke run)")
    parser.add_argument("--clients", type=int, default=8, help="concurrent clients under load")
    parser.add_argument("--seconds", type=float, default=10.0, help="seconds of load per route")
    parser.add_argument("--warmup", type=float, default=1.0, help="seconds before each window")
    args = parser.parse_args(argv)
    with bench_jobs_cycle.stored_cluster(args.preset) as (child, api, db, caches):
        return _measured(args, child, api, db, caches)


def filled(db: Any, caches: ClusterCaches) -> tuple[FakeClock, list[str], float]:
    """The agents' rows and one run of the jobs that write what the API reads."""
    now = datetime.datetime.now(datetime.UTC).replace(second=30, microsecond=0)
    clock = FakeClock(start_time=now.timestamp())
    nodes = sorted(str(n["metadata"]["name"]) for n in caches.nodes.cache.objects())
    held = jobs_data.holdings(caches.pods.cache.objects())
    began = time.monotonic()
    jobs_data.agent_rows(db, nodes, held, now, minutes=MINUTES, hours=HOURS)
    api_data.gpu_hours(db, nodes, now, hours=HOURS)
    jobs, idle = bench_jobs_cycle.lens_jobs(caches, db, clock)
    for name in ("node-info", "gpu-hours", "consumers"):
        jobs[name]()
    idle.run()
    while not idle.caught_up:
        idle.run()
    with database.session(db):
        database.execute(db, "ANALYZE")  # as autovacuum would have by now
    return clock, nodes, time.monotonic() - began


def a_day(db: Any, clock: FakeClock) -> tuple[str, dict[str, Any]]:
    """A day of GPU-minutes of every GPU and the biggest workload's training iterations of
    the day (api_data.py), added after the jobs ran (the rollup and the idle look-back would
    have worked them off long ago): the workload's uid and the rows written."""
    began = time.monotonic()
    uid = _biggest_workload(db)
    now = datetime.datetime.fromtimestamp(clock.time(), datetime.UTC)
    rows: dict[str, Any] = api_data.a_day_of_minutes(db, minutes=MINUTES, now=now)
    pods = sorted(api_data.pods_of(db, uid))
    rows["training_performance"] = api_data.training_day(db, uid, pods[0], now)
    with database.session(db):
        database.execute(db, "ANALYZE")
    return uid, {**rows, "seconds": round(time.monotonic() - began, 1)}


def _backends(db: Any) -> list[int]:
    """The pids of PostgreSQL's backends serving this benchmark's database."""
    sql = "SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
    with database.session(db):
        return [int(pid) for (pid,) in database.execute(db, sql).fetchall()]


def _loads(port: int, asked: dict[str, str], db: Any, args: argparse.Namespace) -> dict[str, Any]:
    """Each LISTED route asked by one client alone (its latency unloaded, from a process of
    its own) for half the time, then by `args.clients` clients at once (requests/s)."""
    found: dict[str, Any] = {}
    for name in LISTED:
        found[name] = {
            kind: api_load.under_load(
                port,
                asked[name],
                clients=clients,
                seconds=seconds,
                warmup=args.warmup,
                backends=lambda: _backends(db),
            )
            for kind, clients, seconds in (
                ("alone", 1, args.seconds / 2),
                ("loaded", args.clients, args.seconds),
            )
        }
    return found


def _differences(after: Any, before: Any) -> tuple[int, float]:
    """(numbers compared, their largest relative difference) of two answers of one shape;
    ValueError where the shapes or any text differ."""
    if isinstance(after, dict) and isinstance(before, dict) and after.keys() == before.keys():
        pairs = [(after[k], before[k]) for k in after]
    elif isinstance(after, list) and isinstance(before, list) and len(after) == len(before):
        pairs = list(zip(after, before, strict=True))
    elif isinstance(after, int | float) and isinstance(before, int | float):
        return 1, abs(after - before) / max(abs(before), 1e-300) if after != before else 0.0
    elif after == before:
        return 0, 0.0
    else:
        raise ValueError(f"the answers differ: {after!r} and {before!r}")
    found = [_differences(a, b) for a, b in pairs]
    return sum(n for n, _ in found), max((d for _, d in found), default=0.0)


def _a_b(
    http: urllib3.HTTPConnectionPool, port: int, path: str, db: Any, args: argparse.Namespace
) -> dict[str, Any]:
    """A workload's day read as before gpu_minute_pods (api_data.from_holder_rows), on the same
    server and data: one client in this process and one alone; and how far its answer is from
    the answer from gpu_minute_pods."""
    after = json.loads(http.request("GET", path).data)
    with api_data.from_holder_rows(db):
        before = json.loads(http.request("GET", path).data)
        measured = {
            "lens": _asked(http, path, args.requests),
            "alone": api_load.under_load(
                port,
                path,
                clients=1,
                seconds=args.seconds / 2,
                warmup=args.warmup,
                backends=lambda: _backends(db),
            ),
        }
    compared, worst = _differences(after, before)
    return {**measured, "numbers_compared": compared, "largest_relative_difference": worst}


def _issue_budgets(loads: dict[str, Any]) -> dict[str, Any]:
    """Issue 19's budgets, on the latencies of one client alone and the overview's rate under
    concurrent clients."""
    overview = loads["clusters overview"]
    worst = max(float(route["alone"]["p95_ms"]) for route in loads.values())
    rate = float(overview["loaded"]["requests_per_second"])
    return {
        "overview_p95_ms": overview["alone"]["p95_ms"],
        "overview_p95_ok": float(overview["alone"]["p95_ms"]) <= OVERVIEW_P95_BUDGET_MS,
        "worst_listed_p95_ms": worst,
        "listed_p95_ok": worst <= LISTED_P95_BUDGET_MS,
        "overview_requests_per_second": rate,
        "overview_rate_ok": rate >= OVERVIEW_RATE_BUDGET,
    }


def _measured(
    args: argparse.Namespace,
    child: bench_jobs_cycle.Child,
    api: kubernetes.client.ApiClient,
    db: Any,
    caches: ClusterCaches,
) -> dict[str, Any]:
    clock, nodes, setup = filled(db, caches)
    workload, day = a_day(db, clock)
    server = serve(db, clock)
    try:
        http = urllib3.HTTPConnectionPool("127.0.0.1", server.port, maxsize=1)
        asked = routes(int(clock.time()), nodes[0], workload)
        lens = {name: _asked(http, path, args.requests) for name, path in asked.items()}
        loads = _loads(server.port, asked, db, args)
        holder_rows = _a_b(http, server.port, asked["workload metrics day"], db, args)
    finally:
        asyncio.run(server.stop())
    original = jobs_baseline.Original(
        api, db, kubelets=child.hello["kubelets"], token=child.hello["token"], cluster="default"
    )
    began = time.perf_counter()
    original.overview()
    original_ms = (time.perf_counter() - began) * 1000
    worst = max(route["p95_ms"] for name, route in lens.items() if name not in AGGREGATES)
    worst_aggregate = max(route["p95_ms"] for name, route in lens.items() if name in AGGREGATES)
    ratio = original_ms / lens["clusters overview"]["p50_ms"]
    return {
        "nodes": len(nodes),
        "gpus": 8 * len(nodes),
        "data_setup_seconds": round(setup, 1),
        "a_day": day,
        "requests_per_route": args.requests,
        "lens": lens,
        "load": loads,
        "workload_metrics_day_from_holder_rows": holder_rows,
        "original_overview": {
            "ms": round(original_ms, 1),
            "requests": original.requests.total,
            "left_out": "its ~9 Prometheus queries (no Prometheus here)",
        },
        "budgets": {
            "worst_p95_ms": worst,
            "p95_ok": worst <= P95_BUDGET_MS,
            "worst_aggregate_p95_ms": worst_aggregate,
            "aggregate_ok": worst_aggregate <= AGGREGATE_BUDGET_MS,
            "all_ok_statuses": all(route["status"] == 200 for route in lens.values())
            and all(
                set(route[kind]["statuses"]) == {"200"}
                for route in loads.values()
                for kind in ("alone", "loaded")
            ),
            "overview_ratio": round(ratio, 1),
            "overview_ok": ratio >= OVERVIEW_RATIO_BUDGET,
            "issue": _issue_budgets(loads),
        },
    }
