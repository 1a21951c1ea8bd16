"""Open the database named by `database.url` and bind the models to it (STYLE S9.4).

SQLite runs in WAL mode with a busy timeout so several threads can write; PostgreSQL and
MariaDB get a bounded connection pool. Driver errors are translated into StoreError here and in
the other store modules; nothing above lens.store sees peewee's or a driver's exceptions.
"""

from __future__ import annotations

import contextlib
import io
import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar, cast

import peewee
from playhouse.pool import PooledMySQLDatabase, PooledPostgresqlDatabase

from lens.runtime import dburl, errors
from lens.runtime.config import DatabaseConfig
from lens.store import conflicts, fields, models

log = logging.getLogger(__name__)

# Idle pooled connections older than this are closed instead of reused.
_STALE_SECONDS = 300

DRIVER_ERRORS: tuple[type[Exception], ...] = (peewee.DatabaseError, peewee.InterfaceError)
# The connection itself failed (server restarted, idle connection killed), or the transaction
# lost to another (store/conflicts.py tells which), not the statement.
CONNECTION_ERRORS: tuple[type[Exception], ...] = (peewee.OperationalError, peewee.InterfaceError)

T = TypeVar("T")


def open_database(cfg: DatabaseConfig) -> peewee.Database:
    """A Database for cfg.url with every model bound to it; connections open lazily."""
    url = dburl.parse_database_url(cfg.url)
    if url.engine == "sqlite":
        db = _sqlite(url, cfg)
    elif url.engine == "postgresql":
        db = _postgresql(url, cfg)
    else:
        db = _mysql(url, cfg)
    db.bind(models.ALL_MODELS, bind_refs=False, bind_backrefs=False)
    return db


def engine_of(db: peewee.Database) -> dburl.Engine:
    if isinstance(db, peewee.SqliteDatabase):
        return "sqlite"
    if isinstance(db, peewee.PostgresqlDatabase):
        return "postgresql"
    if isinstance(db, peewee.MySQLDatabase):
        return "mysql"
    raise TypeError(f"unsupported database {type(db).__name__}")


def _sqlite(url: dburl.DatabaseUrl, cfg: DatabaseConfig) -> peewee.Database:
    if not url.is_memory:
        Path(url.database).parent.mkdir(parents=True, exist_ok=True)
    pragmas: dict[str, Any] = {
        "busy_timeout": int(cfg.busy_timeout_seconds * 1000),
        "foreign_keys": 1,
    }
    if not url.is_memory:
        pragmas["journal_mode"] = "wal"
        # With WAL, NORMAL loses at most the last transactions on power loss, never integrity.
        pragmas["synchronous"] = "normal"
    return peewee.SqliteDatabase(
        url.database,
        pragmas=pragmas,
        timeout=cfg.busy_timeout_seconds,
        field_types={fields.JSON_FIELD_TYPE: "TEXT", fields.DATETIME_FIELD_TYPE: "TEXT"},
    )


def _pool_options(url: dburl.DatabaseUrl, cfg: DatabaseConfig) -> dict[str, Any]:
    """What a pooled server connection needs, whichever the engine."""
    return {
        "host": url.host,
        "port": url.port,
        "user": url.user or None,
        "password": cfg.password.reveal() or url.password or None,
        "max_connections": cfg.max_connections,
        "stale_timeout": _STALE_SECONDS,
        # How long to wait for a free pooled connection.
        "timeout": cfg.connect_timeout_seconds,
    }


def _postgresql(url: dburl.DatabaseUrl, cfg: DatabaseConfig) -> peewee.Database:
    db: peewee.Database = PooledPostgresqlDatabase(
        url.database,
        connect_timeout=max(1, round(cfg.connect_timeout_seconds)),  # libpq takes whole seconds
        field_types={fields.JSON_FIELD_TYPE: "JSONB"},
        **{"application_name": "lens", **_pool_options(url, cfg), **dict(url.params)},
    )
    return db


def _mysql(url: dburl.DatabaseUrl, cfg: DatabaseConfig) -> peewee.Database:
    db: peewee.Database = PooledMySQLDatabase(
        url.database,
        connect_timeout=cfg.connect_timeout_seconds,
        field_types={fields.DATETIME_FIELD_TYPE: "DATETIME(6)"},
        **{"charset": "utf8mb4", **_pool_options(url, cfg), **dict(url.params)},
    )
    return db


@contextlib.contextmanager
def session(db: peewee.Database) -> Iterator[peewee.Database]:
    """Hold a connection for one unit of work; give it back to the pool if this opened it."""
    opened = db.is_closed()
    if opened:
        try:
            db.connect()
        except DRIVER_ERRORS as exc:
            raise errors.StoreError(
                f"cannot connect to the database: {errors.first_line(exc)}"
            ) from exc
    try:
        yield db
    finally:
        if opened and not db.is_closed():
            db.close()


def close_all(db: peewee.Database) -> None:
    """Close the database's connections, the pool's idle ones included (when done with it)."""
    if isinstance(db, PooledPostgresqlDatabase | PooledMySQLDatabase):
        db.close_all()
    elif not db.is_closed():
        db.close()


def idempotent_transaction(
    db: peewee.Database, work: Callable[[], T], *, lock_first: bool = False
) -> T:
    """Run `work` in one transaction; when the connection was lost, reconnect and run it again,
    and when the transaction lost to another one (a lock, a deadlock), run it again as it is.

    Only for work that is harmless to repeat (upserts on natural keys), and only when this call
    owns the transaction: inside a caller's transaction the error goes up, since the caller's
    earlier statements are gone with the connection.

    `lock_first`, for work that reads before it writes while other connections write: on SQLite
    the transaction begins IMMEDIATE, taking the write lock up front. A deferred one that read
    first fails at once with "database is locked" when another connection wrote meanwhile (its
    snapshot is stale, which no busy timeout helps). Not for every transaction: one holding the
    write lock while it waits for something else would stall every writer.
    """
    may_retry = not db.in_transaction()
    begin = {"lock_type": "IMMEDIATE"} if lock_first and engine_of(db) == "sqlite" else {}
    while True:
        try:
            with session(db), db.atomic(**begin):
                return work()
        except CONNECTION_ERRORS as exc:
            if not may_retry:
                raise
            may_retry = False
            conflict = conflicts.lost_to_another_transaction(exc)
            if conflict is None:
                log.warning(
                    "database connection lost; retrying once",
                    extra={"error": errors.first_line(exc)},
                )
                _discard(db)
            else:
                log.warning(
                    "database transaction lost to another one; retrying once",
                    extra={"error": errors.first_line(exc), "conflict": conflict},
                )


def ping(db: peewee.Database) -> None:
    """Readiness check: the database answers a trivial query, or StoreError says why not."""
    with session(db):
        try:
            scalar(db, "SELECT 1")
        except DRIVER_ERRORS as exc:
            _discard(db)
            raise errors.StoreError(f"database did not answer: {errors.first_line(exc)}") from exc


def execute(db: peewee.Database, sql: str, params: Sequence[object] = ()) -> Any:
    """Run one raw statement and return the driver's cursor (driver errors propagate)."""
    return db.execute_sql(sql, params)  # type: ignore[no-untyped-call]  # untyped in peewee-stubs


def copy_in(db: peewee.Database, sql: str, text: str) -> int:
    """Run a PostgreSQL `COPY ... FROM STDIN` with `text` as its input; the rows copied.

    Driver errors come out as peewee's, as they do from `execute`, so that callers (and
    idempotent_transaction) handle both alike."""
    import psycopg2  # only a PostgreSQL database gets here

    cursor = db.cursor()  # type: ignore[no-untyped-call]  # untyped in peewee-stubs
    try:
        cursor.copy_expert(sql, io.StringIO(text))
    except psycopg2.IntegrityError as exc:
        raise peewee.IntegrityError(exc) from exc
    except (psycopg2.OperationalError, psycopg2.InterfaceError) as exc:
        raise peewee.OperationalError(exc) from exc
    except psycopg2.Error as exc:
        raise peewee.DatabaseError(exc) from exc
    return int(cursor.rowcount)


def scalar(db: peewee.Database, sql: str, params: Sequence[object] = ()) -> object:
    """The first column of the first row of a raw statement (driver errors propagate)."""
    row = execute(db, sql, params).fetchone()
    return None if row is None else row[0]


def _discard(db: peewee.Database) -> None:
    """Drop this thread's connection after a failure, so the next unit of work reconnects."""
    with contextlib.suppress(*DRIVER_ERRORS):
        if isinstance(db, PooledPostgresqlDatabase | PooledMySQLDatabase):
            db.manual_close()
        else:
            db.close()


def tuple_rows(query: Iterable[object]) -> Iterable[tuple[Any, ...]]:
    """A `.tuples()` query's rows, typed as what they are (peewee's stubs say models)."""
    return cast(Iterable[tuple[Any, ...]], query)
