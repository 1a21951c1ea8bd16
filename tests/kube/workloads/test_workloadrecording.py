"""Workloads into the store on every engine: rows updated, requests and ends kept, references
once, snapshots bounded, and workloads deleted unseen closed — those that ended before keeping
their outcome."""

from __future__ import annotations

import dataclasses
import datetime

import peewee

from lens.kube.workloads.rows import WorkloadState
from lens.kube.workloads.workloadrecording import WorkloadRecorder, WorkloadWrite
from lens.store import models

NOW = datetime.datetime(2026, 11, 21, 5, tzinfo=datetime.UTC)
STATE = WorkloadState(
    uid="w1",
    group_version="kubeflow.org/v1",
    kind="PyTorchJob",
    namespace="ml",
    name="bert",
    parent_uid="",
    labels={"team": "nlp"},
    status="Running",
    status_reason="",
    gpu_request=16,
    request_is_live=True,
    created_at=datetime.datetime(2026, 11, 21, 1, tzinfo=datetime.UTC),
    end_at=None,
    deleted_at=None,
    pod_uids=("p1", "p2"),
)


def _write(state: WorkloadState, version: int, *, snapshot: bool = True) -> WorkloadWrite:
    obj = {"kind": state.kind, "metadata": {"uid": state.uid, "resourceVersion": str(version)}}
    return WorkloadWrite(state=state, object=obj, snapshot=snapshot)


def _recorder(db: peewee.Database, history: int = 3) -> WorkloadRecorder:
    return WorkloadRecorder(db, cluster="c1", snapshot_history=history, wall_time=lambda: NOW)


def _row() -> models.GpuWorkload:
    return models.GpuWorkload.get(models.GpuWorkload.uid == "w1")


def test_a_row_is_updated_as_the_workload_changes(db: peewee.Database) -> None:
    recorder = _recorder(db)
    recorder.record([_write(STATE, 10)])
    assert (_row().status, _row().gpu_request, _row().labels) == ("Running", 16, {"team": "nlp"})
    relabeled = dataclasses.replace(STATE, labels={"team": "vision"}, pod_uids=("p1", "p3"))
    recorder.record([_write(relabeled, 11)])
    row = _row()
    assert row.labels == {"team": "vision"} and row.source == "k8s"
    references = {(r.workload_uid, r.pod_uid) for r in models.WorkloadPodReference.select()}
    assert references == {("w1", "p1"), ("w1", "p2"), ("w1", "p3")}
    assert models.WorkloadPodReference.select().count() == 3


def test_an_ended_workload_keeps_its_request_and_its_end(db: peewee.Database) -> None:
    recorder = _recorder(db)
    recorder.record([_write(STATE, 10)])
    finished = datetime.datetime(2026, 11, 21, 4, tzinfo=datetime.UTC)
    failed = dataclasses.replace(
        STATE,
        status="Failed",
        status_reason="BackoffLimitExceeded",
        gpu_request=2,
        request_is_live=False,
        end_at=finished,
    )
    recorder.record([_write(failed, 11)])
    row = _row()
    assert (row.status, row.status_reason, row.gpu_request, row.end_at) == (
        "Failed",
        "BackoffLimitExceeded",
        16,
        finished,
    )
    later = dataclasses.replace(failed, end_at=NOW, pod_uids=())  # its pods gone from the caches
    recorder.record([_write(later, 12)])
    deleted = dataclasses.replace(later, deleted_at=NOW)  # its TTL deleted it: still Failed
    recorder.record([_write(deleted, 13)])
    row = _row()
    assert (row.status, row.gpu_request, row.end_at, row.deleted_at) == (
        "Failed",
        16,
        finished,
        NOW,
    )
    assert recorder.open_workloads() == []


def test_first_seen_finished_a_workload_is_stored_with_what_its_pods_asked(
    db: peewee.Database,
) -> None:
    done = dataclasses.replace(STATE, status="Succeeded", gpu_request=4, request_is_live=False)
    _recorder(db).record([_write(done, 10)])
    assert _row().gpu_request == 4


def test_running_again_clears_the_end(db: peewee.Database) -> None:
    recorder = _recorder(db)
    done = dataclasses.replace(STATE, status="Succeeded", request_is_live=False, end_at=NOW)
    recorder.record([_write(done, 10)])
    recorder.record([_write(STATE, 11)])
    assert (_row().status, _row().end_at) == ("Running", None)


def test_pending_is_not_an_end(db: peewee.Database) -> None:
    recorder = _recorder(db)
    recorder.record([_write(dataclasses.replace(STATE, status="Pending"), 10)])
    assert (_row().status, _row().end_at) == ("Pending", None)
    recorder.record([_write(STATE, 11)])
    assert (_row().status, _row().end_at) == ("Running", None)


def test_snapshots_are_kept_to_the_history(db: peewee.Database) -> None:
    recorder = _recorder(db, history=3)
    for version in range(10, 16):
        recorder.record([_write(STATE, version)])
    recorder.record([_write(STATE, 16, snapshot=False)])
    recorder.record([_write(STATE, 15)])  # a replay writes nothing twice
    kept = [s.resource_version for s in models.GpuWorkloadSnapshot.select()]
    assert sorted(kept) == [13, 14, 15]
    assert recorder.with_snapshots(["w1", "w2"]) == {"w1"}


def test_open_workloads_and_closing_those_a_listing_lacks(db: peewee.Database) -> None:
    recorder = _recorder(db)
    other = dataclasses.replace(STATE, uid="w2", name="gpt", pod_uids=())
    job = dataclasses.replace(STATE, uid="w3", kind="Job", group_version="batch/v1", pod_uids=())
    finished = dataclasses.replace(
        STATE, uid="w4", name="done", status="Succeeded", end_at=NOW, pod_uids=()
    )
    recorder.record([_write(STATE, 1), _write(other, 2), _write(job, 3), _write(finished, 4)])
    assert sorted(w.uid for w in recorder.open_workloads()) == ["w1", "w2", "w3", "w4"]
    closed = recorder.close_missing("kubeflow.org/v1", "PyTorchJob", {"w1"})
    assert sorted(closed) == ["w2", "w4"]
    gone = models.GpuWorkload.get(models.GpuWorkload.uid == "w2")
    assert (gone.status, gone.end_at, gone.deleted_at) == ("Deleted", NOW, NOW)
    ended = models.GpuWorkload.get(models.GpuWorkload.uid == "w4")
    assert (ended.status, ended.deleted_at) == ("Succeeded", NOW)  # it ended before it went
    assert sorted(w.uid for w in recorder.open_workloads()) == ["w1", "w3"]
    assert recorder.close_missing("kubeflow.org/v1", "PyTorchJob", {"w1"}) == []
