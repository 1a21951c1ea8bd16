"""Read the idle GPU intervals (gpu_idle_intervals, written by the jobs' idle-gpus loop,
lens/usage/idlestore.py) for the API's /v1/idle: those open now, or every one overlapping a
time range with its idle minutes inside it, and the totals per namespace.

An interval is a run of whole consecutive minutes, so its minutes inside a range are its
overlap with the range: the totals add those of the intervals inside the range in SQL and work
out the few crossing its bounds here, whatever the range's size.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections import defaultdict
from typing import Any

import peewee

from lens.store import database, models
from lens.store.queries.gpus import Workload
from lens.store.queries.reading import Page, reading

# The columns a list may be sorted by; the interval's key breaks ties.
SORTABLE = ("since", "minutes", "namespace", "node")

MINUTE = 60.0


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class TimeRange:
    """[start, end)."""

    start: datetime.datetime
    end: datetime.datetime

    def __post_init__(self) -> None:
        if self.end <= self.start:
            raise ValueError("a time range ends after it starts")

    def minutes_of(self, started: datetime.datetime, ended: datetime.datetime) -> float:
        """How many minutes of [started, ended) lie inside the range."""
        overlap = (min(ended, self.end) - max(started, self.start)).total_seconds()
        return max(0.0, overlap) / MINUTE


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class IdleFilter:
    namespace: str = ""  # "": every namespace; else this one exactly
    node: str = ""  # "": every node; else this one exactly


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class IdleSort:
    column: str = "since"
    descending: bool = False

    def __post_init__(self) -> None:
        if self.column not in SORTABLE:
            raise ValueError(f"idle intervals are not sorted by {self.column!r}")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class IdleRecord:
    """A GPU held by a pod and idle over [started_at, ended_at)."""

    node_name: str
    gpu_uuid: str
    gpu_id: int | None  # None: the GPU is not in the inventory
    gpu_model: str | None
    namespace: str
    pod_name: str
    pod_uid: str
    workload: Workload | None  # the pod's top-level workload; None: none known
    started_at: datetime.datetime
    ended_at: datetime.datetime  # the end of the last idle minute seen
    minutes: int
    utilization_mean_ratio: float
    open: bool  # may still grow
    minutes_in_range: float | None  # None when no range was asked


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class NamespaceIdle:
    namespace: str
    intervals: int
    idle_minutes: float  # inside the range, or so far for the open ones


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class IdlePage:
    rows: tuple[IdleRecord, ...]
    total: int  # intervals matching, on every page
    namespaces: tuple[NamespaceIdle, ...]  # over every interval matching, by namespace


def _where(cluster: str, wanted: IdleFilter, during: TimeRange | None) -> peewee.ColumnBase:
    table = models.GpuIdleInterval
    condition: peewee.ColumnBase = table.cluster == cluster
    if during is None:
        condition &= table.open == True  # noqa: E712  # peewee builds SQL from the comparison
    else:
        condition &= (table.started_at < during.end) & (table.ended_at > during.start)
    if wanted.namespace:
        condition &= table.namespace == wanted.namespace
    if wanted.node:
        condition &= table.node_name == wanted.node
    return condition


def _ordering(sort: IdleSort) -> list[Any]:
    table = models.GpuIdleInterval
    column = {
        "since": table.started_at,
        "minutes": table.minutes,
        "namespace": table.namespace,
        "node": table.node_name,
    }[sort.column]
    key = [table.node_name, table.gpu_uuid, table.pod_uid, table.started_at]
    return [column.desc() if sort.descending else column.asc(), *(c.asc() for c in key)]


def _page_query(where: peewee.ColumnBase, sort: IdleSort, page: Page) -> Any:
    table, device, workload = models.GpuIdleInterval, models.GpuDevice, models.GpuWorkload
    return (
        table.select(
            table.node_name,
            table.gpu_uuid,
            device.gpu_id,
            device.gpu_model,
            table.namespace,
            table.pod_name,
            table.pod_uid,
            table.workload_uid,
            workload.kind,
            workload.name,
            workload.namespace,
            table.started_at,
            table.ended_at,
            table.minutes,
            table.utilization_mean_ratio,
            table.open,
        )
        .join_from(
            table,
            device,
            peewee.JOIN.LEFT_OUTER,
            on=(device.cluster == table.cluster)
            & (device.node_name == table.node_name)
            & (device.uuid == table.gpu_uuid),
        )
        .join_from(
            table,
            workload,
            peewee.JOIN.LEFT_OUTER,
            on=(workload.cluster == table.cluster) & (workload.uid == table.workload_uid),
        )
        .where(where)
        .order_by(*_ordering(sort))
        .offset(page.offset)
        .limit(page.limit)
        .tuples()
    )


def _record(values: tuple[Any, ...], during: TimeRange | None) -> IdleRecord:
    (node, uuid, gpu_id, model, namespace, pod_name, pod_uid, workload_uid) = values[:8]
    (kind, name, workload_namespace, started, ended, minutes, utilization, is_open) = values[8:]
    workload = None
    if workload_uid and kind is not None:
        workload = Workload(
            uid=str(workload_uid), kind=str(kind), name=str(name), namespace=str(workload_namespace)
        )
    return IdleRecord(
        node_name=str(node),
        gpu_uuid=str(uuid),
        gpu_id=None if gpu_id is None else int(gpu_id),
        gpu_model=None if model is None else str(model),
        namespace=str(namespace),
        pod_name=str(pod_name),
        pod_uid=str(pod_uid),
        workload=workload,
        started_at=started,
        ended_at=ended,
        minutes=int(minutes),
        utilization_mean_ratio=float(utilization),
        open=bool(is_open),
        minutes_in_range=None if during is None else during.minutes_of(started, ended),
    )


def _namespaces(where: peewee.ColumnBase, during: TimeRange | None) -> tuple[NamespaceIdle, ...]:
    """Intervals and idle minutes per namespace: those wholly inside the range (or all, with
    none) summed in SQL, those crossing its bounds here."""
    table = models.GpuIdleInterval
    inside = where
    if during is not None:
        inside &= (table.started_at >= during.start) & (table.ended_at <= during.end)
    counts: dict[str, int] = defaultdict(int)
    minutes: dict[str, float] = defaultdict(float)
    summed = (
        table.select(table.namespace, peewee.fn.COUNT(table.id), peewee.fn.SUM(table.minutes))
        .where(inside)
        .group_by(table.namespace)
        .tuples()
    )
    for namespace, count, total in database.tuple_rows(summed):
        counts[namespace] += int(count)
        minutes[namespace] += float(total or 0)
    if during is not None:
        crossing = (
            table.select(table.namespace, table.started_at, table.ended_at)
            .where(where & ((table.started_at < during.start) | (table.ended_at > during.end)))
            .tuples()
        )
        for namespace, started, ended in database.tuple_rows(crossing):
            counts[namespace] += 1
            minutes[namespace] += during.minutes_of(started, ended)
    return tuple(
        NamespaceIdle(
            namespace=namespace, intervals=counts[namespace], idle_minutes=minutes[namespace]
        )
        for namespace in sorted(counts)
    )


def list_idle(
    db: peewee.Database,
    *,
    cluster: str,
    wanted: IdleFilter,
    sort: IdleSort,
    page: Page,
    during: TimeRange | None = None,
) -> IdlePage:
    """The page of `cluster`'s idle intervals open now (`during` None) or overlapping
    `during`, in `sort` order, their total and the totals per namespace."""
    where = _where(cluster, wanted, during)
    with reading(db):
        rows = tuple(
            _record(values, during)
            for values in database.tuple_rows(_page_query(where, sort, page))
        )
        total = models.GpuIdleInterval.select().where(where).count()
        namespaces = _namespaces(where, during)
    return IdlePage(rows=rows, total=total, namespaces=namespaces)
