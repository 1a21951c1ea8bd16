"""PostgreSQL's COPY path of store/upserting.py: rows as COPY text, written into the table
itself or through a staging table and an INSERT ... SELECT with the upsert's conflict clause.

`insert` is the upsert's `INSERT INTO table (columns) ` and `conflict` its ON CONFLICT clause.
"""

from __future__ import annotations

import datetime
import uuid
from collections.abc import Callable, Sequence
from typing import Any

import peewee

from lens.store import database
from lens.store.fields import UtcDateTimeField

_COPY_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


def copy_text(
    fields: Sequence[peewee.Field[Any]], values: Sequence[tuple[object, ...]]
) -> str | None:
    """The rows in COPY's text format; None when a value has no plain text form here.

    Built column by column: a column's values mostly share one type, so each column is checked
    and formatted with one call per value at most, and each distinct time converted once."""
    columns: list[list[str]] = []
    for field, column in zip(fields, zip(*values, strict=True), strict=True):
        text = _column_text(field, column)
        if text is None:
            return None
        columns.append(text)
    return "\n".join(map("\t".join, zip(*columns, strict=True))) + "\n"


def _column_text(field: peewee.Field[Any], column: tuple[object, ...]) -> list[str] | None:
    """One column's values, converted as field.db_value does for the driver, as COPY text."""
    if isinstance(field, UtcDateTimeField):
        # Rows written together mostly share a few times; converting is the costly part.
        try:
            texts = {value: _copy_cell(field.db_value(value)) for value in dict.fromkeys(column)}
        except KeyError:
            return None
        return [texts[value] for value in column]
    kinds = set(map(type, column))
    plain = _UNCONVERTED.get(type(field))
    if plain is None or not kinds <= {plain, type(None)}:
        column = tuple(map(field.db_value, column))
        kinds = set(map(type, column))
    if kinds == {str}:
        strings: tuple[str, ...] = column  # type: ignore[assignment]  # checked just above
        if _has_escapes("".join(strings)):
            return [value.translate(_COPY_ESCAPES) for value in strings]
        return list(strings)
    try:
        return [_COPY_FORMATS[type(cell)](cell) for cell in column]
    except KeyError:
        return None


def _copy_cell(cell: object) -> str:
    return _COPY_FORMATS[type(cell)](cell)


def _copy_str(value: str) -> str:
    return value.translate(_COPY_ESCAPES) if _has_escapes(value) else value


def _has_escapes(text: str) -> bool:
    """Whether COPY's text format needs some of `text` escaped."""
    return "\\" in text or "\t" in text or "\n" in text or "\r" in text


_COPY_FORMATS: dict[type, Callable[[Any], str]] = {
    type(None): lambda _: "\\N",
    bool: lambda value: "t" if value else "f",
    int: int.__repr__,
    float: float.__repr__,
    datetime.datetime: lambda value: value.isoformat(sep=" "),
    str: _copy_str,
}

# peewee fields whose db_value hands values of this type to the driver unchanged.
_UNCONVERTED: dict[type, type] = {
    peewee.CharField: str,
    peewee.TextField: str,
    peewee.IntegerField: int,
    peewee.BigIntegerField: int,
}


def copy_straight(
    db: peewee.Database, table: str, fields: Sequence[peewee.Field[Any]], text: str
) -> int | None:
    """COPY the rows into the table itself, all or none; None when one of them is stored already.

    For inserts of rows mostly new (events, a new container's devices) this is about half the
    database's work of staging them first; a conflict costs one attempt, then staging."""
    columns = ", ".join(f'"{f.column_name}"' for f in fields)
    try:
        with db.savepoint():
            return database.copy_in(db, f'COPY "{table}" ({columns}) FROM STDIN', text)
    except peewee.IntegrityError:
        return None


def write_copied(
    db: peewee.Database,
    table: str,
    fields: Sequence[peewee.Field[Any]],
    text: str,
    *,
    insert: str,
    conflict: str,
) -> int:
    """COPY the rows into a temporary table, then INSERT ... SELECT with the same conflict clause:
    PostgreSQL parses COPY far faster than thousands of VALUES groups."""
    staging = f"_lens_copy_{uuid.uuid4().hex[:12]}"
    columns = ", ".join(f'"{f.column_name}"' for f in fields)
    database.execute(
        db,
        f'CREATE TEMPORARY TABLE "{staging}" ON COMMIT DROP AS '
        f'SELECT {columns} FROM "{table}" WITH NO DATA',
    )
    database.copy_in(db, f'COPY "{staging}" ({columns}) FROM STDIN', text)
    cursor = database.execute(db, f'{insert}SELECT {columns} FROM "{staging}"{conflict}')
    return int(cursor.rowcount)
