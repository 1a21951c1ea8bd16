"""The `storage` table kept current from the storage scan (scanning.py): a row is written only
when something in it changed, a backend whose StorageClasses are gone keeps its row with
deleted_at set (cleared when one comes back), and a Secret appears only as a reference.

Rows of other sources (a backend entered by hand) are left alone.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Callable, Mapping, Sequence

import peewee

from lens.storage.classes import StorageBackend
from lens.storage.usage import ABSENT, VolumeUsage
from lens.store import database, models, upserting

SOURCE = "scan"
# The original's health levels (ok, degraded, warn, error, unknown); health is not judged yet.
UNKNOWN = "unknown"

_DESCRIBED = ("config", "status", "provisioner", "storage_class")
_USAGE = tuple(f.name for f in dataclasses.fields(VolumeUsage))


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class StorageRow:
    """A `storage` row as the scan writes it."""

    kind: str
    name: str
    backend: StorageBackend  # the first (by name) of the classes naming this backend
    storage_classes: tuple[str, ...]  # every class naming it
    usage: VolumeUsage | None  # None: not read this time, the stored figures stay
    status: str = UNKNOWN

    def config(self) -> dict[str, object]:
        """The `config` column: references and descriptive parameters, no Secret's content."""
        config: dict[str, object] = {
            "storage_classes": list(self.storage_classes),
            "parameters": dict(self.backend.parameters),
            "secrets": {role: ref.to_json() for role, ref in self.backend.secrets},
        }
        meta = self.backend.meta_secret
        if meta is not None:
            config["meta_secret"] = meta.to_json()  # the original's key
        return config

    def described(self) -> dict[str, object]:
        return {
            "config": self.config(),
            "status": self.status,
            "provisioner": self.backend.provisioner,
            "storage_class": self.backend.storage_class,
        }


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class _Stored:
    id: int
    described: dict[str, object]
    usage: VolumeUsage
    usage_read_at: datetime.datetime | None
    deleted_at: datetime.datetime | None


class StorageRows:
    """Writes one cluster's scanned storage rows (a handful: all are read once per scan)."""

    def __init__(
        self, db: peewee.Database, *, cluster: str, wall_time: Callable[[], datetime.datetime]
    ) -> None:
        self._db = db
        self._cluster = cluster
        self._now = wall_time

    def write(self, rows: Sequence[StorageRow]) -> int:
        """Store `rows` (every backend found now); returns how many rows were written."""
        with database.session(self._db):
            # It reads the stored rows before writing: the write lock first (database.py).
            return database.idempotent_transaction(
                self._db, lambda: self._write(rows), lock_first=True
            )

    def _write(self, rows: Sequence[StorageRow]) -> int:
        stored = self._stored()
        now = self._now()
        changed = []
        for row in rows:
            values = _values(row, stored.get((row.kind, row.name)), now)
            if values is not None:
                # created_at is written by the insert only (store/upserting.py).
                changed.append(
                    {**values, "cluster": self._cluster, "created_at": now, "updated_at": now}
                )
        present = {(row.kind, row.name) for row in rows}
        gone = [s.id for key, s in stored.items() if key not in present and s.deleted_at is None]
        if gone:
            table = models.Storage
            table.update(deleted_at=now, updated_at=now).where(table.id.in_(gone)).execute()
        return upserting.upsert(models.Storage, changed) + len(gone)

    def _stored(self) -> Mapping[tuple[str, str], _Stored]:
        table = models.Storage
        columns = ("id", "kind", "name", *_DESCRIBED, *_USAGE, "usage_read_at", "deleted_at")
        query = (
            table.select(*(getattr(table, c) for c in columns))
            .where((table.cluster == self._cluster) & (table.source == SOURCE))
            .tuples()
        )
        found = {}
        for values in database.tuple_rows(query):
            row = dict(zip(columns, values, strict=True))
            found[(str(row["kind"]), str(row["name"]))] = _Stored(
                id=int(row["id"]),
                described={c: row[c] for c in _DESCRIBED},
                usage=VolumeUsage(**{c: row[c] for c in _USAGE}),
                usage_read_at=row["usage_read_at"],
                deleted_at=row["deleted_at"],
            )
        return found


def _values(
    row: StorageRow, before: _Stored | None, now: datetime.datetime
) -> dict[str, object] | None:
    """The row's columns when something in it changed; None when the stored row is current."""
    described = row.described()
    usage, read_at = _usage(row, before, now)
    if (
        before is not None
        and before.deleted_at is None
        and before.described == described
        and before.usage == usage
    ):
        return None
    return {
        "kind": row.kind,
        "name": row.name,
        "source": SOURCE,
        **described,
        **dataclasses.asdict(usage),
        "usage_read_at": read_at,
        "deleted_at": None,
    }


def _usage(
    row: StorageRow, before: _Stored | None, now: datetime.datetime
) -> tuple[VolumeUsage, datetime.datetime | None]:
    """The figures to store and when they were read. Figures read again unchanged keep their
    first reading's time, so that an unchanged volume costs no write."""
    if row.usage is None:
        return (before.usage, before.usage_read_at) if before is not None else (ABSENT, None)
    if before is not None and before.usage == row.usage:
        return row.usage, before.usage_read_at
    return row.usage, (None if row.usage == ABSENT else now)
