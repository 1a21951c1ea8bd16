"""The cluster's storage figures: capacity and inodes summed over the backends of the `storage`
table (the storage scan, docs/storage.md), for /v1/storage/stat and the overview (clusters.py),
so both show the same figures. None where no backend's figure is known.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import peewee

from lens.store import models
from lens.store.queries.reading import reading, rows_built_once


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class StorageTotals:
    """Sums over the storage backends whose figure is known; None where none is. A share is
    over the backends that know both of its figures: a backend whose use is unknown adds to the
    capacity shown, not to the capacity the use is a share of."""

    total_bytes: int | None = None
    used_bytes: int | None = None
    total_inodes: int | None = None
    used_inodes: int | None = None
    usage_percent: float | None = None
    inodes_usage_percent: float | None = None


def _both(part: peewee.Field[Any], whole: peewee.Field[Any]) -> list[peewee.ColumnBase]:
    """SUM(part) and SUM(whole) over the rows knowing both."""
    known = part.is_null(False) & whole.is_null(False)
    return [
        peewee.fn.SUM(peewee.Case(None, [(known, part)], None)),
        peewee.fn.SUM(peewee.Case(None, [(known, whole)], None)),
    ]


def _percent(part: object, whole: object) -> float | None:
    if part is None or whole is None or not float(str(whole)):
        return None
    return 100.0 * float(str(part)) / float(str(whole))


def _sums_query(cluster: str) -> Any:
    storage = models.Storage
    return (
        storage.select(
            peewee.fn.SUM(storage.capacity_bytes),
            peewee.fn.SUM(storage.used_bytes),
            peewee.fn.SUM(storage.total_inodes),
            peewee.fn.SUM(storage.used_inodes),
            *_both(storage.used_bytes, storage.capacity_bytes),
            *_both(storage.used_inodes, storage.total_inodes),
        )
        .where((storage.cluster == cluster) & storage.deleted_at.is_null())
        .tuples()
    )


def summed(db: peewee.Database, cluster: str) -> StorageTotals:
    """`cluster`'s sums over its backends not deleted, within a `reading` of the caller (its
    SQL built once: the overview asks for it on every request)."""
    sums = rows_built_once(db, _sums_query, cluster)[0]
    total, used, inodes, used_inodes = (None if s is None else int(s) for s in sums[:4])
    return StorageTotals(
        total_bytes=total,
        used_bytes=used,
        total_inodes=inodes,
        used_inodes=used_inodes,
        usage_percent=_percent(sums[4], sums[5]),
        inodes_usage_percent=_percent(sums[6], sums[7]),
    )


def storage_totals(db: peewee.Database, *, cluster: str) -> StorageTotals:
    """`cluster`'s storage sums (every figure None for a cluster with no backend)."""
    with reading(db):
        return summed(db, cluster)
