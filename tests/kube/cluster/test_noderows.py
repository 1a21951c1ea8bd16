"""The nodes table: a row written only when something in it changed; a node gone is Deleted."""

from __future__ import annotations

import dataclasses
import datetime
import json

import peewee
import pytest

from lens.kube.cluster import nodefacts
from lens.kube.cluster.noderows import DELETED, NodeRow, NodeRows, node_row
from lens.sim.scenario import manifests
from lens.store import database, models
from tests.conftest import others_may_write, write_lock_seen

NOW = datetime.datetime(2026, 11, 24, 10, 0, tzinfo=datetime.UTC)


def _row(
    name: str, *, allocated: int = 4, utilization: float | None = 50.0, driver: str = ""
) -> NodeRow:
    node = manifests.node(name, model="MI300X", gpus=8, address="10.0.0.9")
    node["spec"]["taints"] = [{"key": "gpu", "value": "true", "effect": "NoSchedule"}]
    facts = nodefacts.facts(
        node, gpu_resources=("amd.com/gpu",), gpu_model_labels=("amd.com/gpu.product-name",)
    )
    return node_row(
        facts, allocated=allocated, utilization_percent=utilization, driver_version=driver
    )


def _stored(db: peewee.Database) -> dict[str, models.Node]:
    with database.session(db):
        return {n.name: n for n in models.Node.select().where(models.Node.cluster == "c1")}


def test_rows_are_written_once_and_then_only_when_they_change(db: peewee.Database) -> None:
    rows = NodeRows(db, cluster="c1", wall_time=lambda: NOW)
    assert rows.write([_row("a", driver="6.8.5"), _row("b")]) == 2
    assert rows.write([_row("a", driver="6.8.5"), _row("b")]) == 0
    assert rows.write([_row("a", driver="6.8.5", allocated=8), _row("b")]) == 1
    stored = _stored(db)["a"]
    assert (stored.gpu_allocation, stored.gpu_count, stored.gpu_utilization) == (8, 8, 50.0)
    assert (stored.status, stored.k8s_status, stored.address) == ("Ready", "Ready", "10.0.0.9")
    assert (stored.memory, stored.memory_bytes) == ("2113459300Ki", 2113459300 * 1024)
    assert (stored.k8s_version, stored.containerd_version) == ("v1.31.4", "containerd://1.7.24")
    assert stored.kernel_version == "5.15.0-131-generic" and stored.driver_version == "6.8.5"
    assert json.loads(stored.taints) == [{"key": "gpu", "value": "true", "effect": "NoSchedule"}]


def test_a_driver_version_unknown_for_now_keeps_the_stored_one(db: peewee.Database) -> None:
    rows = NodeRows(db, cluster="c1", wall_time=lambda: NOW)
    rows.write([_row("a", driver="6.8.5")])
    assert rows.write([_row("a", driver="")]) == 0
    assert _stored(db)["a"].driver_version == "6.8.5"


def test_a_node_gone_is_marked_deleted_once(db: peewee.Database) -> None:
    rows = NodeRows(db, cluster="c1", wall_time=lambda: NOW)
    rows.write([_row("a"), _row("b")])
    assert rows.write([_row("a")]) == 1
    gone = _stored(db)["b"]
    assert (gone.status, gone.gpu_allocation) == (DELETED, 0)
    assert rows.write([_row("a")]) == 0
    assert rows.write([_row("a"), _row("b")]) == 1  # back
    assert _stored(db)["b"].status == "Ready"


def test_an_unknown_utilization_is_stored_as_unknown(db: peewee.Database) -> None:
    rows = NodeRows(db, cluster="c1", wall_time=lambda: NOW)
    rows.write([dataclasses.replace(_row("a"), gpu_utilization=None)])
    assert _stored(db)["a"].gpu_utilization is None


def test_the_stored_rows_are_read_under_the_write_lock(
    sqlite_db: peewee.Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A transaction that read first took SQLite's write lock only at its first write, and
    # failed there at once ("database is locked") whenever another connection had written
    # since its read: `lens demo`'s controller and jobs share one file.
    seen = write_lock_seen(monkeypatch, NodeRows, "_stored", sqlite_db)
    assert NodeRows(sqlite_db, cluster="c1", wall_time=lambda: NOW).write([_row("a")]) == 1
    assert seen == [False] and others_may_write(sqlite_db)
