"""Every GPU with its latest fresh minute and its holders, read back from rows Lens's writers
wrote (tests/roles/api/usagerows.py): how fresh a minute must be, minutes ahead of now, pods with
several containers and containers outside pods, and the top-level workloads of pods."""

from __future__ import annotations

import dataclasses

import peewee
import pytest

from lens.reports.samples import Holder
from lens.store import database
from lens.store.queries import gpus
from lens.store.queries.reading import Page
from tests.roles.api.conftest import CLUSTER, T0, gpu, write_gpus
from tests.roles.api.usagerows import (
    at,
    gpu_cluster,
    gpu_minute,
    holder,
    pod,
    record_pods,
    write_minutes,
)

EVERY = Page(offset=0, limit=100)


def _by_key(db: peewee.Database, now: float, **wanted: str) -> dict[str, gpus.GpuRecord]:
    found = gpus.list_gpus(
        db,
        cluster=CLUSTER,
        wanted=gpus.GpuFilter(**wanted),
        sort=gpus.GpuSort(),
        page=EVERY,
        now=at(now),
    )
    return {f"{r.node_name}/{r.gpu_id}": r for r in found.rows}


def test_a_minute_is_live_for_five_minutes_and_never_before_it_starts(
    db: peewee.Database,
) -> None:
    latest = gpu_cluster(db, now=T0)
    fresh = _by_key(db, T0)["gpu-a/0"]
    assert (fresh.minute, fresh.utilization_ratio) == (at(latest), 0.5)
    assert (fresh.vram_used_bytes, fresh.power_watts, fresh.temperature_celsius) == (
        10.0 * 2**30,
        300.0,
        70.0,
    )
    last_moment = _by_key(db, latest + 300)["gpu-a/0"]
    assert last_moment.minute == at(latest)
    gone = _by_key(db, latest + 301)["gpu-a/0"]
    assert (gone.minute, gone.utilization_ratio, gone.holders) == (None, None, ())
    # gpu-b's minute 4 minutes after LATEST counts once it has started.
    assert _by_key(db, latest + 239)["gpu-b/0"].minute == at(latest)
    ahead = _by_key(db, latest + 240)["gpu-b/0"]
    assert (ahead.minute, ahead.utilization_ratio) == (at(latest + 240), 0.99)
    assert _by_key(db, T0 - 3600) == {
        key: dataclasses.replace(
            row,
            minute=None,
            utilization_ratio=None,
            vram_used_bytes=None,
            power_watts=None,
            temperature_celsius=None,
            holders=(),
        )
        for key, row in _by_key(db, T0).items()
    }


def test_holders_one_per_pod_longest_first(db: peewee.Database) -> None:
    write_gpus(db, "n1", (gpu(0),), time=T0)
    p1 = pod("p1", namespace="ml")
    record_pods(db, p1)
    builder = Holder(
        cluster="",
        namespace="",
        pod_name="",
        container="builder",
        pod_uid="",
        container_id="docker-builder",
    )
    start = T0 // 60 * 60 - 60
    shares = [(holder(p1), 35, 60), (holder(p1, "side"), 5, 20), (builder, 20, 30)]
    write_minutes(db, "n1", [gpu_minute(start, "GPU-0", held=shares)], now=T0)
    (row,) = _by_key(db, T0).values()
    assert row.holders == (
        gpus.Holder(
            namespace="ml",
            pod_name="pod-p1",
            pod_uid="p1",
            containers=("main", "side"),
            held_seconds=60.0,  # its containers together held it no less than the longest
            workload=None,  # a pod without an owner has no workload
        ),
        gpus.Holder(
            namespace="",
            pod_name="",
            pod_uid="",
            containers=("builder",),
            held_seconds=30.0,
            workload=None,
        ),
    )


def test_pods_top_level_workloads(db: peewee.Database) -> None:
    gpu_cluster(db, now=T0)
    with database.session(db):
        tops = gpus.top_workloads(CLUSTER, ["p1", "p2", "p3", "unknown", "p1"])
        assert gpus.top_workloads(CLUSTER, []) == {}
    assert tops == {
        "p1": gpus.Workload(uid="w1", kind="PyTorchJob", name="train", namespace="ml"),
        "p2": gpus.Workload(uid="d1", kind="Deployment", name="web", namespace="serve"),
    }


def test_only_allowed_columns_sort() -> None:
    with pytest.raises(ValueError, match="not sorted by"):
        gpus.GpuSort(column="gpu_devices.uuid")
    assert {gpus.GpuSort(column=c).column for c in gpus.SORTABLE} == set(gpus.SORTABLE)


def test_a_uuid_on_two_nodes_of_a_page_is_each_nodes_once(db: peewee.Database) -> None:
    # Older rows name GPUs "index:N" on every node: a page's GPUs are its (node, uuid) pairs.
    write_gpus(db, "node-1", (gpu(0, uuid="index:0"), gpu(1, uuid="index:1")))
    write_gpus(db, "node-2", (gpu(0, uuid="index:0"),))
    found = gpus.list_gpus(
        db,
        cluster=CLUSTER,
        wanted=gpus.GpuFilter(),
        sort=gpus.GpuSort(),
        page=Page(offset=1, limit=2),
        now=at(T0),
    )
    # Not node-1's index:0 as well, which the page's nodes and uuids would both let in.
    assert [(r.node_name, r.uuid) for r in found.rows] == [
        ("node-1", "index:1"),
        ("node-2", "index:0"),
    ]
    assert found.total == 3


def test_a_page_of_a_thousand_gpus(db: peewee.Database) -> None:
    """The largest page (api.max_page_size) reads in one query (a condition per GPU overflowed
    the SQL builder's recursion at a thousand)."""
    write_gpus(db, "big", tuple(gpu(i, uuid=f"GPU-{i:04d}") for i in range(1000)))
    found = gpus.list_gpus(
        db,
        cluster=CLUSTER,
        wanted=gpus.GpuFilter(),
        sort=gpus.GpuSort(),
        page=Page(offset=0, limit=1000),
        now=at(T0),
    )
    assert [r.uuid for r in found.rows] == [f"GPU-{i:04d}" for i in range(1000)]
    assert found.total == 1000
