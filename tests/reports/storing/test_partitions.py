"""Day partitions made ahead and on demand, once, by racing writers too; a no-op on the engines
whose tables are plain."""

from __future__ import annotations

import datetime
import threading

import peewee
import psycopg2
import pytest

from lens.reports.storing import partitions
from lens.runtime import errors
from lens.runtime.config import DatabaseConfig
from lens.store import database, models

from .conftest import T0, at

TODAY = at(T0).date()
DAY = datetime.timedelta(days=1)
TABLES = ("gpu_minutes", "gpu_minute_holders", "rdma_port_minutes", "gpu_minute_pods")


def _days(db: peewee.Database) -> dict[str, list[datetime.date]]:
    return {table: [p.day for p in partitions.list_partitions(db, table)] for table in TABLES}


def test_the_minute_tables_are_partitioned_on_postgresql_only(db: peewee.Database) -> None:
    assert partitions.tables() == TABLES
    assert partitions.is_partitioned(db) == (database.engine_of(db) == "postgresql")


def test_partitions_are_made_ahead_once(db: peewee.Database) -> None:
    made = partitions.ensure_ahead(db, today=TODAY, days_ahead=2)
    if not partitions.is_partitioned(db):
        assert made == []
        assert _days(db) == {table: [] for table in TABLES}
        return
    days = [TODAY + DAY * offset for offset in (-1, 0, 1, 2)]
    assert sorted(made) == sorted(partitions.partition_name(t, d) for t in TABLES for d in days)
    assert _days(db) == dict.fromkeys(TABLES, days)
    assert partitions.ensure_ahead(db, today=TODAY, days_ahead=2) == []
    assert partitions.ensure_ahead(db, today=TODAY + DAY) == [
        partitions.partition_name(t, TODAY + 3 * DAY) for t in TABLES
    ]


def test_ahead_must_cover_the_minutes_taken(db: peewee.Database) -> None:
    with pytest.raises(ValueError, match="days_ahead"):
        partitions.ensure_ahead(db, today=TODAY, days_ahead=0)


def test_a_partition_holds_its_day_and_no_other(db: peewee.Database) -> None:
    if not partitions.is_partitioned(db):
        return
    partitions.ensure_days(db, [TODAY])
    name = partitions.partition_name("gpu_minutes", TODAY)
    bounds = database.scalar(
        db, "SELECT pg_get_expr(relpartbound, oid) FROM pg_class WHERE relname = %s", (name,)
    )
    assert bounds == (f"FOR VALUES FROM ('{TODAY} 00:00:00') TO ('{TODAY + DAY} 00:00:00')")


def test_a_minute_outside_the_window_is_refused(db: peewee.Database) -> None:
    window = partitions.Window(keep=datetime.timedelta(days=8))
    now = at(T0)
    assert partitions.ensure_minute(db, now - datetime.timedelta(days=8), now=now, window=window)
    assert not partitions.ensure_minute(
        db, now - datetime.timedelta(days=8, seconds=60), now=now, window=window
    )
    assert partitions.ensure_minute(db, now + DAY, now=now, window=window)
    assert not partitions.ensure_minute(
        db, now + DAY + datetime.timedelta(minutes=1), now=now, window=window
    )
    if partitions.is_partitioned(db):
        assert _days(db)["gpu_minutes"] == [TODAY - 8 * DAY, TODAY + DAY]


def test_racing_writers_make_each_partition_once(
    migrated_database_url: str, db: peewee.Database
) -> None:
    if not partitions.is_partitioned(db):
        return
    days = [TODAY + DAY * offset for offset in range(5)]
    made: list[list[str]] = []
    failures: list[BaseException] = []
    start = threading.Barrier(3)

    def run() -> None:
        other = database.open_database(DatabaseConfig(url=migrated_database_url))
        try:
            start.wait()
            made.append(partitions.ensure_days(other, days))
        except BaseException as exc:  # reported below
            failures.append(exc)
        finally:
            database.close_all(other)

    threads = [threading.Thread(target=run) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert failures == []
    assert sorted(name for names in made for name in names) == sorted(
        partitions.partition_name(t, d) for t in TABLES for d in days
    )
    assert _days(db) == dict.fromkeys(TABLES, days)


def test_a_partition_made_inside_a_transaction_leaves_it_usable(db: peewee.Database) -> None:
    with db.atomic():
        partitions.ensure_days(db, [TODAY])
        database.execute(db, "SELECT 1")
    if partitions.is_partitioned(db):
        assert _days(db)["gpu_minutes"] == [TODAY]
        lock_timeout = database.scalar(db, "SELECT current_setting('lock_timeout')")
        assert lock_timeout == "0", "the partition's lock timeout ends with its statement"


def test_partitions_are_listed_by_their_day_and_dropped(db: peewee.Database) -> None:
    if not partitions.is_partitioned(db):
        assert partitions.list_partitions(db, "gpu_minutes") == []
        return
    partitions.ensure_days(db, [TODAY, TODAY - DAY])
    database.execute(
        db,
        'CREATE TABLE "gpu_minutes_archive" PARTITION OF "gpu_minutes"'
        " FOR VALUES FROM ('2000-01-01') TO ('2000-01-02')",
    )
    listed = partitions.list_partitions(db, "gpu_minutes")
    assert [p.day for p in listed] == [TODAY - DAY, TODAY], "names not ours are left alone"
    partitions.drop_partition(db, listed[0])
    assert _days(db)["gpu_minutes"] == [TODAY]
    assert models.GpuMinuteReport.select().count() == 0


def test_the_day_cache_checks_each_day_once(db: peewee.Database) -> None:
    cache = partitions.DayCache(db)
    first = cache.ensure([TODAY])
    if not partitions.is_partitioned(db):
        assert first == []
        return
    assert len(first) == len(TABLES)
    partitions.drop_partition(db, partitions.list_partitions(db, "gpu_minutes")[0])
    assert cache.ensure([TODAY]) == [], "known made: not checked again"
    cache.forget_before(TODAY + DAY)
    assert cache.ensure([TODAY]) == [partitions.partition_name("gpu_minutes", TODAY)]


def test_writers_needing_a_new_day_at_once_make_it_once(
    db: peewee.Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not partitions.is_partitioned(db):
        return
    made: list[set[datetime.date]] = []
    real = partitions.ensure_days

    def counted(db_: peewee.Database, days: set[datetime.date]) -> list[str]:
        made.append(set(days))
        return real(db_, days)

    monkeypatch.setattr(partitions, "ensure_days", counted)
    cache = partitions.DayCache(db)
    start = threading.Barrier(6)

    def writer() -> None:
        start.wait()
        with database.session(db):
            cache.ensure([TODAY])

    threads = [threading.Thread(target=writer) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert made == [{TODAY}]
    assert _days(db)["gpu_minutes"] == [TODAY]


def test_a_partition_that_cannot_be_made_now_is_an_error(
    migrated_database_url: str, db: peewee.Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not partitions.is_partitioned(db):
        return
    monkeypatch.setattr(partitions, "LOCK_TIMEOUT", "50ms")
    writer = psycopg2.connect(migrated_database_url)
    try:
        with writer.cursor() as cursor:  # a batch still open on the table
            cursor.execute("SELECT count(*) FROM gpu_minutes")
        with pytest.raises(errors.StoreError, match="making partition gpu_minutes_p"):
            partitions.ensure_days(db, [TODAY])
    finally:
        writer.close()
    assert partitions.ensure_days(db, [TODAY]) == [
        partitions.partition_name(t, TODAY) for t in TABLES
    ]
