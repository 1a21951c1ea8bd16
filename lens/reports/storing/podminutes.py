"""gpu_minute_pods: each pod's sums per node and minute, made in SQL from the holder rows, the
GPU-minutes they held and those GPUs' gpu_devices rows, exactly as the workload series summed
them per request before (store/queries/podminutes.py reads them).

minutes.py sends `statements` in the same transaction as the minutes they sum, after them:
a (node, minute) is deleted and summed again whole from what is stored, so a minute written
again, in part or whole, is never counted twice. `rebuild` sums a whole range again (the
benchmark's data, written without the writer).
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Sequence
from typing import Any

import peewee

from lens.reports.storing import partitions
from lens.store import database, models

Statement = tuple[str, list[object]]

_INSTANT = datetime.timedelta(microseconds=1)

_COLUMNS = (
    "cluster",
    "node_name",
    "minute",
    "pod_uid",
    "held_seconds",
    "utilization_seconds",
    "utilization_known_seconds",
    "vram_ratio_seconds",
    "vram_known_seconds",
    "vram_bytes",
    "power_joules",
    "power_known_seconds",
)


def _known(figure: peewee.ColumnBase, weight: peewee.ColumnBase) -> peewee.ColumnBase:
    return peewee.fn.SUM(peewee.Case(None, ((figure.is_null(False), weight),), 0))


def _times(figure: peewee.ColumnBase, weight: peewee.ColumnBase) -> peewee.ColumnBase:
    # COALESCE: a pod whose GPUs never knew the figure sums to 0 over 0 seconds known.
    return peewee.fn.COALESCE(peewee.fn.SUM(figure * weight), 0.0)


def _one_vram_size(used: peewee.Field[Any], size: peewee.Field[Any]) -> peewee.ColumnBase:
    """The VRAM size of every GPU whose use is known, when they all have one and the same;
    else NULL (none known, a size unknown or 0, sizes that differ)."""
    sized = peewee.Case(None, ((used.is_null(False), peewee.fn.NULLIF(size, 0)),))
    same = (peewee.fn.COUNT(sized) == peewee.fn.COUNT(used)) & (
        peewee.fn.MIN(sized) == peewee.fn.MAX(sized)
    )
    return peewee.Case(None, ((same, peewee.fn.MIN(sized)),))


def summed(where: peewee.ColumnBase) -> peewee.ModelSelect[Any]:
    """The gpu_minute_pods rows (_COLUMNS) of the holder rows `where` selects (on holders and
    GPU-minutes both, so that each side is read by its unique key's prefix)."""
    holder, gpu, device = models.GpuMinuteHolder, models.GpuMinuteReport, models.GpuDevice
    weight = holder.held_seconds
    vram = gpu.vram_used_mean_bytes / peewee.fn.NULLIF(device.vram_bytes, 0)
    same_minute = (
        (gpu.cluster == holder.cluster)
        & (gpu.node_name == holder.node_name)
        & (gpu.minute == holder.minute)
        & (gpu.gpu_uuid == holder.gpu_uuid)
    )
    its_device = (
        (device.cluster == holder.cluster)
        & (device.node_name == holder.node_name)
        & (device.uuid == holder.gpu_uuid)
    )
    keys = (holder.cluster, holder.node_name, holder.minute, holder.pod_uid)
    return (
        holder.select(
            *keys,
            peewee.fn.SUM(weight),
            _times(gpu.utilization_mean_ratio, weight),
            _known(gpu.utilization_mean_ratio, weight),
            _times(vram, weight),
            _known(gpu.vram_used_mean_bytes, weight),
            _one_vram_size(gpu.vram_used_mean_bytes, device.vram_bytes),
            _times(gpu.power_mean_watts, weight),
            _known(gpu.power_mean_watts, weight),
        )
        .join(gpu, on=same_minute)
        .join(device, peewee.JOIN.LEFT_OUTER, on=its_device)
        .where(where)
        .group_by(*keys)
    )


def _insert(where: peewee.ColumnBase) -> peewee.ModelInsert:
    table = models.GpuMinutePod
    fields = [table._meta.fields[name] for name in _COLUMNS]
    key = models.natural_key(table)
    update = [f for f in fields if f.name not in {k.name for k in key}]
    query = table.insert_from(summed(where), fields)
    if database.engine_of(table._meta.database) == "mysql":
        return query.on_conflict(preserve=update)
    return query.on_conflict(conflict_target=list(key), preserve=update)


def _among(
    model: type[models.LensModel],
    *,
    cluster: str,
    nodes: Sequence[str],
    minutes: Sequence[datetime.datetime],
) -> peewee.ColumnBase:
    fields = model._meta.fields
    where: peewee.ColumnBase = (
        (fields["cluster"] == cluster)
        & fields["node_name"].in_(list(nodes))
        & fields["minute"].in_(list(minutes))
    )
    return where


def statements(
    *, cluster: str, written: Iterable[tuple[str, Sequence[datetime.datetime]]]
) -> list[Statement]:
    """The statements summing again the (node, minutes) `written` (those of GPU-minutes just
    written): a DELETE and an INSERT per set of minutes, nodes with the same minutes together
    (a group commit's nodes mostly wrote the same minute)."""
    by_minutes: dict[tuple[datetime.datetime, ...], list[str]] = {}
    for node, minutes in written:
        if minutes:
            by_minutes.setdefault(tuple(sorted(set(minutes))), []).append(node)
    found: list[Statement] = []
    pods, holder, gpu = models.GpuMinutePod, models.GpuMinuteHolder, models.GpuMinuteReport
    for minutes, nodes in by_minutes.items():
        delete = pods.delete().where(_among(pods, cluster=cluster, nodes=nodes, minutes=minutes))
        where = _among(holder, cluster=cluster, nodes=nodes, minutes=minutes) & _among(
            gpu, cluster=cluster, nodes=nodes, minutes=minutes
        )
        for query in (delete, _insert(where)):
            sql, params = query.sql()
            found.append((sql, list(params)))
    if found and database.engine_of(pods._meta.database) == "postgresql":
        return [found[0], _NESTED_LOOPS_OFF, *found[1:], _NESTED_LOOPS_BACK]
    return found


# A day partition just made has no statistics until autovacuum's first ANALYZE: PostgreSQL then
# takes each side of the join for a row or so, and joins them in a nested loop that reads the
# whole minute once per holder row (2.4 s for 2,000 of them). Any other join reads the minute
# once; with statistics, its choice among them is sound. Off for the INSERTs only, in this
# transaction only, then back to what it was.
_NESTED_LOOPS_OFF: Statement = (
    "SELECT set_config('lens.enable_nestloop', current_setting('enable_nestloop'), true),"
    " set_config('enable_nestloop', 'off', true)",
    [],
)
_NESTED_LOOPS_BACK: Statement = (
    "SELECT set_config('enable_nestloop', current_setting('lens.enable_nestloop'), true)",
    [],
)


def rebuild(
    db: peewee.Database, *, cluster: str, first: datetime.datetime, last: datetime.datetime
) -> int:
    """Sum again every minute of `cluster` in [first, last), in one transaction (their day
    partitions made first, as the writer does); the rows written."""
    pods, holder, gpu = models.GpuMinutePod, models.GpuMinuteHolder, models.GpuMinuteReport
    start, end = partitions.day_of(first), partitions.day_of(last - _INSTANT)
    partitions.ensure_days(db, (start + partitions.DAY * d for d in range((end - start).days + 1)))

    def within(model: type[models.LensModel]) -> peewee.ColumnBase:
        fields = model._meta.fields
        where: peewee.ColumnBase = (
            (fields["cluster"] == cluster) & (fields["minute"] >= first) & (fields["minute"] < last)
        )
        return where

    with database.session(db), db.atomic():
        pods.delete().where(within(pods)).execute()
        sql, params = _insert(within(holder) & within(gpu)).sql()
        return int(database.execute(db, sql, params).rowcount)
