"""The cluster's storage figures: capacity and inodes summed over the backends of the `storage`
table (the storage scan, docs/storage.md), for /v1/storage/stat and the overview (clusters.py),
so both show the same figures. None where no backend's figure is known.
"""

from __future__ import annotations

import dataclasses

import peewee

from lens.store import database, models
from lens.store.queries.reading import reading


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class StorageTotals:
    """Sums over the storage backends whose figure is known; None where none is."""

    total_bytes: int | None = None
    used_bytes: int | None = None
    total_inodes: int | None = None
    used_inodes: int | None = None


def summed(cluster: str) -> StorageTotals:
    """`cluster`'s sums over its backends not deleted, within a `reading` of the caller."""
    storage = models.Storage
    query = (
        storage.select(
            peewee.fn.SUM(storage.capacity_bytes),
            peewee.fn.SUM(storage.used_bytes),
            peewee.fn.SUM(storage.total_inodes),
            peewee.fn.SUM(storage.used_inodes),
        )
        .where((storage.cluster == cluster) & storage.deleted_at.is_null())
        .tuples()
    )
    sums = next(iter(database.tuple_rows(query)))
    total, used, inodes, used_inodes = (None if s is None else int(s) for s in sums)
    return StorageTotals(
        total_bytes=total, used_bytes=used, total_inodes=inodes, used_inodes=used_inodes
    )


def storage_totals(db: peewee.Database, *, cluster: str) -> StorageTotals:
    """`cluster`'s storage sums (every figure None for a cluster with no backend)."""
    with reading(db):
        return summed(cluster)
