"""Batched, idempotent writes on a table's natural key, the same on SQLite, PostgreSQL and MariaDB.

Every writer of Lens goes through `upsert` (insert or update) or `insert_new` (insert, keep what
is there). Rows are plain mappings of column name to value, or a Table of value tuples; a call
is one transaction, split into multi-row INSERT statements of at most `batch_size` rows, or on
PostgreSQL from COPY_MIN_ROWS rows on, one COPY (store/copying.py). `plan_upsert` and
`plan_insert_new` do all but the database's part, for a writer that prepares its next batch
while the last is written.
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import peewee

from lens.runtime import errors
from lens.store import copying, database, models

Row = Mapping[str, object]

# SQLite's default SQLITE_MAX_VARIABLE_NUMBER since 3.32; PostgreSQL's protocol limit is higher.
_MAX_PARAMETERS = {"sqlite": 32766, "postgresql": 65535, "mysql": 65535}

# From this many rows on, PostgreSQL writes go through COPY (bench/bench_events.py).
COPY_MIN_ROWS = 200

# Written only by the INSERT that creates a row, never by an update.
INSERT_ONLY_COLUMNS = ("id", "created_at")


@dataclasses.dataclass(frozen=True, slots=True)
class Table:
    """Rows as tuples of values under one tuple of column names.

    What a writer of many rows hands over instead of one mapping per row: there is no dict per
    row to build, check and take apart again (bench/bench_events.py)."""

    columns: tuple[str, ...]
    rows: Sequence[tuple[object, ...]]


def upsert(
    model: type[models.LensModel],
    rows: Iterable[Row] | Table,
    *,
    batch_size: int = 500,
    keep: Sequence[str] = INSERT_ONLY_COLUMNS,
) -> int:
    """Insert each row, or update the row with its natural key; return the rows written.

    Columns of the natural key and those in `keep` are not changed by an update. When a call
    holds the same key twice, the last row wins, as if the rows had been written one by one.
    """
    planned = plan_upsert(model, rows, batch_size=batch_size, keep=keep)
    return 0 if planned is None else planned.write()


def insert_new(
    model: type[models.LensModel], rows: Iterable[Row] | Table, *, batch_size: int = 500
) -> int:
    """Insert the rows whose natural key is not stored yet; return how many were new.

    Stored rows are left as they are, so replaying a batch of events is harmless. (Should the
    connection drop during COMMIT, the retry finds the rows stored and counts them as not new.)
    """
    planned = plan_insert_new(model, rows, batch_size=batch_size)
    return 0 if planned is None else planned.write()


def plan_upsert(
    model: type[models.LensModel],
    rows: Iterable[Row] | Table,
    *,
    batch_size: int = 500,
    keep: Sequence[str] = INSERT_ONLY_COLUMNS,
) -> Planned | None:
    """`upsert` made ready to write, without touching the database; None: nothing to write."""
    unique = _dedupe(model, _as_table(model, rows), last_wins=True)
    if not unique.rows:
        return None
    key = models.natural_key(model)
    key_names = {f.name for f in key}
    update = [model._meta.fields[c] for c in unique.columns if c not in key_names and c not in keep]
    return _plan(
        model,
        unique,
        batch_size,
        lambda q, e: _on_conflict_update(q, e, key, update),
        conflict_key=("update", *(f.name for f in update)),
        counted=len(unique.rows),
    )


def plan_insert_new(
    model: type[models.LensModel], rows: Iterable[Row] | Table, *, batch_size: int = 500
) -> Planned | None:
    """`insert_new` made ready to write, without touching the database; None: nothing to write."""
    unique = _dedupe(model, _as_table(model, rows), last_wins=False)
    if not unique.rows:
        return None
    key = models.natural_key(model)
    return _plan(
        model,
        unique,
        batch_size,
        lambda q, e: _on_conflict_ignore(q, e, key),
        conflict_key=("ignore",),
        copy_straight=True,
    )


def _as_table(model: type[models.LensModel], rows: Iterable[Row] | Table) -> Table:
    """The rows as a Table of known columns, every row with all of them."""
    if isinstance(rows, Table):
        columns, values = rows.columns, rows.rows
        if values and set(map(len, values)) != {len(columns)}:
            raise ValueError(f"{model.__name__}: every row must have one value per column")
    else:
        mappings = list(rows)
        if not mappings:
            return Table(columns=(), rows=[])
        columns = tuple(mappings[0])
        expected = set(columns)
        for row in mappings:
            if row.keys() != expected:
                raise ValueError(
                    f"{model.__name__}: every row of a batch must have the same columns"
                )
        pick = _picker(columns)
        values = [pick(row) for row in mappings]
    known = model._meta.fields
    for name in columns:
        if name not in known:
            raise ValueError(f"{model.__name__}: no column {name!r}")
    return Table(columns=columns, rows=values)


def _dedupe(model: type[models.LensModel], table: Table, *, last_wins: bool) -> Table:
    if not table.rows:
        return table
    names = [f.name for f in models.natural_key(model)]
    for name in names:
        if name not in table.columns:
            raise ValueError(f"{model.__name__}: row lacks natural key column {name!r}")
    identity_of = _picker([table.columns.index(name) for name in names])
    chosen: dict[tuple[object, ...], tuple[object, ...]] = {}
    if last_wins:
        for row in table.rows:
            identity = identity_of(row)
            chosen.pop(identity, None)  # written where it came last
            chosen[identity] = row
    else:
        for row in table.rows:
            chosen.setdefault(identity_of(row), row)
    return Table(columns=table.columns, rows=list(chosen.values()))


def _picker(keys: Sequence[Any]) -> Callable[[Any], tuple[object, ...]]:
    """A function giving a row's values at `keys` (names or positions) as a tuple, in C."""
    if len(keys) == 1:
        only = keys[0]
        return lambda row: (row[only],)
    return operator.itemgetter(*keys)


def _on_conflict_update(
    query: peewee.ModelInsert,
    engine: str,
    key: Sequence[peewee.Field[Any]],
    update: Sequence[peewee.Field[Any]],
) -> peewee.ModelInsert:
    if not update:
        return _on_conflict_ignore(query, engine, key)
    if engine == "mysql":
        # MariaDB/MySQL have no conflict target: ON DUPLICATE KEY fires on any unique index,
        # and the natural key is each table's only one besides the id.
        return query.on_conflict(preserve=list(update))
    return query.on_conflict(conflict_target=list(key), preserve=list(update))


def _on_conflict_ignore(
    query: peewee.ModelInsert, engine: str, key: Sequence[peewee.Field[Any]]
) -> peewee.ModelInsert:
    if engine == "mysql":
        # Not INSERT IGNORE: that would also hide NOT NULL and truncation errors.
        return query.on_conflict(update={key[0]: key[0]})
    return query.on_conflict(conflict_target=list(key), action="NOTHING")


# Statements compiled, by (model, engine, columns, conflict clause): a cache, never a registry
# (dropping it only costs compiling again).
_COMPILED: dict[tuple[object, ...], _Statement] = {}
_COMPILED_MAX = 512


@dataclasses.dataclass(frozen=True, slots=True)
class _Statement:
    """A multi-row INSERT split around its VALUES groups, with its fields in column order.

    peewee renders the statement once, for one row; repeating the row group ourselves keeps the
    engine's quoting and conflict clause while skipping peewee's per-value SQL building, which
    cost three quarters of a batch's time (bench/bench_upsert.py).
    """

    head: str
    group: str
    tail: str
    fields: tuple[peewee.Field[Any], ...]

    def sql(self, rows: int) -> str:
        return f"{self.head}{', '.join([self.group] * rows)}{self.tail}"

    def params(self, rows: Sequence[tuple[object, ...]]) -> list[object]:
        converters: list[Callable[[object], object]] = [field.db_value for field in self.fields]
        return [
            convert(value) for row in rows for convert, value in zip(converters, row, strict=True)
        ]


def _compile(
    model: type[models.LensModel],
    fields: Sequence[peewee.Field[Any]],
    first: tuple[object, ...],
    conflict: Callable[[peewee.ModelInsert, str], peewee.ModelInsert],
) -> _Statement:
    db = model._meta.database
    engine = database.engine_of(db)
    query = conflict(model.insert_many([first], fields=list(fields)), engine)
    if engine == "postgresql":
        query = query.returning()  # no ids needed; the row count says enough
    sql, params = query.sql()
    group = "(" + ", ".join([db.param] * len(fields)) + ")"
    marker = f"VALUES {group}"
    if sql.count(marker) != 1 or len(params) != len(fields):
        raise RuntimeError(f"unexpected INSERT shape for {model.__name__}: {sql}")
    head, tail = sql.split(marker)
    return _Statement(head=f"{head}VALUES ", group=group, tail=tail, fields=tuple(fields))


def _with_defaults(
    model: type[models.LensModel], table: Table
) -> tuple[list[peewee.Field[Any]], Sequence[tuple[object, ...]]]:
    """Fields in column order and each row's values, with the Python defaults of absent columns."""
    given = set(table.columns)
    missing = [
        f
        for f in model._meta.sorted_fields
        if f.name not in given and f.default is not None and not isinstance(f, peewee.AutoField)
    ]
    fields = [model._meta.fields[c] for c in table.columns] + missing
    if not missing:
        return fields, table.rows
    values = [
        row + tuple(f.default() if callable(f.default) else f.default for f in missing)
        for row in table.rows
    ]
    return fields, values


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Planned:
    """An upsert or insert_new ready to write: rows checked and deduplicated, SQL and COPY text
    made. Making them is Python's work and writing them the database's, so a writer can plan its
    next batch while the database writes the last one (containers/server/receiving.py)."""

    model: type[models.LensModel]
    statement: _Statement
    values: Sequence[tuple[object, ...]]
    per_batch: int
    copied: str | None  # the rows as COPY text (PostgreSQL, COPY_MIN_ROWS and more)
    copy_straight: bool  # try COPY into the table itself first (insert_new)
    counted: int | None  # the rows an upsert writes; None: as many as the database says

    def write(self) -> int:
        """Write the rows (in the caller's transaction, if any); the count the call promises."""
        db = self.model._meta.database
        try:
            if self.one_statement and db.in_transaction():
                # One statement is atomic by itself: no savepoint around it (two round trips,
                # a third of a small write's time).
                written = self._write_all(db)
            else:
                written = database.idempotent_transaction(db, lambda: self._write_all(db))
        except database.DRIVER_ERRORS as exc:
            raise errors.StoreError(
                f"writing {self.model._meta.table_name} failed: {errors.first_line(exc)}"
            ) from exc
        return written if self.counted is None else self.counted

    def inline(self) -> tuple[str, list[object]] | None:
        """The write as one INSERT and its parameters, for a writer that sends several
        statements at once; None when it takes more than one (batches, or COPY)."""
        if not self.one_statement:
            return None
        return self.statement.sql(len(self.values)), self.statement.params(self.values)

    @property
    def one_statement(self) -> bool:
        """Whether the write is a single INSERT (no batches, no COPY)."""
        return self.copied is None and len(self.values) <= self.per_batch

    def _write_all(self, db: peewee.Database) -> int:
        statement, copied = self.statement, self.copied
        if copied is not None:
            table = self.model._meta.table_name
            if self.copy_straight:
                written = copying.copy_straight(db, table, statement.fields, copied)
                if written is not None:
                    return written
            insert = statement.head.removesuffix("VALUES ")
            return copying.write_copied(
                db, table, statement.fields, copied, insert=insert, conflict=statement.tail
            )
        written = 0
        for start in range(0, len(self.values), self.per_batch):
            chunk = self.values[start : start + self.per_batch]
            cursor = database.execute(db, statement.sql(len(chunk)), statement.params(chunk))
            written += cursor.rowcount
        return written


def merged(parts: Sequence[Planned | None]) -> Planned | None:
    """One Planned writing the rows of all `parts`, plans of one statement for rows with
    distinct keys (one per node of a group commit); None: nothing to write. Rows past a batch
    go in several statements; COPY is left out, since its text would be made while writing."""
    present = [part for part in parts if part is not None]
    if len(present) <= 1:
        return present[0] if present else None
    first = present[0]
    if any(p.statement is not first.statement for p in present):
        raise ValueError(f"{first.model.__name__}: only plans of one statement merge")
    counts = [p.counted for p in present]
    return dataclasses.replace(
        first,
        values=[row for part in present for row in part.values],
        copied=None,
        counted=None if None in counts else sum(c for c in counts if c is not None),
    )


def _plan(
    model: type[models.LensModel],
    table: Table,
    batch_size: int,
    conflict: Callable[[peewee.ModelInsert, str], peewee.ModelInsert],
    *,
    conflict_key: tuple[str, ...],
    copy_straight: bool = False,
    counted: int | None = None,
) -> Planned:
    engine = database.engine_of(model._meta.database)
    fields, values = _with_defaults(model, table)
    # Compiled once per shape: peewee's rendering cost more than writing a node's few rows.
    shape = (model, engine, tuple(f.name for f in fields), conflict_key)
    statement = _COMPILED.get(shape)
    if statement is None:
        statement = _compile(model, fields, values[0], conflict)
        if len(_COMPILED) >= _COMPILED_MAX:
            _COMPILED.clear()
        _COMPILED[shape] = statement
    return Planned(
        model=model,
        statement=statement,
        values=values,
        per_batch=max(1, min(batch_size, _MAX_PARAMETERS[engine] // len(fields))),
        copied=(
            copying.copy_text(statement.fields, values)
            if engine == "postgresql" and len(values) >= COPY_MIN_ROWS
            else None
        ),
        copy_straight=copy_straight,
        counted=counted,
    )
