"""The frame of every read query: a connection held for its duration, driver errors turned into
StoreError, and text patterns that match literally (the other modules of store/queries/ use it).
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator
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
