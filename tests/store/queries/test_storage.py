"""The storage sums: None for a cluster with no backend, else over its backends present."""

from __future__ import annotations

import peewee

from lens.storage.classes import StorageBackend
from lens.storage.rows import StorageRow, StorageRows
from lens.storage.usage import VolumeUsage
from lens.store.queries import storage
from lens.store.queries.storage import StorageTotals
from tests.roles.api.conftest import CLUSTER, NOW


def test_sums_over_the_clusters_backends(db: peewee.Database) -> None:
    assert storage.storage_totals(db, cluster=CLUSTER) == StorageTotals()
    backend = StorageBackend(
        kind="juicefs",
        storage_class="jfs",
        provisioner="csi.juicefs.com",
        parameters=(),
        secrets=(),
    )
    usage = VolumeUsage(capacity_bytes=2**50, used_bytes=2**49)
    row = StorageRow(
        kind="juicefs", name="jfs", backend=backend, storage_classes=("jfs",), usage=usage
    )
    StorageRows(db, cluster=CLUSTER, wall_time=lambda: NOW).write([row])
    StorageRows(db, cluster="c2", wall_time=lambda: NOW).write([row])
    assert storage.storage_totals(db, cluster=CLUSTER) == StorageTotals(
        total_bytes=2**50, used_bytes=2**49
    )
