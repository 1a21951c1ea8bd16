"""Roll gpu_minutes and gpu_minute_holders up into gpu_hours and gpu_hour_holders.

minutes.py marks each (node, hour) whose minutes it writes in gpu_hours_pending, in the same
transaction. `roll_up`, run periodically by the jobs, recomputes each marked hour from all its
minutes and clears the mark, unless a writer marked the hour again meanwhile (its token
changed): so the current hour is rolled up now and again as its minutes arrive, and a late or
resent minute repairs its hour at the next run. Work per run is bounded by `max_hours`.

The hour's means are the means of its minutes' means weighted by their samples — the mean over
the hour's readings — over the minutes that knew the figure; maxima are the greatest minute's,
energy and seconds the minutes' sums (energy NULL when no minute knew it).
"""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import functools
import logging
from collections.abc import Sequence

import peewee

from lens.reports.storing import retention
from lens.runtime import errors
from lens.store import database, models, upserting

log = logging.getLogger(__name__)

HOUR = datetime.timedelta(hours=1)
SENSORS = ("edge", "junction", "memory", "gpu")
WEIGHTED = (
    "utilization_mean_ratio",
    "memory_activity_mean_ratio",
    "vram_used_mean_bytes",
    "power_mean_watts",
)
MAXIMA = (
    "utilization_max_ratio",
    "vram_used_max_bytes",
    "temperature_max_celsius",
    *(f"temperature_{sensor}_celsius" for sensor in SENSORS),
)
HOUR_COLUMNS = (
    "cluster",
    "node_name",
    "gpu_uuid",
    "gpu_index",
    "hour",
    "minutes",
    "samples",
    "expected_samples",
    *WEIGHTED,
    *MAXIMA,
    "energy_joules",
    "energy_minutes",
    "idle_seconds",
)
HOLDER_COLUMNS = (
    "cluster",
    "node_name",
    "gpu_uuid",
    "hour",
    "container_id",
    "namespace",
    "pod_name",
    "pod_uid",
    "container_name",
    "minutes",
    "seconds",
    "held_seconds",
    "measured_seconds",
    "used_seconds",
)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class RollupResult:
    node_hours: int  # marks rolled up
    gpu_hours: int  # gpu_hours rows written
    holder_hours: int  # gpu_hour_holders rows written
    expired: int  # marks of hours older than the minutes kept, cleared without a rollup
    complete: bool  # False when max_hours left marks for the next run


@dataclasses.dataclass(frozen=True, slots=True)
class _Mark:
    node: str
    hour: datetime.datetime
    token: int


def roll_up(
    db: peewee.Database,
    *,
    cluster: str,
    now: datetime.datetime,
    max_hours: int = 2000,
    min_age: datetime.timedelta = datetime.timedelta(0),
    keep: datetime.timedelta = retention.MINUTES_KEEP,
    nodes_per_query: int = 200,
) -> RollupResult:
    """Roll up the marked (node, hour)s of `cluster` that started `min_age` or more before
    `now`, oldest first, at most `max_hours` of them. 0 rolls up the current hour too (again at
    each run while its minutes arrive); 65 minutes would wait for hours to complete."""
    if max_hours < 1 or nodes_per_query < 1:
        raise ValueError("max_hours and nodes_per_query must be at least 1")
    try:
        return _roll_up(
            db,
            cluster=cluster,
            until=now - min_age,
            oldest=now - keep,
            max_hours=max_hours,
            nodes_per_query=nodes_per_query,
        )
    except database.DRIVER_ERRORS as exc:
        raise errors.StoreError(f"rolling up hours failed: {errors.first_line(exc)}") from exc


def _roll_up(
    db: peewee.Database,
    *,
    cluster: str,
    until: datetime.datetime,
    oldest: datetime.datetime,
    max_hours: int,
    nodes_per_query: int,
) -> RollupResult:
    marks = _read_marks(db, cluster, until=until, limit=max_hours + 1)
    complete = len(marks) <= max_hours
    marks = marks[:max_hours]
    expired = [m for m in marks if m.hour < oldest]
    if expired:
        database.idempotent_transaction(db, lambda: _clear(cluster, expired), lock_first=True)
        log.info("hours too old to roll up dropped", extra={"marks": len(expired)})
    by_hour: dict[datetime.datetime, list[_Mark]] = {}
    for mark in marks:
        if mark.hour >= oldest:
            by_hour.setdefault(mark.hour, []).append(mark)
    gpu_hours = holder_hours = 0
    for hour, hour_marks in sorted(by_hour.items()):
        for start in range(0, len(hour_marks), nodes_per_query):
            chunk = hour_marks[start : start + nodes_per_query]
            gpus, holders = database.idempotent_transaction(
                db, functools.partial(_roll, cluster, hour, chunk), lock_first=True
            )
            gpu_hours, holder_hours = gpu_hours + gpus, holder_hours + holders
    return RollupResult(
        node_hours=len(marks) - len(expired),
        gpu_hours=gpu_hours,
        holder_hours=holder_hours,
        expired=len(expired),
        complete=complete,
    )


def _read_marks(
    db: peewee.Database, cluster: str, *, until: datetime.datetime, limit: int
) -> list[_Mark]:
    table = models.GpuHourPending
    query = (
        table.select(table.node_name, table.hour, table.token)
        .where((table.cluster == cluster) & (table.hour <= until))
        .order_by(table.hour, table.node_name)
        .limit(limit)
    )

    def read() -> list[_Mark]:
        return [_Mark(row.node_name, row.hour, int(row.token)) for row in query]

    return database.idempotent_transaction(db, read)


def _clear(cluster: str, marks: Sequence[_Mark]) -> None:
    """Delete the marks still holding the token read: one marked again stays."""
    table = models.GpuHourPending
    by_hour: dict[datetime.datetime, list[_Mark]] = {}
    for mark in marks:
        by_hour.setdefault(mark.hour, []).append(mark)
    for hour, hour_marks in by_hour.items():
        table.delete().where(
            (table.cluster == cluster)
            & (table.hour == hour)
            & peewee.Tuple(table.node_name, table.token).in_(
                [(m.node, m.token) for m in hour_marks]
            )
        ).execute()


def _roll(cluster: str, hour: datetime.datetime, marks: Sequence[_Mark]) -> tuple[int, int]:
    """Recompute one hour of some nodes and clear their marks, in the caller's transaction;
    (gpu_hours rows, gpu_hour_holders rows) written."""
    nodes = sorted({mark.node for mark in marks})
    gpu_rows = _gpu_hours(cluster, hour, nodes)
    holder_rows = _holder_hours(cluster, hour, nodes)
    written = upserting.upsert(models.GpuHour, upserting.Table(HOUR_COLUMNS, gpu_rows))
    table = models.GpuHourHolder
    table.delete().where(
        (table.cluster == cluster) & (table.hour == hour) & table.node_name.in_(nodes)
    ).execute()
    held = upserting.insert_new(table, upserting.Table(HOLDER_COLUMNS, holder_rows))
    _clear(cluster, marks)
    return written, held


def _in_hour(
    model: type[models.LensModel], cluster: str, hour: datetime.datetime, nodes: Sequence[str]
) -> peewee.Expression:
    fields = model._meta.fields
    condition: peewee.Expression = (
        (fields["cluster"] == cluster)
        & fields["node_name"].in_(list(nodes))
        & (fields["minute"] >= hour)
        & (fields["minute"] < hour + HOUR)
    )
    return condition


def _gpu_hours(
    cluster: str, hour: datetime.datetime, nodes: Sequence[str]
) -> list[tuple[object, ...]]:
    """The gpu_hours rows (HOUR_COLUMNS) of the nodes' GPUs in `hour`, from gpu_minutes."""
    m = models.GpuMinuteReport
    fields = m._meta.fields
    weighted: list[peewee.ColumnBase] = []
    for name in WEIGHTED:
        figure = fields[name]
        known = peewee.Case(None, ((figure.is_null(False), m.samples),), 0)
        weighted += [peewee.fn.SUM(figure * m.samples), peewee.fn.SUM(known)]
    query = (
        m.select(
            m.node_name,
            m.gpu_uuid,
            peewee.fn.MAX(m.gpu_index),
            peewee.fn.COUNT(m.minute),
            peewee.fn.SUM(m.samples),
            peewee.fn.SUM(m.expected_samples),
            *weighted,
            *(peewee.fn.MAX(fields[name]) for name in MAXIMA),
            peewee.fn.SUM(m.energy_joules),
            peewee.fn.COUNT(m.energy_joules),
            peewee.fn.SUM(m.idle_seconds),
        )
        .where(_in_hour(m, cluster, hour, nodes))
        .group_by(m.node_name, m.gpu_uuid)
        .tuples()
    )
    return [_gpu_hour(cluster, hour, row) for row in database.tuple_rows(query)]


def _gpu_hour(cluster: str, hour: datetime.datetime, row: Sequence[object]) -> tuple[object, ...]:
    node, uuid, index, minutes, samples, expected = row[:6]
    sums = row[6 : 6 + 2 * len(WEIGHTED)]
    means = [_ratio(sums[i], sums[i + 1]) for i in range(0, len(sums), 2)]
    rest = row[6 + 2 * len(WEIGHTED) :]
    maxima: list[float | int | None] = [_number(value) for value in rest[: len(MAXIMA)]]
    vram = MAXIMA.index("vram_used_max_bytes")
    maxima[vram] = _exact(rest[vram])  # a count of bytes, kept exact
    energy, energy_minutes, idle = rest[len(MAXIMA) :]
    return (
        cluster,
        node,
        uuid,
        _int(index),
        hour,
        _int(minutes),
        _int(samples),
        _int(expected),
        *means,
        *maxima,
        _number(energy),
        _int(energy_minutes),
        _number(idle) or 0.0,
    )


def _holder_hours(
    cluster: str, hour: datetime.datetime, nodes: Sequence[str]
) -> list[tuple[object, ...]]:
    """The gpu_hour_holders rows (HOLDER_COLUMNS) of the nodes' GPUs in `hour`."""
    h, m = models.GpuMinuteHolder, models.GpuMinuteReport
    utilization = m.utilization_mean_ratio
    measured = peewee.Case(None, ((utilization.is_null(False), h.seconds),), 0)
    query = (
        h.select(
            h.node_name,
            h.gpu_uuid,
            h.container_id,
            peewee.fn.MAX(h.namespace),
            peewee.fn.MAX(h.pod_name),
            peewee.fn.MAX(h.pod_uid),
            peewee.fn.MAX(h.container_name),
            peewee.fn.COUNT(h.minute),
            peewee.fn.SUM(h.seconds),
            peewee.fn.SUM(h.held_seconds),
            peewee.fn.SUM(measured),
            peewee.fn.SUM(h.seconds * utilization),  # SUM leaves the unknown ones out
        )
        .join(
            m,
            peewee.JOIN.LEFT_OUTER,
            on=(
                (m.cluster == h.cluster)
                & (m.node_name == h.node_name)
                & (m.minute == h.minute)
                & (m.gpu_uuid == h.gpu_uuid)
            ),
        )
        .where(_in_hour(h, cluster, hour, nodes))
        .group_by(h.node_name, h.gpu_uuid, h.container_id)
        .tuples()
    )
    return [_holder_hour(cluster, hour, row) for row in database.tuple_rows(query)]


def _holder_hour(
    cluster: str, hour: datetime.datetime, row: Sequence[object]
) -> tuple[object, ...]:
    node, uuid, cid, namespace, pod, uid, name, count, seconds, held, measured, used = row
    return (
        *(cluster, node, uuid, hour, cid, namespace, pod, uid, name, _int(count)),
        *(_number(seconds), _number(held), _number(measured) or 0.0, _number(used) or 0.0),
    )


def _ratio(total: object, weight: object) -> float | None:
    """A weighted sum over its weight; None when nothing weighed."""
    divisor = _number(weight)
    if not divisor:
        return None
    dividend = _number(total)
    return None if dividend is None else dividend / divisor


def _number(value: object) -> float | None:
    """A SUM's or MAX's value as a float (MariaDB sums integers as decimals)."""
    if value is None:
        return None
    if isinstance(value, int | float | decimal.Decimal):
        return float(value)
    raise TypeError(f"not a number from SQL: {value!r}")


def _exact(value: object) -> int | None:
    """An integer column's MAX, exact (no detour through a float)."""
    if value is None:
        return None
    if isinstance(value, int | decimal.Decimal):
        return int(value)
    raise TypeError(f"not an integer from SQL: {value!r}")


def _int(value: object) -> int:
    number = _number(value)
    return 0 if number is None else round(number)
