"""A database as Lens left it before migration 0011 (gpu_minute_pods): GPU-minutes and their
holder rows stored by the writer's own rows (reports/storing/minuterows.py) with no per-pod
sums, then 0011 applied; and any database read as if all its minutes were written before 0011
— for the tests of the migration and of the workload series' readers."""

from __future__ import annotations

import contextlib
import datetime
import shutil
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

import peewee

from lens.reports.gpuminutes import GpuMinute
from lens.reports.storing import minuterows, partitions
from lens.runtime.config import DatabaseConfig
from lens.store import database, migrating, models, upserting
from tests.databases import close_all

MIGRATION = "0011_gpu_minute_pods"
FOREVER = datetime.datetime(9999, 12, 31, 23, 59, tzinfo=datetime.UTC)


@contextlib.contextmanager
def as_if_all_before_0011(db: peewee.Database, cluster: str) -> Iterator[None]:
    """While in it, `cluster`'s gpu_minute_pods start after every minute: the workload series
    are read from the holder rows, as they were before 0011."""
    start = models.RollupStart
    with database.session(db):
        rollup = models.GpuMinutePod._meta.table_name
        start.insert(cluster=cluster, rollup=rollup, since=FOREVER).execute()
    try:
        yield
    finally:
        with database.session(db):
            start.delete().where(start.cluster == cluster).execute()


def _write_old_minutes(
    db: peewee.Database, cluster: str, minutes: Mapping[str, Sequence[GpuMinute]]
) -> None:
    """The rows MinuteStore wrote before 0011 (on PostgreSQL, in day partitions made here:
    the writer's own would now make gpu_minute_pods' too, which does not exist yet)."""

    def start(minute: GpuMinute) -> datetime.datetime:
        return datetime.datetime.fromtimestamp(minute.start, datetime.UTC)

    gpus = [
        minuterows.gpu_row(m, cluster=cluster, node=node, start=start(m))
        for node, each in minutes.items()
        for m in each
    ]
    held = [
        row
        for node, each in minutes.items()
        for m in each
        for row in minuterows.holder_rows(m, cluster=cluster, node=node, start=start(m))
    ]
    with database.session(db):
        if partitions.is_partitioned(db):
            days = {partitions.day_of(start(m)) for each in minutes.values() for m in each}
            for table in ("gpu_minutes", "gpu_minute_holders"):
                for day in days:
                    first = datetime.datetime.combine(day, datetime.time())
                    database.execute(
                        db,
                        f'CREATE TABLE "{partitions.partition_name(table, day)}" PARTITION OF'
                        f" \"{table}\" FOR VALUES FROM ('{first}') TO ('{first + partitions.DAY}')",
                    )
        upserting.upsert(models.GpuMinuteReport, upserting.Table(minuterows.GPU_COLUMNS, gpus))
        upserting.upsert(models.GpuMinuteHolder, upserting.Table(minuterows.HOLDER_COLUMNS, held))


@contextlib.contextmanager
def migrated_with_minutes_before_0011(
    url: str,
    directory: Path,
    *,
    cluster: str,
    minutes: Mapping[str, Sequence[GpuMinute]],
    before: Callable[[peewee.Database], None] = lambda db: None,
) -> Iterator[peewee.Database]:
    """The database at `url` migrated up to 0010, `minutes` (by node) stored as before 0011,
    then 0011 and every later migration applied, and `before` run on it (rows other writers
    keep, which 0011 does not touch: written by today's writers, into today's schema)."""
    migrations = directory / "migrations"
    later = [p for p in migrating.MIGRATIONS_DIR.glob("[0-9]*.py") if p.stem >= MIGRATION]
    shutil.copytree(
        migrating.MIGRATIONS_DIR,
        migrations,
        ignore=lambda _, names: [n for n in names if n[:1].isdigit() and n >= MIGRATION],
    )
    db = database.open_database(DatabaseConfig(url=url))
    try:
        migrating.migrate(db, directory=migrations)
        _write_old_minutes(db, cluster, minutes)
        for path in later:
            shutil.copy(path, migrations)
        assert migrating.migrate(db, directory=migrations)[0] == MIGRATION
        before(db)
        yield db
    finally:
        close_all(db)
