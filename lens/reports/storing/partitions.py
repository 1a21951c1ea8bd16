"""Day partitions of the minute tables on PostgreSQL: made ahead of the writer, dropped by
retention, and which minutes the store takes at all.

gpu_minutes, gpu_minute_holders, rdma_port_minutes and gpu_minute_pods are partitioned BY RANGE
(minute) on PostgreSQL (migrations 0003 and 0011), one partition per UTC day named
<table>_pYYYYMMDD. A row whose day has no partition cannot be written, so minutes.py makes its
days' first and the jobs make the coming days' ahead (`ensure_ahead`); retention.py drops whole
days. Making or dropping a partition locks its parent table exclusively until the transaction
ends, so each is its own short transaction with a lock timeout, run outside the writers'
batches. Making partitions is a no-op on SQLite and MariaDB, whose tables are plain.
"""

from __future__ import annotations

import dataclasses
import datetime
import logging
import re
import threading
from collections.abc import Iterable

import peewee

from lens.runtime import errors
from lens.store import database, models

log = logging.getLogger(__name__)

DAY = datetime.timedelta(days=1)
# How long making or dropping a partition waits for the writers' transactions to let go of
# its parent table; the writers queue behind it meanwhile. A timeout is an error, retried by
# the next call (partitions are made days ahead).
LOCK_TIMEOUT = "5s"

_NAME = re.compile(r"^(?P<table>[a-z_]+)_p(?P<day>\d{8})$")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Window:
    """The minutes the store takes: none older than `keep` (retention would delete them at
    once, and their day's partition may be gone) and none more than `ahead` in the future
    (an agent's clock gone wrong; its day would need a partition made for it alone)."""

    keep: datetime.timedelta
    ahead: datetime.timedelta = DAY

    def too_old(self, minute: datetime.datetime, now: datetime.datetime) -> bool:
        return minute < now - self.keep

    def too_new(self, minute: datetime.datetime, now: datetime.datetime) -> bool:
        return minute > now + self.ahead


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True, order=True)
class Partition:
    """One day's partition of a minute table: rows of [day, day + 1) UTC."""

    day: datetime.date
    table: str
    name: str


def tables() -> tuple[str, ...]:
    """The tables partitioned by day on PostgreSQL."""
    return tuple(model._meta.table_name for model in models.DAY_PARTITIONED)


def is_partitioned(db: peewee.Database) -> bool:
    return database.engine_of(db) == "postgresql"


def partition_name(table: str, day: datetime.date) -> str:
    return f"{table}_p{day:%Y%m%d}"


def day_of(moment: datetime.datetime) -> datetime.date:
    return moment.astimezone(datetime.UTC).date()


def ensure_ahead(db: peewee.Database, *, today: datetime.date, days_ahead: int = 2) -> list[str]:
    """Make the partitions of [today - 1 day, today + days_ahead] that are missing; the names
    made. For the jobs to run at least daily, outside any transaction."""
    if days_ahead < 1:
        raise ValueError("days_ahead must be at least 1: minutes up to a day ahead are taken")
    return ensure_days(db, (today + DAY * offset for offset in range(-1, days_ahead + 1)))


def ensure_minute(
    db: peewee.Database, minute: datetime.datetime, *, now: datetime.datetime, window: Window
) -> bool:
    """Make sure a row of `minute` can be written: False when the window refuses the minute
    (nothing is made then), True when its day's partitions exist."""
    if window.too_old(minute, now) or window.too_new(minute, now):
        return False
    ensure_days(db, [day_of(minute)])
    return True


def ensure_days(db: peewee.Database, days: Iterable[datetime.date]) -> list[str]:
    """Make each day's partition of every minute table where it is missing; the names made.

    Safe when another process makes the same at once. Meant to run outside any transaction:
    within one, each is made in a savepoint and its lock on the parent held until the end."""
    if not is_partitioned(db):
        return []
    wanted = [(table, day) for day in sorted(set(days)) for table in tables()]
    if not wanted:
        return []
    made: list[str] = []
    with database.session(db):
        missing = _missing(db, [partition_name(table, day) for table, day in wanted])
        for table, day in wanted:
            name = partition_name(table, day)
            if name in missing and _create(db, table, day):
                made.append(name)
    if made:
        log.info("partitions made", extra={"partitions": made})
    return made


def _missing(db: peewee.Database, names: list[str]) -> set[str]:
    try:
        cursor = database.execute(
            db,
            "SELECT name FROM unnest(%s::text[]) AS name"
            " WHERE to_regclass(quote_ident(name)) IS NULL",
            (names,),
        )
    except database.DRIVER_ERRORS as exc:
        raise errors.StoreError(f"listing partitions failed: {errors.first_line(exc)}") from exc
    return {str(name) for (name,) in cursor.fetchall()}


def _create(db: peewee.Database, table: str, day: datetime.date) -> bool:
    """Make one partition; False when another process made it first."""
    name = partition_name(table, day)
    start = datetime.datetime.combine(day, datetime.time())
    # No IF NOT EXISTS: a writer that finds the partition made by another since it looked
    # would pass as its maker; this way it fails, and the check below says who made it.
    sql = (
        f'CREATE TABLE "{name}" PARTITION OF "{table}" '
        f"FOR VALUES FROM ('{start:%Y-%m-%d %H:%M:%S}') TO ('{start + DAY:%Y-%m-%d %H:%M:%S}')"
    )
    try:
        _locked(db, sql)
    except database.DRIVER_ERRORS as exc:
        # Two writers racing: the loser fails on the existing table, or on the catalog's unique
        # names once the winner committed. Anything else (a lock timeout, an overlapping
        # partition) is an error.
        if not _missing(db, [name]):
            return False
        raise errors.StoreError(
            f"making partition {name} failed: {errors.first_line(exc)}"
        ) from exc
    return True


def list_partitions(db: peewee.Database, table: str) -> list[Partition]:
    """The day partitions of `table` (named as this module names them), oldest first."""
    if not is_partitioned(db):
        return []
    try:
        with database.session(db):
            cursor = database.execute(
                db,
                "SELECT c.relname FROM pg_inherits i"
                " JOIN pg_class c ON c.oid = i.inhrelid"
                " WHERE i.inhparent = to_regclass(quote_ident(%s))",
                (table,),
            )
            names = [str(name) for (name,) in cursor.fetchall()]
    except database.DRIVER_ERRORS as exc:
        raise errors.StoreError(f"listing partitions failed: {errors.first_line(exc)}") from exc
    found = []
    for name in names:
        match = _NAME.match(name)
        if match and match["table"] == table:
            day = datetime.datetime.strptime(match["day"], "%Y%m%d").date()
            found.append(Partition(day=day, table=table, name=name))
    return sorted(found)


def drop_partition(db: peewee.Database, partition: Partition) -> None:
    """Drop one day's partition and its rows, in a transaction of its own."""
    try:
        with database.session(db):
            _locked(db, f'DROP TABLE IF EXISTS "{partition.name}"')
    except database.DRIVER_ERRORS as exc:
        raise errors.StoreError(
            f"dropping partition {partition.name} failed: {errors.first_line(exc)}"
        ) from exc
    log.info("partition dropped", extra={"partition": partition.name})


def _locked(db: peewee.Database, sql: str) -> None:
    """Run DDL on a partition with the lock timeout, in a (sub)transaction of its own."""
    with db.atomic():
        previous = database.scalar(db, "SELECT current_setting('lock_timeout')")
        database.execute(db, "SELECT set_config('lock_timeout', %s, true)", (LOCK_TIMEOUT,))
        database.execute(db, sql)
        database.execute(db, "SELECT set_config('lock_timeout', %s, true)", (str(previous),))


class DayCache:
    """The days whose partitions exist, as far as this process knows: each day is checked (and
    made) once, not at every write. Thread-safe."""

    def __init__(self, db: peewee.Database) -> None:
        self._db = db
        self._days: set[datetime.date] = set()
        self._lock = threading.Lock()
        # One maker at a time: the writers of a group commit that all need a new day would
        # otherwise each send its DDL, and wait on each other's locks, inside the first writes.
        self._making = threading.Lock()

    def ensure(self, days: Iterable[datetime.date]) -> list[str]:
        """Make the partitions of the days not known to exist; the names made."""
        if not is_partitioned(self._db):
            return []
        wanted = set(days)
        with self._lock:
            wanted -= self._days
        if not wanted:
            return []
        with self._making:
            with self._lock:
                wanted -= self._days  # made by another writer meanwhile
            if not wanted:
                return []
            made = ensure_days(self._db, wanted)
            with self._lock:
                self._days |= wanted
        return made

    def forget_before(self, day: datetime.date) -> None:
        """Forget the days before `day` (retention drops their partitions)."""
        with self._lock:
            self._days = {known for known in self._days if known >= day}
