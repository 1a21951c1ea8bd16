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
        total_bytes=2**50, used_bytes=2**49, usage_percent=50.0
    )


def _row(name: str, usage: VolumeUsage) -> StorageRow:
    backend = StorageBackend(
        kind="juicefs", storage_class=name, provisioner="csi.juicefs.com", parameters=(), secrets=()
    )
    return StorageRow(
        kind="juicefs", name=name, backend=backend, storage_classes=(name,), usage=usage
    )


def test_a_share_is_over_the_backends_knowing_both_figures(db: peewee.Database) -> None:
    # A backend whose use is unknown adds to the capacity, not to what the use is a share of.
    tb = 10**12
    rows = [
        _row("a", VolumeUsage(capacity_bytes=10 * tb, used_bytes=9 * tb)),
        _row("b", VolumeUsage(capacity_bytes=90 * tb)),
    ]
    StorageRows(db, cluster=CLUSTER, wall_time=lambda: NOW).write(rows)
    sums = storage.storage_totals(db, cluster=CLUSTER)
    assert (sums.total_bytes, sums.used_bytes) == (100 * tb, 9 * tb)
    assert sums.usage_percent == 90.0
    assert sums.inodes_usage_percent is None
