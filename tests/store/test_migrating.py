from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import peewee
import psycopg2
import pymysql
import pytest

from lens.runtime import errors
from lens.runtime.config import DatabaseConfig
from lens.store import database, migrating, models
from tests.databases import new_database

SHIPPED = sorted(p.stem for p in migrating.MIGRATIONS_DIR.glob("[0-9]*.py"))

SECOND = '''
"""0099 (test only): add a column."""
import peewee


def up(migrator, db):
    rack = peewee.CharField(max_length=32, default="")
    migrator.migrate(migrator.add_column("nodes", "rack", rack))
'''

BROKEN = """
def up(migrator, db):
    raise RuntimeError("this migration is broken")
"""


def _open(url: str) -> peewee.Database:
    return database.open_database(DatabaseConfig(url=url))


def _history_count(db: peewee.Database) -> int:
    count = database.scalar(db, f"SELECT COUNT(*) FROM {migrating.HISTORY_TABLE}")
    assert isinstance(count, int)
    return count


def test_applies_from_empty_and_is_a_no_op_the_second_time(empty_database_url: str) -> None:
    db = _open(empty_database_url)
    assert migrating.pending(db) == SHIPPED
    assert migrating.migrate(db) == SHIPPED
    assert migrating.migrate(db) == []
    states = migrating.status(db)
    assert [(s.name, s.has_file) for s in states] == [(name, True) for name in SHIPPED]
    assert states[0].applied_at is not None
    assert migrating.pending(db) == []
    assert set(db.get_tables()) >= {m._meta.table_name for m in models.ALL_MODELS}
    with database.session(db):
        # 0011 found no minute stored: gpu_minute_pods holds every minute from the first.
        assert models.RollupStart.select().count() == 0


def test_later_migrations_apply_alone_in_order(empty_database_url: str, tmp_path: Path) -> None:
    directory = tmp_path / "migrations"
    shutil.copytree(migrating.MIGRATIONS_DIR, directory)
    db = _open(empty_database_url)
    assert migrating.migrate(db, directory=directory) == SHIPPED
    (directory / "0099_rack.py").write_text(SECOND)
    assert migrating.pending(db, directory=directory) == ["0099_rack"]
    assert migrating.migrate(db, directory=directory) == ["0099_rack"]
    assert "rack" in {c.name for c in db.get_columns("nodes")}
    assert [s.name for s in migrating.status(db, directory=directory)] == [*SHIPPED, "0099_rack"]


def test_a_failing_migration_is_a_store_error_and_is_not_recorded(
    empty_database_url: str, tmp_path: Path
) -> None:
    directory = tmp_path / "migrations"
    shutil.copytree(migrating.MIGRATIONS_DIR, directory)
    (directory / "0099_broken.py").write_text(BROKEN)
    db = _open(empty_database_url)
    with pytest.raises(errors.StoreError, match="this migration is broken"):
        migrating.migrate(db, directory=directory)
    assert migrating.pending(db, directory=directory) == ["0099_broken"]


def test_a_history_row_without_its_file_is_reported(
    empty_database_url: str, tmp_path: Path
) -> None:
    directory = tmp_path / "migrations"
    shutil.copytree(migrating.MIGRATIONS_DIR, directory)
    (directory / "0099_rack.py").write_text(SECOND)
    db = _open(empty_database_url)
    migrating.migrate(db, directory=directory)
    (directory / "0099_rack.py").unlink()
    states = migrating.status(db, directory=directory)
    assert [(s.name, s.has_file) for s in states] == [
        *((name, True) for name in SHIPPED),
        ("0099_rack", False),
    ]


def test_two_processes_starting_at_once_apply_each_migration_once(empty_database_url: str) -> None:
    env = {**os.environ, "LENS_DATABASE__URL": empty_database_url, "LENS_LOGGING__FORMAT": "json"}
    command = [sys.executable, "-m", "lens", "db", "migrate"]
    processes = [
        subprocess.Popen(
            command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(3)
    ]
    outputs = [p.communicate(timeout=60) for p in processes]
    assert [p.returncode for p in processes] == [0, 0, 0], outputs
    said = sorted(out.strip() for out, _ in outputs)
    assert said == [
        f"applied {len(SHIPPED)} migration(s): {', '.join(SHIPPED)}",
        "schema is up to date",
        "schema is up to date",
    ]
    db = _open(empty_database_url)
    assert _history_count(db) == len(SHIPPED)
    assert migrating.pending(db) == []


@contextlib.contextmanager
def _hold_lock(url: str) -> Iterator[None]:
    engine = database.engine_of(_open(url))
    if engine == "postgresql":
        conn = psycopg2.connect(url)
        with conn.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_lock(%s)", (migrating._PG_LOCK_KEY,))
        try:
            yield
        finally:
            conn.close()
    elif engine == "mysql":
        parts = database.dburl.parse_database_url(url)
        conn = pymysql.connect(
            host=parts.host, port=parts.port, user=parts.user, database=parts.database
        )
        with conn.cursor() as cursor:
            cursor.execute("SELECT GET_LOCK(%s, 0)", (migrating.mysql_lock_name(parts.database),))
        try:
            yield
        finally:
            conn.close()
    else:
        path = database.dburl.parse_database_url(url).database
        with open(f"{path}.migrate-lock", "w") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            yield


def test_migrate_waits_for_the_lock_and_gives_up_after_its_timeout(empty_database_url: str) -> None:
    db = _open(empty_database_url)
    with (
        _hold_lock(empty_database_url),
        pytest.raises(errors.StoreError, match=r"timed out after 0\.3 s"),
    ):
        migrating.migrate(db, lock_timeout=0.3)
    assert migrating.pending(db) == SHIPPED


def test_another_databases_migration_does_not_wait(empty_database_url: str, tmp_path: Path) -> None:
    """Each database has its own lock (MariaDB's named locks are the server's: the name says
    which database)."""
    engine = database.engine_of(_open(empty_database_url))
    with new_database(engine, tmp_path) as other_url, _hold_lock(empty_database_url):
        other = _open(other_url)
        try:
            assert migrating.migrate(other, lock_timeout=0.3) == SHIPPED
        finally:
            database.close_all(other)


def test_migrate_proceeds_once_the_lock_is_released(empty_database_url: str) -> None:
    db = _open(empty_database_url)
    result: list[list[str]] = []
    holding = _hold_lock(empty_database_url)
    holding.__enter__()
    worker = threading.Thread(target=lambda: result.append(migrating.migrate(db, lock_timeout=10)))
    worker.start()
    worker.join(0.5)
    assert worker.is_alive(), "migrate should be waiting for the lock"
    holding.__exit__(None, None, None)
    worker.join(10)
    assert result == [SHIPPED]


def test_a_role_opens_a_migrated_database_unless_told_not_to(empty_database_url: str) -> None:
    untouched = migrating.open_for_role(
        DatabaseConfig(url=empty_database_url, migrate_on_start=False)
    )
    assert migrating.pending(untouched) == SHIPPED
    migrated = migrating.open_for_role(DatabaseConfig(url=empty_database_url))
    assert migrating.pending(migrated) == []
