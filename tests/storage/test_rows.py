"""The `storage` rows: written only when something changed, soft-deleted when their classes are
gone and back again, figures kept while the query API fails."""

from __future__ import annotations

import dataclasses
import datetime

import peewee
import pytest

from lens.storage.classes import StorageBackend
from lens.storage.rows import StorageRow, StorageRows
from lens.storage.secrets import SecretRef
from lens.storage.usage import ABSENT, VolumeUsage
from lens.store import models
from tests.conftest import others_may_write, write_lock_seen

T0 = datetime.datetime(2025, 3, 1, 12, 0, tzinfo=datetime.UTC)
REF = SecretRef(namespace="kube-system", name="jfs-secret")
JFS = StorageBackend(
    kind="juicefs",
    storage_class="jfs",
    provisioner="csi.juicefs.com",
    parameters=(),
    secrets=(("provisioner", REF),),
)
NFS = StorageBackend(
    kind="nfs",
    storage_class="nfs",
    provisioner="nfs.csi.k8s.io",
    parameters=(("server", "10.0.0.5"),),
    secrets=(),
)
FIGURES = VolumeUsage(capacity_bytes=100, used_bytes=40, total_inodes=10, used_inodes=4)


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime.datetime:
        return self.now


def _rows(usage: VolumeUsage | None = ABSENT) -> list[StorageRow]:
    return [
        StorageRow(
            kind="juicefs",
            name="datasets",
            backend=JFS,
            storage_classes=("jfs", "jfs-retain"),
            usage=usage,
        ),
        StorageRow(kind="nfs", name="nfs", backend=NFS, storage_classes=("nfs",), usage=ABSENT),
    ]


def _stored(name: str) -> models.Storage:
    return models.Storage.get(models.Storage.name == name)


def test_rows_are_written_once_and_then_only_when_they_change(db: peewee.Database) -> None:
    clock = Clock()
    rows = StorageRows(db, cluster="home", wall_time=clock)
    assert rows.write(_rows()) == 2
    stored = _stored("datasets")
    assert (stored.cluster, stored.kind, stored.source, stored.status) == (
        "home",
        "juicefs",
        "scan",
        "unknown",
    )
    assert (stored.provisioner, stored.storage_class) == ("csi.juicefs.com", "jfs")
    assert stored.config == {
        "storage_classes": ["jfs", "jfs-retain"],
        "parameters": {},
        "secrets": {"provisioner": {"Namespace": "kube-system", "Name": "jfs-secret"}},
        "meta_secret": {"Namespace": "kube-system", "Name": "jfs-secret"},
    }
    assert stored.capacity_bytes is None and stored.usage_read_at is None
    clock.now += datetime.timedelta(minutes=1)
    assert rows.write(_rows()) == 0, "nothing changed: nothing written"
    assert _stored("datasets").updated_at == T0

    assert rows.write(_rows(FIGURES)) == 1
    stored = _stored("datasets")
    assert (stored.capacity_bytes, stored.used_bytes) == (100, 40)
    assert (stored.total_inodes, stored.used_inodes) == (10, 4)
    assert stored.usage_read_at == clock.now
    read_at = clock.now
    clock.now += datetime.timedelta(minutes=1)
    assert rows.write(_rows(FIGURES)) == 0, "the same figures read again cost no write"
    assert rows.write(_rows(None)) == 0, "a failed query keeps the figures"
    assert _stored("datasets").usage_read_at == read_at
    assert rows.write(_rows(dataclasses.replace(FIGURES, used_bytes=41))) == 1
    assert _stored("datasets").usage_read_at == clock.now
    assert rows.write(_rows(ABSENT)) == 1, "figures gone from the query API are absent"
    assert _stored("datasets").used_bytes is None and _stored("datasets").usage_read_at is None


def test_a_backend_gone_is_soft_deleted_and_comes_back(db: peewee.Database) -> None:
    clock = Clock()
    rows = StorageRows(db, cluster="home", wall_time=clock)
    models.Storage.create(cluster="home", kind="weka", name="by-hand", source="manual")
    models.Storage.create(cluster="east", kind="nfs", name="nfs", source="scan")
    rows.write(_rows(FIGURES))
    clock.now += datetime.timedelta(minutes=1)
    assert rows.write(_rows(FIGURES)[:1]) == 1
    assert _stored("datasets").deleted_at is None
    gone = models.Storage.get((models.Storage.cluster == "home") & (models.Storage.name == "nfs"))
    assert gone.deleted_at == clock.now
    assert _stored("by-hand").deleted_at is None, "rows of other sources are left alone"
    other = models.Storage.get(models.Storage.cluster == "east")
    assert other.deleted_at is None, "as are other clusters' rows"
    assert rows.write(_rows(FIGURES)[:1]) == 0

    clock.now += datetime.timedelta(minutes=1)
    assert rows.write(_rows(FIGURES)) == 1
    back = models.Storage.get((models.Storage.cluster == "home") & (models.Storage.name == "nfs"))
    assert back.deleted_at is None and back.created_at == T0
    assert back.id == gone.id


def test_the_stored_rows_are_read_under_the_write_lock(
    sqlite_db: peewee.Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As nodes' rows (tests/kube/cluster/test_noderows.py): read first, then the lock was lost.
    seen = write_lock_seen(monkeypatch, StorageRows, "_stored", sqlite_db)
    assert StorageRows(sqlite_db, cluster="home", wall_time=Clock()).write(_rows()) == 2
    assert seen == [False] and others_may_write(sqlite_db)
