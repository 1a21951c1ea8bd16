"""GPU figures per step of a time range, from the device report tables (gpu_minutes or, for long
ranges and large steps, gpu_hours; timerange.py chooses): a node's GPUs for the API's
/v1/nodes/{name}/gpuMetrics, the cluster's for /v1/nodes/gpuUtilizationHistory.

Every figure of a bucket is aggregated in SQL (one row per bucket, or per GPU and bucket), and
a bucket without data has no point, never a made-up 0:

* utilization: the mean of the GPUs' utilization over the bucket's GPU-minutes whose
  utilization is known, each GPU-minute weighing the same, in percent (read from gpu_hours, an
  hour's mean weighs the minutes reported in it, a minute of unknown utilization among them);
* VRAM utilization: the same mean of VRAM in use over the GPU's VRAM (gpu_devices.vram_bytes,
  from the agents' inventory), in percent;
* allocation: a node's, see `allocation_percent`; the cluster's, the seconds pods held GPUs over
  the GPU-seconds the cluster had (capacity.py) in the part of the bucket its minutes cover —
  as the allocation now counts it, a lost node's GPUs kept in the cluster.
"""

from __future__ import annotations

import dataclasses
import datetime
import decimal
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

import peewee

from lens.store import database, models
from lens.store.queries import capacity
from lens.store.queries.reading import reading
from lens.store.queries.timerange import Resolution, TimeRange, bucket

MINUTE_SECONDS = 60.0


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Point:
    timestamp: int  # the bucket's start, unix seconds
    value: float


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class GpuSeries:
    gpu_index: int  # the index the node gives the GPU
    points: tuple[Point, ...]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class NodeMetrics:
    utilization: tuple[GpuSeries, ...]  # percent, one series per GPU index
    allocation: tuple[Point, ...]  # percent


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ClusterHistory:
    allocation: tuple[Point, ...]  # percent
    utilization: tuple[Point, ...]  # percent
    vram: tuple[Point, ...]  # percent


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Tables:
    """The report tables of one resolution: a GPU's rows, its holders' rows, their time column
    and what one GPU row weighs in GPU-minutes."""

    gpu: type[models.LensModel]
    holder: type[models.LensModel]
    at: str  # the time column of both: "minute" or "hour"

    def gpu_field(self, name: str) -> peewee.Field[Any]:
        field: peewee.Field[Any] = self.gpu._meta.fields[name]
        return field

    def holder_field(self, name: str) -> peewee.Field[Any]:
        field: peewee.Field[Any] = self.holder._meta.fields[name]
        return field

    @property
    def weight(self) -> peewee.ColumnBase:
        """GPU-minutes in a GPU row: 1 for a minute, its minutes reported for an hour."""
        if self.at == "minute":
            return peewee.Value(1)
        return self.gpu_field("minutes")

    def within(self, model: type[models.LensModel], cluster: str, span: TimeRange) -> Any:
        """`model`'s rows of `cluster` whose minute (or hour) starts in the range."""
        fields = model._meta.fields
        time = fields[self.at]
        return (fields["cluster"] == cluster) & (time >= span.first) & (time < span.last)


def tables(resolution: Resolution) -> Tables:
    if resolution is Resolution.MINUTES:
        return Tables(gpu=models.GpuMinuteReport, holder=models.GpuMinuteHolder, at="minute")
    return Tables(gpu=models.GpuHour, holder=models.GpuHourHolder, at="hour")


def weighted(figure: peewee.ColumnBase, weight: peewee.ColumnBase) -> list[peewee.ColumnBase]:
    """SUM(figure x weight) and SUM(weight where the figure is known): their quotient is the
    weighted mean of the known figures (SUM leaves NULLs out)."""
    known = peewee.Case(None, ((figure.is_null(False), weight),), 0)
    return [peewee.fn.SUM(figure * weight), peewee.fn.SUM(known)]


Number = float | int | decimal.Decimal  # what SUM gives back, by engine


def mean(total: Number | None, weight: Number | None, *, scale: float = 1.0) -> float | None:
    """A weighted sum over its weight (None when nothing weighed), times `scale`."""
    if weight is None or total is None or weight <= 0:
        return None
    return scale * float(total) / float(weight)


def _points(span: TimeRange, values: dict[int, float | None]) -> tuple[Point, ...]:
    return tuple(
        Point(timestamp=span.stamp(b), value=v) for b, v in sorted(values.items()) if v is not None
    )


def held_seconds(
    db: peewee.Database, *, t: Tables, cluster: str, span: TimeRange, node_name: str | None = None
) -> dict[int, float]:
    """Per bucket, the seconds pods held GPUs: their holders' shares, a share of a GPU held by
    several at once split among them (docs/reports.md), so no GPU counts over its time."""
    holder = t.holder
    number = bucket(db, t.holder_field(t.at), span)
    where = t.within(holder, cluster, span) & (t.holder_field("pod_uid") != "")
    if node_name is not None:
        where &= t.holder_field("node_name") == node_name
    query = (
        holder.select(number, peewee.fn.SUM(t.holder_field("seconds")))
        .where(where)
        .group_by(number)
        .tuples()
    )
    return {int(b): float(s or 0.0) for b, s in database.tuple_rows(query)}


def allocation_percent(held: float, gpu_minutes: float) -> float | None:
    """A bucket's allocation: the seconds pods held the GPUs reported in it over those GPUs'
    seconds (60 a GPU-minute), in percent. A GPU-minute held by a pod counts as allocated for
    the seconds the pod held it, so a pod starting 40 s into a minute adds 20 s; a GPU no agent
    reported (its node down) is in neither figure. None: no GPU-minute in the bucket."""
    if gpu_minutes <= 0:
        return None
    return 100.0 * held / (MINUTE_SECONDS * gpu_minutes)


def _gpu_buckets(
    db: peewee.Database, *, t: Tables, cluster: str, span: TimeRange, node_name: str
) -> list[tuple[Any, ...]]:
    """(gpu_index, bucket, utilization sum, its weight, GPU-minutes) of a node's GPUs."""
    number = bucket(db, t.gpu_field(t.at), span)
    index = t.gpu_field("gpu_index")
    query = (
        t.gpu.select(
            index,
            number,
            *weighted(t.gpu_field("utilization_mean_ratio"), t.weight),
            peewee.fn.SUM(t.weight),
        )
        .where(t.within(t.gpu, cluster, span) & (t.gpu_field("node_name") == node_name))
        .group_by(index, number)
        .tuples()
    )
    return list(database.tuple_rows(query))


def node_known(cluster: str, node_name: str) -> bool:
    """Whether `nodes` has the node or an agent reported GPUs of it (a node the jobs do not
    watch, with no Kubernetes API, still has its minutes)."""
    node, device = models.Node, models.GpuDevice
    listed = node.select().where((node.cluster == cluster) & (node.name == node_name))
    reported = device.select().where((device.cluster == cluster) & (device.node_name == node_name))
    return bool(listed.exists()) or bool(reported.exists())


def node_metrics(
    db: peewee.Database, *, cluster: str, node_name: str, span: TimeRange
) -> NodeMetrics | None:
    """A node's GPUs' utilization (one series per GPU index) and its allocation over `span`;
    None for a node unknown."""
    with reading(db):
        if not node_known(cluster, node_name):
            return None
        # A node's GPUs are few: its minutes are read for any range up to MINUTES_AT_MOST.
        t = tables(span.resolution())
        rows = _gpu_buckets(db, t=t, cluster=cluster, span=span, node_name=node_name)
        held = held_seconds(db, t=t, cluster=cluster, span=span, node_name=node_name)
    per_gpu: dict[int, dict[int, float | None]] = defaultdict(dict)
    gpu_minutes: dict[int, float] = defaultdict(float)
    for index, number, total, weight, minutes in rows:
        per_gpu[int(index)][int(number)] = mean(total, weight, scale=100.0)
        gpu_minutes[int(number)] += float(minutes or 0)
    allocation = {
        b: allocation_percent(held.get(b, 0.0), minutes) for b, minutes in gpu_minutes.items()
    }
    return NodeMetrics(
        utilization=tuple(
            GpuSeries(gpu_index=index, points=points)
            for index, values in sorted(per_gpu.items())
            if (points := _points(span, values))
        ),
        allocation=_points(span, allocation),
    )


def cluster_gpus(cluster: str) -> int:
    """The GPUs the agents report in the cluster now (what its minutes hold a row a minute of)."""
    device = models.GpuDevice
    return int(
        device.select().where((device.cluster == cluster) & device.deleted_at.is_null()).count()
    )


def _cluster_buckets(
    db: peewee.Database, *, t: Tables, cluster: str, span: TimeRange
) -> Iterable[tuple[Any, ...]]:
    """(bucket, utilization sum, its weight, VRAM ratio sum, its weight, GPU-minutes, first and
    last minute or hour of it reported)."""
    device = models.GpuDevice
    number = bucket(db, t.gpu_field(t.at), span)
    vram = t.gpu_field("vram_used_mean_bytes") / peewee.fn.NULLIF(device.vram_bytes, 0)
    query = (
        t.gpu.select(
            number,
            *weighted(t.gpu_field("utilization_mean_ratio"), t.weight),
            *weighted(vram, t.weight),
            peewee.fn.SUM(t.weight),
            peewee.fn.MIN(t.gpu_field(t.at)),
            peewee.fn.MAX(t.gpu_field(t.at)),
        )
        .join(
            device,
            peewee.JOIN.LEFT_OUTER,
            on=(device.cluster == t.gpu_field("cluster"))
            & (device.node_name == t.gpu_field("node_name"))
            & (device.uuid == t.gpu_field("gpu_uuid")),
        )
        .where(t.within(t.gpu, cluster, span))
        .group_by(number)
        .tuples()
    )
    return database.tuple_rows(query)


def _unix(stored: object) -> float:
    """A minute or hour column's value as read back (text on SQLite), in unix seconds."""
    moment: datetime.datetime = models.GpuMinuteReport.minute.python_value(stored)
    return moment.timestamp()


def _newest_end(cluster: str, span: TimeRange) -> float:
    """The end of the newest minute stored in the range (the range's end when none)."""
    gpu = models.GpuMinuteReport
    newest = (
        gpu.select(peewee.fn.MAX(gpu.minute))
        .where((gpu.cluster == cluster) & (gpu.minute >= span.first) & (gpu.minute < span.last))
        .scalar()
    )
    if newest is None:
        return float(span.end)
    return _unix(newest) + MINUTE_SECONDS


def cluster_allocation_percent(held: float, gpu_seconds: float) -> float | None:
    """The seconds pods held GPUs over the GPU-seconds the cluster had, in percent (at most
    100: a container may be attributed from its start before its GPU's first inventory);
    None when the cluster had no GPU."""
    if gpu_seconds <= 0:
        return None
    return min(100.0, 100.0 * held / gpu_seconds)


def cluster_history(db: peewee.Database, *, cluster: str, span: TimeRange) -> ClusterHistory:
    """The cluster's allocation, utilization and VRAM utilization per bucket of `span`: one
    figure per bucket for the whole cluster (the original concatenated per-node VRAM series
    into one list, REFERENCE.md 15.1 #8). Read from hours once the cluster's minutes in the
    range would be too many rows (timerange.MINUTE_ROWS_AT_MOST)."""
    with reading(db):
        gpus = cluster_gpus(cluster)
        resolution = span.resolution(gpus=gpus)
        span.check_cluster_rows(gpus=gpus, resolution=resolution)
        t = tables(resolution)
        rows = list(_cluster_buckets(db, t=t, cluster=cluster, span=span))
        held = held_seconds(db, t=t, cluster=cluster, span=span)
        had = capacity.cluster_capacity(cluster)
        newest = _newest_end(cluster, span)
    unit = 60.0 if t.at == "minute" else 3600.0
    allocation, utilization, vram = {}, {}, {}
    for number, busy, busy_weight, used, used_weight, _minutes, first, last in rows:
        b = int(number)
        # The part of the bucket its rows cover: from its first minute (or hour) to the end of
        # its last, no later than the newest minute stored (an hour still filling).
        start = _unix(first)
        end = min(_unix(last) + unit, newest)
        allocation[b] = cluster_allocation_percent(held.get(b, 0.0), had.seconds(start, end))
        utilization[b] = mean(busy, busy_weight, scale=100.0)
        vram[b] = mean(used, used_weight, scale=100.0)
    return ClusterHistory(
        allocation=_points(span, allocation),
        utilization=_points(span, utilization),
        vram=_points(span, vram),
    )
