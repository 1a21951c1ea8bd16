"""A small living cluster for the dashboard's browser tests, written by Lens's own writers
(usagerows.py says which) as of `now`, the real time, since the page asks for ranges ending now:

six 8-GPU nodes (gpu-f NotReady); PyTorchJob `train` (ml, team nlp) with pod p1 on all of gpu-a
and p4 on all of gpu-b, busy; Deployment `web` (serve, team ops) through ReplicaSet web-1 with
pod p2 on two GPUs of gpu-c at 30 %; pod p3 (dev, no owner) on one GPU of gpu-d, idle. The
other GPUs are free. Every GPU has a minute for each of the last MINUTES minutes, and `train`
logged an iteration a minute (TRAINING: its figures)."""

from __future__ import annotations

import dataclasses
import datetime

import peewee

from lens.reports.gpuminutes import GpuMinute
from lens.reports.samples import Holder
from lens.store import freshness
from tests.roles.api.conftest import CLUSTER, GIB, gpu, node, write_gpus, write_nodes
from tests.roles.api.seriesrows import write_training
from tests.roles.api.usagerows import (
    JsonObject,
    at,
    find_idle,
    gpu_minute,
    holder,
    pod,
    record_pods,
    record_workloads,
    sum_days,
    workload,
    write_minutes,
)

MINUTE = 60
MINUTES = 90
TRAINING = ("iteration_time_ms", "loss", "tflops")  # what train's iterations logged
NODES = ("gpu-a", "gpu-b", "gpu-c", "gpu-d", "gpu-e", "gpu-f")


@dataclasses.dataclass(frozen=True, slots=True)
class Held:
    """A pod holding GPUs 0..gpus-1 of a node at a utilization (ratio)."""

    pod: JsonObject
    node: str
    gpus: int
    load: float


def uuid(node_name: str, index: int) -> str:
    return f"GPU-{node_name}-{index}"


def _people(db: peewee.Database) -> list[Held]:
    train = workload("w1", name="train", labels={"team": "nlp"})
    web = workload("d1", kind="Deployment", name="web", namespace="serve", labels={"team": "ops"})
    replicas = workload("r1", kind="ReplicaSet", name="web-1", namespace="serve", owner=web)
    p1 = pod("p1", node_name="gpu-a", gpus=8, owner=train)
    p4 = pod("p4", node_name="gpu-b", gpus=8, owner=train)
    p2 = pod("p2", node_name="gpu-c", namespace="serve", gpus=2, owner=replicas)
    p3 = pod("p3", node_name="gpu-d", namespace="dev", gpus=1)
    record_pods(db, p1, p4, p2, p3)
    record_workloads(db, (train, [p1, p4]), (web, [p2]), (replicas, [p2]))
    return [
        Held(p1, "gpu-a", 8, 0.9),
        Held(p4, "gpu-b", 8, 0.8),
        Held(p2, "gpu-c", 2, 0.3),
        Held(p3, "gpu-d", 1, 0.0),
    ]


def ratio(start: float, index: int, load: float | None) -> float:
    """The utilization written for GPU `index` in the minute at `start`, held at `load`
    (None: free)."""
    wobble = ((index * 7 + int(start // MINUTE)) % 5) / 100  # GPUs of one pod differ a little
    return min(1.0, load + wobble) if load is not None else 0.0


# The load each GPU was held at (None: free), by node and index: what the truth is made of.
LOADS = {
    **{("gpu-a", i): 0.9 for i in range(8)},
    **{("gpu-b", i): 0.8 for i in range(8)},
    **{("gpu-c", i): 0.3 for i in range(2)},
    ("gpu-d", 0): 0.0,
}
REPORTING = ("gpu-a", "gpu-b", "gpu-c", "gpu-d", "gpu-e")  # gpu-f's agent stopped


def true_utilization(start: float, nodes: tuple[str, ...] = REPORTING) -> float:
    """The mean utilization (percent) of `nodes`' GPUs in the minute at `start`."""
    ratios = [ratio(start, i, LOADS.get((name, i))) for name in nodes for i in range(8)]
    return 100.0 * sum(ratios) / len(ratios)


def true_used_of_held(namespace: str, now: float) -> float:
    """The used share of the GPU-hours `namespace`'s pods held over every minute written."""
    pods = {"ml": ("gpu-a", "gpu-b"), "serve": ("gpu-c",), "dev": ("gpu-d",)}[namespace]
    latest = now // MINUTE * MINUTE - MINUTE
    first = latest - (MINUTES - 1) * MINUTE
    held = [
        ratio(first + m * MINUTE, i, load)
        for (name, i), load in LOADS.items()
        if name in pods
        for m in range(MINUTES)
    ]
    return sum(held) / len(held)


def _minute(start: float, node_name: str, index: int, who: Holder | None, load: float) -> GpuMinute:
    ratio_ = ratio(start, index, load if who is not None else None)
    return gpu_minute(
        start,
        uuid(node_name, index),
        held=[(who, 60, 60)] if who is not None else [],
        utilization_mean_ratio=ratio_,
        vram_used_mean_bytes=(150 * ratio_ + 1) * GIB,
        power_mean_watts=140 + 560 * ratio_,
        temperatures_max_celsius=(("edge", 35 + 40 * ratio_), ("junction", 45 + 45 * ratio_)),
    )


def living_cluster(db: peewee.Database, now: float) -> None:
    held = _people(db)
    holders = {(h.node, i): (holder(h.pod), h.load) for h in held for i in range(h.gpus)}
    latest = now // MINUTE * MINUTE - MINUTE
    first = latest - (MINUTES - 1) * MINUTE
    reporting = [name for name in NODES if name != "gpu-f"]  # NotReady: its agent stopped
    minutes = {
        name: [
            _minute(first + m * MINUTE, name, i, *holders.get((name, i), (None, 0.0)))
            for m in range(MINUTES)
            for i in range(8)
        ]
        for name in reporting
    }
    # A node's utilization as the jobs' node info writes it: its GPUs' latest minute, averaged.
    utilization = {
        name: 100.0 * sum(g.utilization_mean_ratio or 0.0 for g in found[-8:]) / 8
        for name, found in minutes.items()
    }
    write_nodes(
        db,
        *(
            node(
                name,
                gpu_allocation=sum(1 for n, _ in holders if n == name),
                gpu_utilization=utilization.get(name),
                status="Ready" if name in utilization else "NotReady",
                k8s_status="Ready" if name in utilization else "NotReady",
            )
            for name in NODES
        ),
    )
    for name in NODES:
        judged = tuple(gpu(i, uuid=uuid(name, i), health=HEALTH.get((name, i), "healthy"))
                       for i in range(8))  # fmt: skip
        write_gpus(db, name, judged, time=now)
    for name, found in minutes.items():
        write_minutes(db, name, found, now=now)
    write_training(
        db,
        "w1",
        [
            (
                first + m * MINUTE + 30,
                m + 1,
                # A text is no figure: the API leaves it out.
                {
                    "tflops": 380.0 + m % 7,
                    "loss": 2.5 - 0.01 * m,
                    "iteration_time_ms": 950 + 10 * (m % 5),
                    "phase": "steady",
                },
            )
            for m in range(MINUTES)
        ],
    )
    find_idle(db, since=at(first), until=at(latest + MINUTE))
    today = datetime.datetime.fromtimestamp(now, datetime.UTC).date()
    days = {today, at(first).date()}
    sum_days(db, sorted(days), now=at(now))
    # As the loops that wrote the rows would say: the nodes and pods as of now, the idle GPUs
    # through the last minute.
    for figure, as_of, interval in (
        (freshness.NODES, now, 30),
        (freshness.PODS, now, 30),
        (freshness.IDLE, latest + MINUTE, 60),
    ):
        freshness.record(
            db, cluster=CLUSTER, figure=figure, as_of=at(as_of), interval_seconds=interval
        )


# What the nodes' agents judged of their GPUs (the rest: healthy).
HEALTH = {("gpu-a", 3): "unhealthy: ecc_uncorrectable", ("gpu-a", 5): "degraded: throttle_thermal"}


def agents_only(db: peewee.Database, now: float) -> None:
    """A GPU host's agent and `lens jobs` without a cluster: node gpu-a's 8 GPUs read for
    MINUTES minutes, none held (no pod is known), the idle-GPU run done; no controller and no
    node info ever ran."""
    latest = now // MINUTE * MINUTE - MINUTE
    first = latest - (MINUTES - 1) * MINUTE
    write_gpus(db, "gpu-a", tuple(gpu(i, uuid=uuid("gpu-a", i)) for i in range(8)), time=first)
    found = [
        _minute(first + m * MINUTE, "gpu-a", i, None, 0.0) for m in range(MINUTES) for i in range(8)
    ]
    write_minutes(db, "gpu-a", found, now=now)
    find_idle(db, since=at(first), until=at(latest + MINUTE))
    freshness.record(
        db, cluster=CLUSTER, figure=freshness.IDLE, as_of=at(latest + MINUTE), interval_seconds=60
    )
