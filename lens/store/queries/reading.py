"""The frame of every read query: a connection held for its duration, driver errors turned into
StoreError, text patterns that match literally, and queries whose SQL is built once (the other
modules of store/queries/ use it).
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Hashable, Iterator
from typing import Any

import peewee
from playhouse.pool import MaxConnectionsExceeded

from lens.runtime import errors
from lens.store import database

# LIKE's escape character: not the backslash, which MySQL reads as an escape in string
# literals and PostgreSQL does not, so one spelling of the clause works on every engine.
_ESCAPE = "!"


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Page:
    """Which rows of a list: `limit` rows after the first `offset`."""

    offset: int = 0
    limit: int = 10

    @classmethod
    def numbered(cls, page_num: int, page_size: int) -> Page:
        """The original's pagination: page `page_num` (from 1) of `page_size` rows."""
        if page_num < 1 or page_size < 1:
            raise ValueError("page_num and page_size start at 1")
        return cls(offset=(page_num - 1) * page_size, limit=page_size)


@contextlib.contextmanager
def reading(db: peewee.Database) -> Iterator[None]:
    """Hold a connection for one read; a failing driver is a StoreError."""
    try:
        with database.session(db):
            yield
    except (*database.DRIVER_ERRORS, MaxConnectionsExceeded) as exc:
        # Every pooled connection busy past the connect timeout: the store is unavailable
        # now (a 503 to retry), not a bug.
        raise errors.StoreError(f"read failed: {errors.first_line(exc)}") from exc


def contains(field: peewee.Field[Any], text: str) -> peewee.ColumnBase:
    """`field` holds `text`, ignoring case; `%`, `_` and the escape in `text` match themselves."""
    escaped = (
        text.lower()
        .replace(_ESCAPE, _ESCAPE * 2)
        .replace("%", f"{_ESCAPE}%")
        .replace("_", f"{_ESCAPE}_")
    )
    # Spelled out: peewee would turn a LIKE into GLOB on SQLite, which takes no ESCAPE.
    return peewee.NodeList(
        (
            peewee.fn.LOWER(field),
            peewee.SQL("LIKE"),
            peewee.Value(f"%{escaped}%"),
            peewee.SQL(f"ESCAPE '{_ESCAPE}'"),
        )
    )


# The SQL built, kept on the database object itself: it is the database's dialect and bound
# models that the text depends on, and the cache goes with the database (no module state).
_BUILT = "_lens_built_sql"
_MAX_BUILT = 256


def _built(
    db: peewee.Database, build: Callable[..., Any], args: tuple[Hashable, ...]
) -> tuple[str, tuple[object, ...]]:
    cache: dict[object, tuple[str, tuple[object, ...]]] = db.__dict__.setdefault(_BUILT, {})
    key = (build, args)
    found = cache.get(key)
    if found is None:
        if len(cache) >= _MAX_BUILT:
            cache.clear()
        sql, params = build(*args).sql()
        found = cache[key] = (str(sql), tuple(params))
    return found


def rows_built_once(
    db: peewee.Database, build: Callable[..., Any], *args: Hashable
) -> list[tuple[Any, ...]]:
    """The rows of the query `build(*args)` makes (of models bound to `db`), within a `reading`
    of the caller. Its SQL is built once per database, `build` and arguments, then only run:
    for small queries asked often, whose building in peewee costs about what running them
    does (the cluster overview, PERFORMANCE.md `bench api`). `build` may depend on nothing but
    its arguments; the rows are the driver's values, without peewee's conversions."""
    sql, params = _built(db, build, args)
    return _driver_rows(db, sql, params)


def driver_rows(db: peewee.Database, query: Any) -> list[tuple[Any, ...]]:
    """The rows of `query` (of models bound to `db`) as the driver gives them, without peewee's
    row processing: for thousands of rows, that costs more than the database's work (a
    workload's day, PERFORMANCE.md `bench api`)."""
    sql, params = query.sql()
    return _driver_rows(db, sql, params)


def _driver_rows(db: peewee.Database, sql: str, params: Any) -> list[tuple[Any, ...]]:
    return [tuple(row) for row in database.execute(db, sql, params).fetchall()]
