"""A workload's GPU figures per step of a time range, per node, for the API's
/v1/workloads/{uid}/metrics: from the GPU-minutes (or GPU-hours, timerange.py) its pods held,
summed per pod and minute when written (workloadsums.py), and its training performance rows.

A workload's pods are those workload_pod_references links to it (the controller links every
level of a pod's owner chain, so a top-level workload has all the pods beneath it). A figure of
a node's bucket is the mean over the GPU rows its pods held there, each weighing the seconds
held (a pod holding a GPU for 20 s of a minute weighs a third of one holding it all minute);
at hourly resolution an hour's mean stands for the seconds held in it.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import peewee

from lens.store import database, models
from lens.store.queries import workloadsums
from lens.store.queries.reading import reading
from lens.store.queries.series import Point, mean, tables
from lens.store.queries.timerange import TimeRange, bucket
from lens.store.queries.workloadsums import FIGURES


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class NodeSeries:
    """One node's points in time order, as two columns: a day at 240 s is 8,640 points a
    workload of 8 nodes, which cost more as Point objects than the query that reads them."""

    node_name: str
    timestamps: tuple[int, ...]  # each bucket's start, unix seconds
    values: tuple[float, ...]

    @property
    def points(self) -> tuple[Point, ...]:
        return tuple(
            Point(timestamp=t, value=v) for t, v in zip(self.timestamps, self.values, strict=True)
        )


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class TrainingPoint:
    """The last training_performance row stored in a bucket."""

    timestamp: int  # the row's created_at, unix seconds
    iteration: int
    tflops: float | None  # None: the row has no numeric "tflops"


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class WorkloadMetrics:
    utilization: tuple[NodeSeries, ...]  # percent
    memory: tuple[NodeSeries, ...]  # VRAM in use over the GPU's VRAM, percent
    power: tuple[NodeSeries, ...]  # watts per GPU
    training: tuple[TrainingPoint, ...]


def workload_gpus(cluster: str, uid: str) -> int | None:
    """The GPUs the workload requests (gpu_workloads.gpu_request); None: no such workload."""
    table = models.GpuWorkload
    query = table.select(table.gpu_request).where((table.cluster == cluster) & (table.uid == uid))
    found = [int(gpus) for (gpus,) in database.tuple_rows(query.tuples())]
    return found[0] if found else None


def _tflops(performance: object) -> float | None:
    """A row's "tflops" when it is a finite number (the original panicked on any other)."""
    value = performance.get("tflops") if isinstance(performance, dict) else None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _training(db: peewee.Database, *, cluster: str, uid: str, span: TimeRange) -> list[Any]:
    """The last row stored (the greatest id) in each bucket of the workload's rows in range:
    at most a point per bucket, however often it logs."""
    table = models.TrainingPerformance
    number = bucket(db, table.created_at, span)
    last = (
        table.select(peewee.fn.MAX(table.id))
        .where(
            (table.cluster == cluster)
            & (table.workload_uid == uid)
            & (table.created_at >= span.first)
            & (table.created_at < span.last)
        )
        .group_by(number)
    )
    query = (
        table.select(table.created_at, table.iteration, table.performance)
        .where(table.id.in_(last))
        .order_by(table.created_at, table.id)
        .tuples()
    )
    return [
        TrainingPoint(
            timestamp=int(created.timestamp()),
            iteration=int(iteration),
            tflops=_tflops(performance),
        )
        for created, iteration, performance in database.tuple_rows(query)
    ]


def workload_metrics(
    db: peewee.Database, *, cluster: str, uid: str, span: TimeRange
) -> WorkloadMetrics | None:
    """The workload's figures per node over `span`; None for a workload unknown. Read from
    hours once its GPUs' minutes in the range would be too many rows (a large training job's
    day: timerange.MINUTE_ROWS_AT_MOST)."""
    with reading(db):
        gpus = workload_gpus(cluster, uid)
        if gpus is None:
            return None
        t = tables(span.resolution(gpus=gpus))
        sums = workloadsums.summed(db, t=t, cluster=cluster, uid=uid, span=span)
        training = _training(db, cluster=cluster, uid=uid, span=span)
    # Per figure and node, its buckets' starts and values.
    series: dict[str, dict[str, tuple[list[int], list[float]]]] = {f: {} for f in FIGURES}
    scales = [
        (position, figure, 100.0 if figure != "power" else 1.0)
        for position, figure in enumerate(FIGURES)
    ]
    for (node, number), figures in sorted(sums.items()):
        timestamp = span.stamp(number)
        for position, figure, scale in scales:
            value = mean(figures[2 * position], figures[2 * position + 1], scale=scale)
            if value is not None:
                timestamps, values = series[figure].setdefault(node, ([], []))
                timestamps.append(timestamp)
                values.append(value)

    def per_node(figure: str) -> tuple[NodeSeries, ...]:
        return tuple(
            NodeSeries(node_name=node, timestamps=tuple(stamps), values=tuple(values))
            for node, (stamps, values) in sorted(series[figure].items())
        )

    return WorkloadMetrics(
        utilization=per_node("utilization"),
        memory=per_node("memory"),
        power=per_node("power"),
        training=tuple(training),
    )
