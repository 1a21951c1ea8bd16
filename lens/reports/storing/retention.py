"""Retention of the node device report tables: minutes are kept 8 days, hours 400 by default.

On PostgreSQL the minute tables' day partitions wholly older than the cutoff are dropped
(partitions.py). What else is older than the cutoff (in the partition the cutoff falls in; on
SQLite and MariaDB, all of it) is deleted in bounded batches, each its own short transaction, as
lens/store/retention.py does for the append-only tables, but keyed on the rows' minute or hour
and without ids, which these tables lack. The jobs role runs `trim` periodically.
"""

from __future__ import annotations

import dataclasses
import datetime
import logging

import peewee

from lens.reports.storing import partitions
from lens.runtime import errors
from lens.store import database, models
from lens.store.fields import UtcDateTimeField

log = logging.getLogger(__name__)

MINUTES_KEEP = datetime.timedelta(days=8)
HOURS_KEEP = datetime.timedelta(days=400)

MINUTE_MODELS: tuple[type[models.LensModel], ...] = (
    models.GpuMinuteReport,
    models.GpuMinuteHolder,
    models.RdmaPortMinute,
    models.GpuMinutePod,  # sums of the minutes above: gone with them
    models.GpuHourPending,  # marks of hours whose minutes are gone cannot be rolled up
)
HOUR_MODELS: tuple[type[models.LensModel], ...] = (models.GpuHour, models.GpuHourHolder)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class TableRetention:
    """What one run did to one table."""

    table: str
    deleted: int  # rows deleted in batches (not counting those of dropped partitions)
    batches: int
    partitions_dropped: tuple[str, ...]
    complete: bool  # False when max_batches stopped the run before the backlog was gone


def trim(
    db: peewee.Database,
    *,
    now: datetime.datetime,
    minutes_keep: datetime.timedelta = MINUTES_KEEP,
    hours_keep: datetime.timedelta = HOURS_KEEP,
    batch_size: int = 10_000,
    max_batches: int | None = 100,
) -> tuple[TableRetention, ...]:
    """Trim every report table: minutes older than `minutes_keep`, hours than `hours_keep`."""
    cutoffs = [(model, now - minutes_keep) for model in MINUTE_MODELS]
    cutoffs += [(model, now - hours_keep) for model in HOUR_MODELS]
    return tuple(
        _trim(db, model, before=before, batch_size=batch_size, max_batches=max_batches)
        for model, before in cutoffs
    )


def trim_table(
    model: type[models.LensModel],
    *,
    before: datetime.datetime,
    batch_size: int = 10_000,
    max_batches: int | None = None,
) -> TableRetention:
    """Delete the rows of `model` whose minute (or hour) starts before `before`."""
    return _trim(
        model._meta.database,
        model,
        before=before,
        batch_size=batch_size,
        max_batches=max_batches,
    )


def _trim(
    db: peewee.Database,
    model: type[models.LensModel],
    *,
    before: datetime.datetime,
    batch_size: int,
    max_batches: int | None,
) -> TableRetention:
    if batch_size < 1:
        raise ValueError("batch_size must be at least 1")
    table = model._meta.table_name
    column = model._meta.fields["minute" if "minute" in model._meta.fields else "hour"]
    dropped: list[str] = []
    relations = [table]
    complete = True
    if model in models.DAY_PARTITIONED and partitions.is_partitioned(db):
        relations = []
        for partition in partitions.list_partitions(db, table):
            if _start(partition.day + partitions.DAY) <= before:
                if _dropped(db, partition):
                    dropped.append(partition.name)
                else:
                    complete = False
            elif _start(partition.day) < before:
                relations.append(partition.name)
    deleted = batches = 0
    for relation in relations:
        left = None if max_batches is None else max_batches - batches
        done, runs, finished = _delete_batches(db, relation, column, before, batch_size, left)
        deleted, batches = deleted + done, batches + runs
        complete = complete and finished
    return TableRetention(
        table=table,
        deleted=deleted,
        batches=batches,
        partitions_dropped=tuple(dropped),
        complete=complete,
    )


def _dropped(db: peewee.Database, partition: partitions.Partition) -> bool:
    """Drop a partition; False when it could not be now (its lock timed out): the next run will."""
    try:
        partitions.drop_partition(db, partition)
    except errors.StoreError as exc:
        log.warning(
            "partition not dropped; left for the next run",
            extra={"partition": partition.name, "error": str(exc)},
        )
        return False
    return True


def _start(day: datetime.date) -> datetime.datetime:
    return datetime.datetime.combine(day, datetime.time(), tzinfo=datetime.UTC)


def _delete_batches(
    db: peewee.Database,
    relation: str,
    column: peewee.Field[datetime.datetime],
    before: datetime.datetime,
    batch_size: int,
    max_batches: int | None,
) -> tuple[int, int, bool]:
    """(rows deleted, batches, whether all expired rows are gone) for one table or partition."""
    sql = _delete_sql(database.engine_of(db), relation, column.column_name)
    if not isinstance(column, UtcDateTimeField):
        raise TypeError(f"{relation}.{column.name} is not a time")
    cutoff = column.db_value(before)
    deleted = batches = 0
    try:
        with database.session(db):
            while max_batches is None or batches < max_batches:
                with db.atomic():
                    count = int(database.execute(db, sql, (cutoff, batch_size)).rowcount)
                deleted += count
                batches += 1 if count else 0
                if count < batch_size:
                    return deleted, batches, True
    except database.DRIVER_ERRORS as exc:
        raise errors.StoreError(
            f"retention of {relation} failed: {errors.first_line(exc)}"
        ) from exc
    return deleted, batches, False


def _delete_sql(engine: str, relation: str, column: str) -> str:
    """One batch's DELETE: at most the LIMIT's rows older than the cutoff. Without ids, each
    engine names its rows its own way: SQLite's rowid, PostgreSQL's ctid (within one table or
    partition), MariaDB's DELETE ... LIMIT."""
    if engine == "mysql":
        return f"DELETE FROM `{relation}` WHERE `{column}` < %s LIMIT %s"
    if engine == "postgresql":
        return (
            f'DELETE FROM "{relation}" WHERE ctid = ANY(ARRAY('
            f'SELECT ctid FROM "{relation}" WHERE "{column}" < %s LIMIT %s))'
        )
    return (
        f'DELETE FROM "{relation}" WHERE rowid IN ('
        f'SELECT rowid FROM "{relation}" WHERE "{column}" < ? LIMIT ?)'
    )
