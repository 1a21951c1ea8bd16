"""Versioned schema migrations (peewee's playhouse.migrations) behind a cross-process lock.

`lens db migrate` and roles with database.migrate_on_start call `migrate()`. The files in
store/migrations/ are applied in numeric order and recorded in lens_schema_migrations; a
database-wide lock (an advisory lock on PostgreSQL, GET_LOCK on MariaDB, a lock file next to a
SQLite database) makes two processes starting at once apply each migration exactly once.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import fcntl
import hashlib
import logging
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import peewee
from playhouse.migrations import MigrationError, Runner

from lens.runtime import errors
from lens.runtime.config import DatabaseConfig
from lens.store import database

log = logging.getLogger(__name__)

MIGRATIONS_DIR = Path(__file__).parent / "migrations"
HISTORY_TABLE = "lens_schema_migrations"

# Any constant works; this is "lens" in ASCII, so it is recognisable in pg_locks.
_PG_LOCK_KEY = 0x6C656E73
_MYSQL_LOCK_PREFIX = "lens_schema_migrations_"
_POLL_SECONDS = 0.2


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class MigrationState:
    name: str
    applied_at: datetime.datetime | None
    has_file: bool


def migrate(
    db: peewee.Database, *, directory: Path = MIGRATIONS_DIR, lock_timeout: float = 300.0
) -> list[str]:
    """Apply pending migrations; return their names (empty when the schema is current)."""
    try:
        return _apply(db, directory, lock_timeout)
    except database.DRIVER_ERRORS as exc:
        raise errors.StoreError(f"migration failed: {errors.first_line(exc)}") from exc


def open_for_role(cfg: DatabaseConfig) -> peewee.Database:
    """Open the database for a role, migrating it first when database.migrate_on_start says so."""
    db = database.open_database(cfg)
    if cfg.migrate_on_start:
        migrate(db)
    return db


def _apply(db: peewee.Database, directory: Path, lock_timeout: float) -> list[str]:
    applied: list[str] = []
    with database.session(db), _lock(db, timeout=lock_timeout):
        runner = Runner(db, str(directory), table_name=HISTORY_TABLE)
        waiting = [m.name for m in runner.status() if m.applied is None and m.path]
        for name in waiting:
            try:
                runner.up(target=name)
            except Exception as exc:  # a migration's own code may raise anything
                raise errors.StoreError(
                    f"migration {name} failed: {type(exc).__name__}: {errors.first_line(exc)}"
                ) from exc
            log.info("migration applied", extra={"migration": name})
            applied.append(name)
    return applied


def status(db: peewee.Database, *, directory: Path = MIGRATIONS_DIR) -> list[MigrationState]:
    """Every migration known to the files or the history, in order, with when it was applied."""
    try:
        with database.session(db):
            rows = Runner(db, str(directory), table_name=HISTORY_TABLE).status()
    except (MigrationError, *database.DRIVER_ERRORS) as exc:
        raise errors.StoreError(
            f"reading migration history failed: {errors.first_line(exc)}"
        ) from exc
    return [
        MigrationState(name=row.name, applied_at=_aware(row.applied), has_file=row.path is not None)
        for row in rows
    ]


def pending(db: peewee.Database, *, directory: Path = MIGRATIONS_DIR) -> list[str]:
    return [s.name for s in status(db, directory=directory) if s.applied_at is None]


def _aware(moment: datetime.datetime | None) -> datetime.datetime | None:
    # The runner stamps history rows with this process's naive local time.
    if moment is None:
        return None
    if isinstance(moment, str):
        moment = datetime.datetime.fromisoformat(moment)
    return moment.astimezone() if moment.tzinfo is None else moment


@contextlib.contextmanager
def _lock(db: peewee.Database, *, timeout: float) -> Iterator[None]:
    engine = database.engine_of(db)
    if engine == "postgresql":
        with _server_lock(
            db,
            timeout,
            what="PostgreSQL advisory lock",
            acquire="SELECT pg_try_advisory_lock(%s)",
            release="SELECT pg_advisory_unlock(%s)",
            name=_PG_LOCK_KEY,
        ):
            yield
    elif engine == "mysql":
        with _server_lock(
            db,
            timeout,
            what="MariaDB named lock",
            acquire="SELECT GET_LOCK(%s, 0)",
            release="SELECT RELEASE_LOCK(%s)",
            name=mysql_lock_name(str(db.database)),
        ):
            yield
    else:
        with _file_lock(db.database, timeout):
            yield


def mysql_lock_name(database_name: str) -> str:
    """The MariaDB named lock migrating `database_name` holds. MariaDB's names are the whole
    server's (PostgreSQL's advisory locks are per database), so each database gets its own:
    two Lens installations sharing a server migrate without waiting for each other. A digest
    keeps it within MariaDB's 64 characters."""
    digest = hashlib.sha256(database_name.encode()).hexdigest()[:32]
    return _MYSQL_LOCK_PREFIX + digest


def _wait(acquire: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    announced = False
    while not acquire():
        if time.monotonic() >= deadline:
            raise errors.StoreError(f"timed out after {timeout:g} s waiting for the {what}")
        if not announced:
            log.info("waiting for the migration lock held by another process", extra={"lock": what})
            announced = True
        time.sleep(_POLL_SECONDS)


@contextlib.contextmanager
def _server_lock(
    db: peewee.Database, timeout: float, *, what: str, acquire: str, release: str, name: object
) -> Iterator[None]:
    """A lock the database server holds for this connection, released when it closes too."""
    _wait(lambda: database.scalar(db, acquire, (name,)) in (1, True), timeout, what)
    try:
        yield
    finally:
        database.scalar(db, release, (name,))


@contextlib.contextmanager
def _file_lock(path: str, timeout: float) -> Iterator[None]:
    if path == ":memory:":
        yield  # private to this process
        return
    fd = os.open(f"{path}.migrate-lock", os.O_RDWR | os.O_CREAT, 0o600)

    def acquire() -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    try:
        _wait(acquire, timeout, "SQLite migration lock file")
        yield
    finally:
        os.close(fd)  # closing releases the flock
