"""0011: gpu_minute_pods — each pod's GPU figures per node and minute, summed from its holder rows
(the workload series read it: PERFORMANCE.md, `bench api`) — and rollup_starts.

Nothing is backfilled: at 1,000 nodes 8 days of holder rows are some 80 million, which would
hold every role's start behind the migration lock for many minutes. The latest minute stored
now is recorded instead, for every cluster; readers take what came before it from the holder
rows as they did. On PostgreSQL the table is partitioned by day like gpu_minutes, and gets a
partition for each day gpu_minutes has one.
"""

from __future__ import annotations

import datetime
from typing import Any

import peewee

ROLLUP = "gpu_minute_pods"
MINUTE = datetime.timedelta(minutes=1)


class UtcDateTimeField(peewee.Field):
    field_type = "DATETIME"  # lens.store.fields.DATETIME_FIELD_TYPE when this migration was written


def _partitioning(db: peewee.Database) -> list[str] | None:
    if isinstance(db, peewee.PostgresqlDatabase):
        return ['PARTITION BY RANGE ("minute")']
    return None


def up(migrator: Any, db: peewee.Database) -> None:
    class GpuMinutePod(peewee.Model):
        cluster = peewee.CharField(max_length=64)
        node_name = peewee.CharField(max_length=253)
        minute = UtcDateTimeField()
        pod_uid = peewee.CharField(max_length=64, default="")
        held_seconds = peewee.DoubleField()
        utilization_seconds = peewee.DoubleField()
        utilization_known_seconds = peewee.DoubleField()
        vram_ratio_seconds = peewee.DoubleField()
        vram_known_seconds = peewee.DoubleField()
        vram_bytes = peewee.BigIntegerField(null=True)
        power_joules = peewee.DoubleField()
        power_known_seconds = peewee.DoubleField()

        class Meta:
            database = db
            table_name = ROLLUP
            primary_key = False
            table_settings = _partitioning(db)
            indexes = (
                (("cluster", "node_name", "minute", "pod_uid"), True),
                (("pod_uid", "minute"), False),
                (("minute",), False),
            )

    class RollupStart(peewee.Model):
        id = peewee.BigAutoField()
        cluster = peewee.CharField(max_length=64)
        rollup = peewee.CharField(max_length=64)
        since = UtcDateTimeField()

        class Meta:
            database = db
            table_name = "rollup_starts"
            indexes = ((("cluster", "rollup"), True),)

    db.create_tables([GpuMinutePod, RollupStart])
    if isinstance(db, peewee.PostgresqlDatabase):
        _partitions_like_gpu_minutes(db)
    latest = _latest_minute(db)
    if latest is not None:
        RollupStart.insert(cluster="", rollup=ROLLUP, since=_stored(db, latest + MINUTE)).execute()


def _partitions_like_gpu_minutes(db: peewee.Database) -> None:
    """A partition of gpu_minute_pods for each of gpu_minutes' (named as partitions.py names
    them): a writer that knows a day already has its partitions would not make this one."""
    cursor = db.execute_sql(  # type: ignore[no-untyped-call]  # untyped in peewee-stubs
        "SELECT c.relname, pg_get_expr(c.relpartbound, c.oid) FROM pg_inherits i"
        " JOIN pg_class c ON c.oid = i.inhrelid"
        " WHERE i.inhparent = to_regclass('gpu_minutes')"
    )
    for name, bounds in cursor.fetchall():
        day = str(name).removeprefix("gpu_minutes_p")
        sql = f'CREATE TABLE "{ROLLUP}_p{day}" PARTITION OF "{ROLLUP}" {bounds}'
        db.execute_sql(sql)  # type: ignore[no-untyped-call]  # untyped in peewee-stubs


def _latest_minute(db: peewee.Database) -> datetime.datetime | None:
    """The latest minute of any holder row (UTC), by its index on `minute`."""
    sql = "SELECT MAX(minute) FROM gpu_minute_holders"
    value = db.execute_sql(sql).fetchone()[0]  # type: ignore[no-untyped-call]  # untyped stubs
    if value is None:
        return None
    if isinstance(value, str):  # SQLite's fixed-width text
        value = datetime.datetime.fromisoformat(value)
    if not isinstance(value, datetime.datetime):
        raise TypeError(f"gpu_minute_holders.minute read as {type(value).__name__}")
    return value.replace(tzinfo=None)


def _stored(db: peewee.Database, moment: datetime.datetime) -> object:
    """`moment` (naive UTC) as lens.store.fields.UtcDateTimeField stores it."""
    if isinstance(db, peewee.SqliteDatabase):
        return moment.strftime("%Y-%m-%d %H:%M:%S.%f")
    return moment
