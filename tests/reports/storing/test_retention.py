"""Retention removes exactly the expired minutes and hours, in bounded batches, and on PostgreSQL
whole day partitions."""

from __future__ import annotations

import datetime

import peewee
import psycopg2
import pytest

from lens.reports.storing import hours, minutes, partitions, retention
from lens.runtime.clock import FakeClock
from lens.store import models

from .conftest import CLUSTER, T0, at, gpu_minute, holder, port_minute, write

DAY = 86_400
# Eight days and twelve hours after T0 (08:00): the minutes' cutoff falls at T0 + 12 h.
LATER = T0 + 8 * DAY + 12 * 3600


def _minutes_at(store: minutes.MinuteStore, clock: FakeClock, starts: list[int]) -> None:
    """One GPU-minute with a holder and one port-minute at each start, written when the last
    of them ends."""
    clock.advance(max(0, max(starts) + 60 - clock.time()))
    gpu = [gpu_minute(start, shares=((holder("a"), 60.0, 60.0),)) for start in starts]
    write(store, "node-1", gpu, [port_minute(start) for start in starts])


def _stored(model: type[models.LensModel]) -> list[datetime.datetime]:
    column = model._meta.fields["minute" if "minute" in model._meta.fields else "hour"]
    return sorted(row[0] for row in model.select(column).tuples())


STARTS = [T0 + 3600 * h for h in (0, 11, 12, 13, 30)] + [T0 + 12 * 3600 - 60]


def test_minutes_older_than_the_cutoff_are_deleted_and_no_others(
    db: peewee.Database, store: minutes.MinuteStore, report_clock: FakeClock
) -> None:
    _minutes_at(store, report_clock, STARTS)
    result = retention.trim(db, now=at(LATER), batch_size=2)
    by_table = {r.table: r for r in result}
    cutoff = at(LATER) - retention.MINUTES_KEEP
    kept = sorted(at(s) for s in STARTS if at(s) >= cutoff)
    minute_tables = (
        models.GpuMinuteReport,
        models.GpuMinuteHolder,
        models.RdmaPortMinute,
        models.GpuMinutePod,
    )
    for model in minute_tables:
        assert _stored(model) == kept, model.__name__
        done = by_table[model._meta.table_name]
        assert done.complete
        # On PostgreSQL the day of T0 holds T0 + 16 h and later: only the cut day's rows are
        # deleted one by one; T0's day as a whole would be dropped were it all expired.
        assert done.deleted == 3
        assert done.partitions_dropped == ()
    assert by_table["gpu_hours"].deleted == 0


def test_whole_expired_days_are_dropped_on_postgresql(
    db: peewee.Database, store: minutes.MinuteStore, report_clock: FakeClock
) -> None:
    partitions.ensure_ahead(db, today=at(T0).date())
    _minutes_at(store, report_clock, STARTS)
    two_days_later = at(LATER + 2 * DAY)
    result = retention.trim_table(
        models.GpuMinuteReport, before=two_days_later - retention.MINUTES_KEEP, batch_size=4
    )
    assert _stored(models.GpuMinuteReport) == []
    if partitions.is_partitioned(db):
        assert result.partitions_dropped == (
            partitions.partition_name("gpu_minutes", at(T0 - DAY).date()),
            partitions.partition_name("gpu_minutes", at(T0).date()),
            partitions.partition_name("gpu_minutes", at(T0 + DAY).date()),
        )
        assert result.deleted == 0
        assert [p.day for p in partitions.list_partitions(db, "gpu_minutes")] == [
            at(T0 + 2 * DAY).date()
        ]
    else:
        assert (result.partitions_dropped, result.deleted, result.batches) == ((), 6, 2)


def test_max_batches_leaves_the_rest_for_the_next_run(
    db: peewee.Database, store: minutes.MinuteStore, report_clock: FakeClock
) -> None:
    starts = [T0 + 60 * m for m in range(7)]
    _minutes_at(store, report_clock, starts)
    before = at(T0 + 6 * 60)  # the first six minutes expire; all in one day
    first = retention.trim_table(models.GpuMinuteHolder, before=before, batch_size=2, max_batches=2)
    assert (first.deleted, first.batches, first.complete) == (4, 2, False)
    second = retention.trim_table(
        models.GpuMinuteHolder, before=before, batch_size=2, max_batches=2
    )
    assert (second.deleted, second.complete) == (2, True)
    assert _stored(models.GpuMinuteHolder) == [at(T0 + 6 * 60)]


def test_hours_are_kept_four_hundred_days(
    db: peewee.Database, store: minutes.MinuteStore, report_clock: FakeClock
) -> None:
    _minutes_at(store, report_clock, [T0, T0 + 3600])
    hours.roll_up(db, cluster=CLUSTER, now=at(T0 + 7200))
    result = retention.trim(db, now=at(T0 + 400 * DAY + 1800))
    by_table = {r.table: r for r in result}
    assert by_table["gpu_hours"].deleted == 1
    assert by_table["gpu_hour_holders"].deleted == 1
    assert _stored(models.GpuHour) == [at(T0 + 3600)]
    assert _stored(models.GpuHourHolder) == [at(T0 + 3600)]
    assert _stored(models.GpuMinuteReport) == []


def test_marks_of_expired_hours_are_trimmed_with_the_minutes(
    db: peewee.Database, store: minutes.MinuteStore
) -> None:
    write(store, "node-1", [gpu_minute(T0)])
    retention.trim(db, now=at(T0 + 9 * DAY))
    assert models.GpuHourPending.select().count() == 0


def test_a_batch_takes_at_least_one_row(db: peewee.Database) -> None:
    with pytest.raises(ValueError, match="batch_size"):
        retention.trim_table(models.GpuHour, before=at(T0), batch_size=0)


def test_a_partition_whose_lock_times_out_is_left_for_the_next_run(
    migrated_database_url: str,
    db: peewee.Database,
    store: minutes.MinuteStore,
    report_clock: FakeClock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if not partitions.is_partitioned(db):
        return
    monkeypatch.setattr(partitions, "LOCK_TIMEOUT", "50ms")
    _minutes_at(store, report_clock, [T0])
    reader = psycopg2.connect(migrated_database_url)
    try:
        with reader.cursor() as cursor:  # a long read holds the table until it ends
            cursor.execute("SELECT count(*) FROM gpu_minutes")
        blocked = retention.trim_table(models.GpuMinuteReport, before=at(T0 + 2 * DAY))
        assert (blocked.partitions_dropped, blocked.complete) == ((), False)
    finally:
        reader.close()
    freed = retention.trim_table(models.GpuMinuteReport, before=at(T0 + 2 * DAY))
    assert (len(freed.partitions_dropped), freed.complete) == (1, True)
    assert _stored(models.GpuMinuteReport) == []
