"""GPU pods and workloads that ended while no controller watched, settled from a pod cache: only
what the cache proves, only forward, and an ended workload is not looked at again."""

from __future__ import annotations

import datetime
from typing import Any

import peewee
import pytest

from lens.kube.cluster.liveness import Liveness
from lens.kube.workloads.podrecording import GpuPodRecorder
from lens.store import database, models
from tests.conftest import others_may_write, write_lock_seen

NOW = datetime.datetime(2026, 11, 24, 10, 0, tzinfo=datetime.UTC)
OLD = NOW - datetime.timedelta(hours=1)
GRACE = datetime.timedelta(minutes=2)


def _liveness(db: peewee.Database) -> Liveness:
    recorder = GpuPodRecorder(
        db,
        cluster="c1",
        resources=("amd.com/gpu",),
        snapshot_history=3,
        gpu_model=lambda node: "MI300X",
        wall_time=lambda: NOW,
    )
    return Liveness(db, cluster="c1", recorder=recorder, grace=GRACE, wall_time=lambda: NOW)


def _pod_row(uid: str, *, phase: str = "Running", created: datetime.datetime = OLD) -> None:
    models.GpuPod.create(
        cluster="c1",
        namespace="ml",
        name=uid,
        uid=uid,
        node_name="n1",
        gpu_allocated=8,
        phase=phase,
        running=phase == "Running",
        created_at=created,
        updated_at=created,
    )


def _pod(uid: str, phase: str, *, finished: str | None = None) -> dict[str, Any]:
    status: dict[str, Any] = {"phase": phase}
    if finished:
        status["containerStatuses"] = [
            {"name": "main", "state": {"terminated": {"finishedAt": finished, "exitCode": 0}}}
        ]
    return {
        "metadata": {"uid": uid, "name": uid, "namespace": "ml", "resourceVersion": "9"},
        "spec": {
            "nodeName": "n1",
            "containers": [{"name": "main", "resources": {"limits": {"amd.com/gpu": "8"}}}],
        },
        "status": status,
    }


def _workload(uid: str, pods: list[str]) -> None:
    models.GpuWorkload.create(
        cluster="c1", uid=uid, kind="PyTorchJob", namespace="ml", name=uid, status="Running"
    )
    for pod in pods:
        models.WorkloadPodReference.create(cluster="c1", workload_uid=uid, pod_uid=pod)


def _pods(db: peewee.Database) -> dict[str, models.GpuPod]:
    with database.session(db):
        return {p.uid: p for p in models.GpuPod.select()}


def _workloads(db: peewee.Database) -> dict[str, models.GpuWorkload]:
    with database.session(db):
        return {w.uid: w for w in models.GpuWorkload.select()}


def test_a_pod_gone_from_the_cache_is_closed_once_past_the_grace(db: peewee.Database) -> None:
    with database.session(db):
        _pod_row("gone")
        _pod_row("new", created=NOW - datetime.timedelta(seconds=30))  # may not be cached yet
        _pod_row("here")
    cache = {"here": _pod("here", "Running")}
    settled = _liveness(db).settle(cache.get)
    assert settled.pods_closed == 1
    pods = _pods(db)
    assert (pods["gone"].deleted, pods["gone"].running) == (True, False)
    assert not pods["new"].deleted and not pods["here"].deleted
    again = _liveness(db).settle(cache.get)
    assert (again.pods_closed, again.phases_persisted, again.workloads_ended) == (0, 0, 0)


def test_a_phase_is_persisted_only_forward(db: peewee.Database) -> None:
    with database.session(db):
        _pod_row("started", phase="Pending")
        _pod_row("finished", phase="Running")
        _pod_row("behind", phase="Succeeded")
    cache = {
        "started": _pod("started", "Running"),
        "finished": _pod("finished", "Succeeded", finished="2026-11-24T09:30:00Z"),
        "behind": _pod("behind", "Running"),  # a cache a moment behind the controller
    }
    assert _liveness(db).settle(cache.get).phases_persisted == 2
    pods = _pods(db)
    assert (pods["started"].phase, pods["started"].running) == ("Running", True)
    assert (pods["finished"].phase, pods["finished"].running) == ("Succeeded", False)
    assert pods["behind"].phase == "Succeeded"
    assert _liveness(db).settle(cache.get).phases_persisted == 0


def test_a_workload_without_live_pods_ends_as_its_pods_did_or_deleted(
    db: peewee.Database,
) -> None:
    with database.session(db):
        for uid in ("a1", "a2", "b1", "c1", "d1", "e1"):
            _pod_row(uid)
        _workload("done", ["a1", "a2"])  # its pods finished and are still there
        _workload("fine", ["e1"])
        _workload("deleted", ["b1"])  # its pod went with it
        _workload("running", ["c1"])
        _workload("waiting", ["d1"])  # its pod is new to the store, not yet in this cache
        models.GpuPod.update(created_at=NOW).where(models.GpuPod.uid == "d1").execute()
    cache = {
        "a1": _pod("a1", "Succeeded", finished="2026-11-24T09:10:00Z"),
        "a2": _pod("a2", "Failed", finished="2026-11-24T09:20:00Z"),
        "c1": _pod("c1", "Running"),
        "e1": _pod("e1", "Succeeded", finished="2026-11-24T09:05:00Z"),
    }
    settled = _liveness(db).settle(cache.get)
    assert (settled.pods_closed, settled.workloads_ended) == (1, 3)
    workloads = _workloads(db)
    assert (workloads["done"].status, workloads["done"].status_reason) == ("Failed", "Error")
    assert (workloads["fine"].status, workloads["fine"].status_reason) == ("Succeeded", "")
    assert workloads["done"].end_at == datetime.datetime(2026, 11, 24, 9, 20, tzinfo=datetime.UTC)
    assert (workloads["deleted"].status, workloads["deleted"].end_at) == ("Deleted", NOW)
    assert workloads["running"].end_at is None and workloads["waiting"].end_at is None
    assert _liveness(db).settle(cache.get).workloads_ended == 0  # ended ones are not re-checked


def test_workloads_are_read_and_ended_under_the_write_lock(
    sqlite_db: peewee.Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As nodes' rows (tests/kube/cluster/test_noderows.py): read first, then the lock was lost.
    with database.session(sqlite_db):
        _pod_row("b1")
        _workload("deleted", ["b1"])
    seen = write_lock_seen(monkeypatch, Liveness, "_end_workloads", sqlite_db)
    assert _liveness(sqlite_db).settle({}.get).workloads_ended == 1
    assert seen == [False] and others_may_write(sqlite_db)
