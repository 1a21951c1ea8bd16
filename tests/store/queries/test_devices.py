"""A node's GPUs and device changelog: a node known from `nodes` or from its agent's rows, None
for one never heard of (the API's 404); filters and newest first."""

from __future__ import annotations

import peewee

from lens.store.queries import devices
from lens.store.queries.reading import Page
from tests.roles.api.conftest import CLUSTER, T0, gpu, node, write_gpus, write_nodes


def test_gpus_of_known_and_unknown_nodes(db: peewee.Database) -> None:
    write_nodes(db, node("listed"))
    write_gpus(db, "agent-only", (gpu(1), gpu(0, vram_bytes=None)))
    found = devices.gpu_devices(db, cluster=CLUSTER, node_name="agent-only")
    assert found is not None
    assert [(g.gpu_id, g.uuid, g.memory_mib) for g in found] == [
        (0, "GPU-0", None),
        (1, "GPU-1", 192 * 1024),
    ]
    assert devices.gpu_devices(db, cluster=CLUSTER, node_name="listed") == ()
    assert devices.gpu_devices(db, cluster=CLUSTER, node_name="nowhere") is None


def test_changelog_filtered_and_paged(db: peewee.Database) -> None:
    write_gpus(db, "gpu-a", (gpu(0), gpu(1)))
    write_gpus(db, "gpu-a", (gpu(0),), time=T0 + 60)
    every = devices.changelog(
        db,
        cluster=CLUSTER,
        node_name="gpu-a",
        wanted=devices.ChangelogFilter(),
        page=Page(limit=1),
    )
    assert every is not None and every.total == 3
    assert [(r.op, r.device_uuid) for r in every.rows] == [("DELETE", "GPU-1")]
    created = devices.changelog(
        db,
        cluster=CLUSTER,
        node_name="gpu-a",
        wanted=devices.ChangelogFilter(device_type="gpu", op="CREATE"),
        page=Page(limit=10),
    )
    assert created is not None and created.total == 2
    assert {r.created_at.timestamp() for r in created.rows} == {T0}
    none = devices.changelog(
        db, cluster=CLUSTER, node_name="x", wanted=devices.ChangelogFilter(), page=Page()
    )
    assert none is None
