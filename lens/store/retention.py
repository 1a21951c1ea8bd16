"""Retention: delete rows of append-only tables older than a cutoff, in bounded batches.

Each batch is its own short transaction, so a large backlog never holds locks for long and an
interrupted run leaves nothing half done. The jobs role runs it periodically.
"""

from __future__ import annotations

import dataclasses
import datetime

from lens.runtime import errors
from lens.store import database, models


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class RetentionResult:
    table: str
    deleted: int
    batches: int
    complete: bool  # False when max_batches stopped the run before the backlog was gone


def delete_expired(
    model: type[models.LensModel],
    *,
    before: datetime.datetime,
    batch_size: int = 1000,
    max_batches: int | None = None,
) -> RetentionResult:
    """Delete rows of `model` created before `before`, `batch_size` rows per transaction."""
    if not model.APPEND_ONLY:
        raise ValueError(f"{model.__name__} is not append-only; retention would lose live rows")
    return _delete_before(model, "created_at", before, batch_size, max_batches)


def delete_untouched(
    model: type[models.LensModel],
    *,
    before: datetime.datetime,
    batch_size: int = 1000,
    max_batches: int | None = None,
) -> RetentionResult:
    """Delete rows of `model` last updated before `before`: for rows that go stale rather than
    expire (event_streams of agent boots long gone), in batches as `delete_expired`."""
    if "updated_at" not in model._meta.fields:
        raise ValueError(f"{model.__name__} has no updated_at")
    return _delete_before(model, "updated_at", before, batch_size, max_batches)


def _delete_before(
    model: type[models.LensModel],
    column: str,
    before: datetime.datetime,
    batch_size: int,
    max_batches: int | None,
) -> RetentionResult:
    if batch_size < 1:
        raise ValueError("batch_size must be at least 1")
    db = model._meta.database
    table = model._meta.table_name
    deleted = batches = 0
    stamp = model._meta.fields[column]
    try:
        with database.session(db):
            while max_batches is None or batches < max_batches:
                with db.atomic():
                    # Ids first: MariaDB cannot DELETE with a LIMITed subquery on the same table.
                    ids = [
                        row.id
                        for row in model.select(model.id)
                        .where(stamp < before)
                        .order_by(model.id)
                        .limit(batch_size)
                    ]
                    if ids:
                        deleted += model.delete().where(model.id.in_(ids)).execute()
                        batches += 1
                if len(ids) < batch_size:
                    return RetentionResult(
                        table=table, deleted=deleted, batches=batches, complete=True
                    )
    except database.DRIVER_ERRORS as exc:
        raise errors.StoreError(f"retention of {table} failed: {errors.first_line(exc)}") from exc
    return RetentionResult(table=table, deleted=deleted, batches=batches, complete=False)
