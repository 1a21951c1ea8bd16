from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable

import peewee
import pymysql
import pytest

from lens.store import conflicts, database, models, upserting
from tests.databases import mysql_admin, postgres_admin

ROW = {"cluster": "c", "uid": "u", "namespace": "n", "name": "p"}


def _other_connection(db: peewee.Database) -> tuple[Callable[[str], None], Callable[[], None]]:
    """A second connection to `db`'s database, outside Lens: a statement runner and a closer."""
    engine = database.engine_of(db)
    if engine == "sqlite":
        sqlite = sqlite3.connect(db.database, isolation_level=None, timeout=0)
        return (lambda sql: sqlite.execute(sql) and None), sqlite.close
    if engine == "postgresql":
        postgres = postgres_admin(db.database)
        return (lambda sql: postgres.cursor().execute(sql)), postgres.close
    mysql = mysql_admin(db.database)
    return (lambda sql: mysql.cursor().execute(sql) and None), mysql.close


def _rename(db: peewee.Database) -> None:
    """A plain statement, whose driver error reaches idempotent_transaction as it is."""
    database.execute(db, f"UPDATE {models.GpuPod._meta.table_name} SET name = 'p'")


def _lose_to_another_transaction(db: peewee.Database, run: Callable[[str], None]) -> None:
    """Make this transaction (on `db`) lose its write to one of `run`'s connection, as each
    engine does: a stale snapshot (SQLite), a concurrent update under repeatable read
    (PostgreSQL's 40001), a row lock held past the wait timeout (MariaDB's 1205)."""
    engine = database.engine_of(db)
    table = models.GpuPod._meta.table_name
    if engine == "postgresql":
        database.execute(db, "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
    if engine == "mysql":
        database.execute(db, "SET SESSION innodb_lock_wait_timeout = 1")
    models.GpuPod.select().count()  # this transaction's snapshot
    if engine == "mysql":
        run("BEGIN")
        run(f"SELECT * FROM {table} FOR UPDATE")
    else:
        run(f"UPDATE {table} SET name = 'by another'")
    try:
        _rename(db)
    finally:
        if engine == "mysql":
            run("ROLLBACK")


@pytest.mark.parametrize("database_engine", ["sqlite", "postgresql", "mysql"], indirect=True)
def test_a_transaction_that_lost_to_another_runs_again_on_its_connection(
    db: peewee.Database, caplog: pytest.LogCaptureFixture
) -> None:
    with database.session(db):
        upserting.upsert(models.GpuPod, [{**ROW, "name": "first"}])
    run, close = _other_connection(db)
    tries: list[int] = []

    def work() -> None:
        tries.append(1)
        if len(tries) == 1:
            _lose_to_another_transaction(db, run)
        else:
            _rename(db)

    try:
        with caplog.at_level(logging.WARNING, logger="lens.store.database"):
            database.idempotent_transaction(db, work)
    finally:
        close()
    assert len(tries) == 2
    with database.session(db):
        assert [pod.name for pod in models.GpuPod.select()] == ["p"]
    # The store's own warning: records of other loggers (peewee's statements, should an earlier
    # test in this process have turned its debug on) are not what is asserted.
    [record] = [
        r
        for r in caplog.records
        if r.name == "lens.store.database" and r.levelno >= logging.WARNING
    ]
    assert record.getMessage() == "database transaction lost to another one; retrying once"
    assert (
        record.conflict  # type: ignore[attr-defined]  # logging extra
        == {
            "sqlite": "SQLite database is locked",
            "postgresql": "PostgreSQL 40001",
            "mysql": "MariaDB 1205 lock wait timeout",
        }[database.engine_of(db)]
    )


def test_what_is_a_lost_transaction_and_what_is_not() -> None:
    locked = sqlite3.OperationalError("database is locked")
    assert conflicts.lost_to_another_transaction(peewee.OperationalError(locked, *locked.args)) == (
        "SQLite database is locked"
    )
    deadlock = pymysql.err.OperationalError(1213, "Deadlock found when trying to get lock")
    assert conflicts.lost_to_another_transaction(deadlock) == "MariaDB 1213 deadlock"
    gone = pymysql.err.OperationalError(2013, "Lost connection to server during query")
    assert conflicts.lost_to_another_transaction(peewee.OperationalError(gone, *gone.args)) is None
    closed = sqlite3.OperationalError("disk I/O error")
    assert conflicts.lost_to_another_transaction(closed) is None
    assert conflicts.lost_to_another_transaction(peewee.InterfaceError("connection closed")) is None
    assert conflicts.lost_to_another_transaction(peewee.OperationalError()) is None
