"""A workload's row from its object and its GPU pods."""

from __future__ import annotations

import datetime
from typing import Any

from lens.kube.workloads import rows as workloads

NOW = datetime.datetime(2026, 11, 21, 12, 0, tzinfo=datetime.UTC)
RESOURCES = ("amd.com/gpu",)


def _job(**metadata: Any) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "uid": "job-1",
            "name": "train",
            "namespace": "ml",
            "labels": {"team": "nlp"},
            "creationTimestamp": "2026-11-21T10:00:00Z",
            "ownerReferences": [
                {"apiVersion": "batch/v1", "kind": "CronJob", "uid": "cron-1", "controller": True}
            ],
            **metadata,
        },
    }


def _pod(uid: str, phase: str, gpus: int, finished: str = "") -> dict[str, Any]:
    status: dict[str, Any] = {"phase": phase}
    if finished:
        status["containerStatuses"] = [
            {"state": {"terminated": {"finishedAt": finished}}, "restartCount": 0}
        ]
    return {
        "metadata": {"uid": uid},
        "spec": {"containers": [{"resources": {"requests": {"amd.com/gpu": str(gpus)}}}]},
        "status": status,
    }


def test_running_while_a_pod_lives_requesting_what_the_live_pods_request() -> None:
    pods = [_pod("a", "Running", 4), _pod("b", "Pending", 2), _pod("c", "Failed", 8, "x")]
    state = workloads.state(_job(), pods, resources=RESOURCES, gone=False, now=NOW)
    assert (state.status, state.gpu_request, state.request_is_live) == ("Running", 6, True)
    assert state.end_at is None
    assert (state.parent_uid, state.kind, state.group_version) == ("cron-1", "Job", "batch/v1")
    assert state.labels == {"team": "nlp"} and state.pod_uids == ("a", "b", "c")
    assert state.created_at == datetime.datetime(2026, 11, 21, 10, 0, tzinfo=datetime.UTC)


def test_done_when_every_pod_finished_ending_with_the_last() -> None:
    pods = [
        _pod("a", "Succeeded", 1, "2026-11-21T11:00:00Z"),
        _pod("b", "Failed", 1, "2026-11-21T11:30:00Z"),
    ]
    state = workloads.state(_job(), pods, resources=RESOURCES, gone=False, now=NOW)
    assert state.status == "Done"
    assert state.end_at == datetime.datetime(2026, 11, 21, 11, 30, tzinfo=datetime.UTC)
    assert (state.gpu_request, state.request_is_live) == (2, False)


def test_deleted_once_deletion_is_requested_or_the_object_is_gone() -> None:
    deleting = _job(deletionTimestamp="2026-11-21T11:45:00Z")
    live = [_pod("a", "Running", 1)]
    state = workloads.state(deleting, live, resources=RESOURCES, gone=False, now=NOW)
    assert state.status == "Deleted"
    assert state.end_at == datetime.datetime(2026, 11, 21, 11, 45, tzinfo=datetime.UTC)
    gone = workloads.state(_job(), [], resources=RESOURCES, gone=True, now=NOW)
    assert (gone.status, gone.end_at, gone.gpu_request) == ("Deleted", NOW, 0)


def test_a_top_level_workload_has_no_parent() -> None:
    top = _job()
    del top["metadata"]["ownerReferences"]
    state = workloads.state(top, [], resources=RESOURCES, gone=False, now=NOW)
    assert state.parent_uid == "" and state.status == "Done" and state.end_at == NOW
