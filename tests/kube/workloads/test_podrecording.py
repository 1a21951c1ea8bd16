"""GPU pods' changes into the store: rows, transitions once, bounded snapshots, resources."""

from __future__ import annotations

import copy
import datetime

import peewee

from lens.kube.machinery.cache import Change, ChangeType
from lens.kube.workloads.gpupods import DEFAULT_GPU_RESOURCES
from lens.kube.workloads.podrecording import GpuPodRecorder
from lens.store import models

NOW = datetime.datetime(2026, 11, 21, 5, tzinfo=datetime.UTC)


def _pod(uid: str, rv: int, *, phase: str = "Pending", ready: str = "", gpus: int = 2) -> dict:
    conditions = [
        {"type": "PodScheduled", "status": "True", "lastTransitionTime": "2026-11-21T01:00:01Z"}
    ]
    if ready:
        conditions.append({"type": "Ready", "status": "True", "lastTransitionTime": ready})
    status: dict = {"phase": phase, "conditions": conditions, "podIP": "10.0.0.9"}
    if phase == "Succeeded":
        status["containerStatuses"] = [
            {"name": "main", "state": {"terminated": {"finishedAt": "2026-11-21T04:00:00Z"}}}
        ]
    return {
        "metadata": {
            "uid": uid,
            "name": f"pod-{uid}",
            "namespace": "ml",
            "resourceVersion": str(rv),
            "creationTimestamp": "2026-11-21T01:00:00Z",
            "labels": {"app": "train"},
        },
        "spec": {
            "nodeName": "n1",
            "containers": [{"name": "main", "resources": {"limits": {"amd.com/gpu": gpus}}}],
        },
        "status": status,
    }


def _recorder(db: peewee.Database, history: int = 3) -> GpuPodRecorder:
    return GpuPodRecorder(
        db,
        cluster="c1",
        resources=DEFAULT_GPU_RESOURCES,
        snapshot_history=history,
        gpu_model=lambda node: {"n1": "AMD Instinct MI300X"}.get(node, ""),
        wall_time=lambda: NOW,
    )


def test_a_pods_life_is_stored_once_whatever_is_replayed(db: peewee.Database) -> None:
    recorder = _recorder(db)
    pending = _pod("u1", 1)
    running = _pod("u1", 2, phase="Running", ready="2026-11-21T01:00:10Z")
    done = _pod("u1", 3, phase="Succeeded", ready="2026-11-21T01:00:10Z")
    steps = [
        Change(type=ChangeType.ADDED, object=pending, old=None),
        Change(type=ChangeType.MODIFIED, object=running, old=pending),
        Change(type=ChangeType.MODIFIED, object=done, old=running),
    ]
    for step in steps:
        recorder.record([step])
    # A restarted controller relists: it sees the pod for the first time again.
    again = _recorder(db).record([Change(type=ChangeType.ADDED, object=done, old=None)])
    assert (again.events, again.snapshots) == (0, 0)
    (pod,) = models.GpuPod.select()
    assert (pod.phase, pod.running, pod.deleted, pod.gpu_allocated, pod.ip) == (
        "Succeeded",
        False,
        False,
        2,
        "10.0.0.9",
    )
    assert pod.created_at == datetime.datetime(2026, 11, 21, 1, tzinfo=datetime.UTC)
    events = sorted((e.event_type, e.status) for e in models.GpuPodEvent.select())
    assert events == [
        ("Phase", "Pending"),
        ("Phase", "Running"),
        ("Phase", "Succeeded"),
        ("PodScheduled", "True"),
        ("Ready", "True"),
    ]
    (resource,) = models.PodResource.select()
    assert (resource.gpu_model, resource.gpu_allocated) == ("AMD Instinct MI300X", 2)
    assert resource.end_at == datetime.datetime(2026, 11, 21, 4, tzinfo=datetime.UTC)
    assert models.PodSnapshot.select().count() == 3


def test_snapshots_only_on_meaningful_changes_and_bounded(db: peewee.Database) -> None:
    recorder = _recorder(db, history=2)
    previous = _pod("u1", 1)
    recorder.record([Change(type=ChangeType.ADDED, object=previous, old=None)])
    bookkeeping = copy.deepcopy(previous)
    bookkeeping["metadata"]["resourceVersion"] = "2"
    bookkeeping["metadata"]["managedFields"] = [{"manager": "kubelet"}]
    assert (
        recorder.record(
            [Change(type=ChangeType.MODIFIED, object=bookkeeping, old=previous)]
        ).snapshots
        == 0
    )
    previous = bookkeeping
    for rv in range(3, 7):
        relabelled = copy.deepcopy(previous)
        relabelled["metadata"]["resourceVersion"] = str(rv)
        relabelled["metadata"]["labels"] = {"step": str(rv)}
        recorder.record([Change(type=ChangeType.MODIFIED, object=relabelled, old=previous)])
        previous = relabelled
    versions = sorted(s.resource_version for s in models.PodSnapshot.select())
    assert versions == [5, 6]


def test_deletions_seen_and_missed_and_pods_without_gpus(db: peewee.Database) -> None:
    recorder = _recorder(db)
    listed = [
        Change(type=ChangeType.ADDED, object=_pod("seen", 1, phase="Running"), old=None),
        Change(type=ChangeType.ADDED, object=_pod("missed", 2, phase="Running"), old=None),
        Change(type=ChangeType.ADDED, object=_pod("cpu", 3, gpus=0), old=None),
    ]
    assert [c.object["metadata"]["uid"] for c in recorder.gpu_changes(listed)] == [
        "seen",
        "missed",
    ]
    recorder.record(recorder.gpu_changes(listed))
    gone = _pod("seen", 4, phase="Running")
    recorder.record([Change(type=ChangeType.DELETED, object=gone, old=gone)])
    assert recorder.close_missing({"seen"}) == 1  # "missed" is not in the listing
    pods = {p.uid: p for p in models.GpuPod.select()}
    assert set(pods) == {"seen", "missed"}, "pods without GPUs are not stored"
    assert all(p.deleted and not p.running for p in pods.values())
    assert pods["missed"].updated_at == NOW
    ends = {r.uid: r.end_at for r in models.PodResource.select()}
    assert ends == {"seen": NOW, "missed": NOW}
    assert recorder.close_missing(set()) == 0, "already closed"


def test_closing_named_pods_closes_exactly_those_still_open(db: peewee.Database) -> None:
    recorder = _recorder(db)
    recorder.record(
        [
            Change(type=ChangeType.ADDED, object=_pod(uid, 1, phase="Running"), old=None)
            for uid in ("a", "b", "c")
        ]
    )
    assert recorder.close({"a", "b"}) == 2
    assert recorder.close({"a", "nobody"}) == 0  # already closed, or never stored
    open_pods = {p.uid for p in models.GpuPod.select() if not p.deleted}
    assert open_pods == {"c"}  # a pod stored meanwhile is never swept up with them
