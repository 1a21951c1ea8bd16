"""Idle intervals in SQL: the held GPU-minutes they are found in (gpu_minute_holders joined
with gpu_minutes), the open intervals a new leader carries on, and gpu_idle_intervals
written."""

from __future__ import annotations

import datetime
from collections.abc import Sequence

import peewee

from lens.store import database, models, upserting
from lens.usage import tables
from lens.usage.idle import MINUTE, HeldMinute, Holding, IdleInterval

MAX_LOOKBACK = datetime.timedelta(days=1)


def held_minutes(
    cluster: str, *, since: datetime.datetime, until: datetime.datetime
) -> list[HeldMinute]:
    """Each GPU-minute in [since, until) once per pod that held the GPU in it, in time order;
    containers outside any pod are left out."""
    held, gpu = tables.HELD, tables.GPU
    query = (
        tables.held_with_gpu_minute(
            held.select(
                held.node_name,
                held.gpu_uuid,
                held.pod_uid,
                held.namespace,
                held.pod_name,
                held.minute,
                gpu.utilization_mean_ratio,
            )
        )
        .where(
            (held.cluster == cluster)
            & (held.minute >= since)
            & (held.minute < until)
            # Implied by the join; said for the GPU-minutes too, so that only the window's are
            # read (without it PostgreSQL may scan every GPU-minute of the day for each).
            & (gpu.minute >= since)
            & (gpu.minute < until)
            & (held.pod_uid != "")
            & (held.held_seconds > 0)
        )
        .order_by(held.minute, held.node_name, held.gpu_uuid, held.pod_uid)
        .tuples()
    )
    found: list[HeldMinute] = []
    seen: set[tuple[Holding, datetime.datetime]] = set()
    for node, uuid, pod_uid, namespace, pod_name, minute, utilization in database.tuple_rows(query):
        holding = Holding(
            node=node, gpu_uuid=uuid, pod_uid=pod_uid, namespace=namespace, pod_name=pod_name
        )
        if (holding, minute) not in seen:  # two containers of one pod: one pod-minute
            seen.add((holding, minute))
            found.append(HeldMinute(holding=holding, minute=minute, utilization=utilization))
    return found


def open_intervals(cluster: str) -> list[IdleInterval]:
    table = models.GpuIdleInterval
    rows = table.select().where((table.cluster == cluster) & (table.open == True))  # noqa: E712
    return [
        IdleInterval(
            holding=Holding(
                node=row.node_name,
                gpu_uuid=row.gpu_uuid,
                pod_uid=row.pod_uid,
                namespace=row.namespace,
                pod_name=row.pod_name,
            ),
            start=row.started_at,
            end=row.ended_at,
            minutes=row.minutes,
            utilization_sum=row.utilization_mean_ratio * row.minutes,
            open=True,
        )
        for row in rows
    ]


def save(cluster: str, intervals: Sequence[IdleInterval], workloads: dict[str, str]) -> int:
    """Write `intervals` (a new one inserted, a known one updated by its start)."""
    now = datetime.datetime.now(datetime.UTC)
    rows = [
        {
            "cluster": cluster,
            "node_name": i.holding.node,
            "gpu_uuid": i.holding.gpu_uuid,
            "pod_uid": i.holding.pod_uid,
            "namespace": i.holding.namespace,
            "pod_name": i.holding.pod_name,
            "workload_uid": workloads.get(i.holding.pod_uid, ""),
            "started_at": i.start,
            "ended_at": i.end,
            "minutes": i.minutes,
            "utilization_mean_ratio": i.utilization_mean,
            "open": i.open,
            "updated_at": now,
        }
        for i in intervals
    ]
    return upserting.upsert(models.GpuIdleInterval, rows) if rows else 0


def minute_floor(moment: datetime.datetime) -> datetime.datetime:
    return moment.replace(second=0, microsecond=0)


def first_held_minute(
    cluster: str, *, since: datetime.datetime, until: datetime.datetime
) -> datetime.datetime | None:
    """The first minute in [since, until) a pod held a GPU in (None: none): a look back over
    minutes no agent reported yet (a new cluster) starts there, not a window before it."""
    held = tables.HELD
    found = (
        held.select(peewee.fn.MIN(held.minute))
        .where(
            (held.cluster == cluster)
            & (held.minute >= since)
            & (held.minute < until)
            & (held.pod_uid != "")
        )
        .scalar()
    )
    if found is None:
        return None
    moment: datetime.datetime = held.minute.python_value(found)
    return moment


def lookback_start(
    until: datetime.datetime, window_minutes: int, resumed: Sequence[IdleInterval]
) -> datetime.datetime:
    """Where a tracker starting afresh reads from: a window back, or the earliest end of an
    open interval it carries on, whichever is earlier — but never more than MAX_LOOKBACK back
    (an interval left open longer ago ends where it was last seen)."""
    start = min([until - window_minutes * MINUTE, *(i.end for i in resumed)])
    return max(start, until - MAX_LOOKBACK)
