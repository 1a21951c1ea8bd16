"""A workload's row from its object and its GPU pods: its status as Kubernetes tells it (Pending,
Running, Succeeded, Failed with the reason, Deleted), its request and its end."""

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


def _pod(
    uid: str, phase: str, gpus: int, finished: str = "", *, why: str = "", code: int = 1
) -> dict[str, Any]:
    """A pod in `phase`; finished at `finished`, its container terminated for `why` with exit
    code `code` when it failed (`why` Error by default)."""
    status: dict[str, Any] = {"phase": phase}
    if finished:
        terminated: dict[str, Any] = {"finishedAt": finished, "exitCode": 0}
        if phase == "Failed":
            terminated.update(exitCode=code, reason=why or "Error")
        status["containerStatuses"] = [{"state": {"terminated": terminated}, "restartCount": 0}]
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


def test_pending_while_its_live_pods_all_wait() -> None:
    pods = [_pod("a", "Pending", 4), _pod("b", "Succeeded", 1, "2026-11-21T11:00:00Z")]
    state = workloads.state(_job(), pods, resources=RESOURCES, gone=False, now=NOW)
    assert (state.status, state.status_reason, state.end_at) == ("Pending", "", None)


def _ended(job: dict[str, Any], kind: str, reason: str = "") -> dict[str, Any]:
    condition = {"type": kind, "status": "True", "lastTransitionTime": "2026-11-21T11:40:00Z"}
    if reason:
        condition["reason"] = reason
    return {**job, "status": {"conditions": [{"type": "Suspended", "status": "False"}, condition]}}


def test_a_jobs_terminal_condition_says_how_it_ended_and_why() -> None:
    pods = [_pod("a", "Failed", 1, "2026-11-21T11:30:00Z")]
    failed = _ended(_job(), "Failed", "BackoffLimitExceeded")
    state = workloads.state(failed, pods, resources=RESOURCES, gone=False, now=NOW)
    assert (state.status, state.status_reason) == ("Failed", "BackoffLimitExceeded")
    # When the condition says, not when its pod finished before.
    assert state.end_at == datetime.datetime(2026, 11, 21, 11, 40, tzinfo=datetime.UTC)
    complete = _ended(_job(), "Complete")
    done = workloads.state(complete, pods, resources=RESOURCES, gone=False, now=NOW)
    assert (done.status, done.status_reason) == ("Succeeded", "")
    # Its pods still stopping: ended all the same, when the condition says.
    deadline = _ended(_job(), "Failed", "DeadlineExceeded")
    stopping = workloads.state(
        deadline, [_pod("b", "Running", 1)], resources=RESOURCES, gone=False, now=NOW
    )
    assert (stopping.status, stopping.status_reason) == ("Failed", "DeadlineExceeded")
    assert stopping.end_at == datetime.datetime(2026, 11, 21, 11, 40, tzinfo=datetime.UTC)
    # A Kubeflow job's condition, and one without a reason.
    kubeflow = workloads.state(
        _ended(_job(), "Succeeded"), pods, resources=RESOURCES, gone=False, now=NOW
    )
    assert kubeflow.status == "Succeeded"
    bare = workloads.state(_ended(_job(), "Failed"), pods, resources=RESOURCES, gone=False, now=NOW)
    assert (bare.status, bare.status_reason) == ("Failed", "Failed")


def test_without_a_condition_its_pods_say_how_it_ended_ending_with_the_last() -> None:
    pods = [
        _pod("a", "Succeeded", 1, "2026-11-21T11:00:00Z"),
        _pod("b", "Failed", 1, "2026-11-21T11:30:00Z", why="OOMKilled", code=137),
    ]
    state = workloads.state(_job(), pods, resources=RESOURCES, gone=False, now=NOW)
    assert (state.status, state.status_reason) == ("Failed", "OOMKilled")
    assert state.end_at == datetime.datetime(2026, 11, 21, 11, 30, tzinfo=datetime.UTC)
    assert (state.gpu_request, state.request_is_live) == (2, False)
    fine = [_pod("a", "Succeeded", 1, "2026-11-21T11:00:00Z")]
    succeeded = workloads.state(_job(), fine, resources=RESOURCES, gone=False, now=NOW)
    assert (succeeded.status, succeeded.status_reason) == ("Succeeded", "")


def test_deleted_once_deletion_is_requested_or_the_object_is_gone() -> None:
    deleting = _job(deletionTimestamp="2026-11-21T11:45:00Z")
    live = [_pod("a", "Running", 1)]
    state = workloads.state(deleting, live, resources=RESOURCES, gone=False, now=NOW)
    at = datetime.datetime(2026, 11, 21, 11, 45, tzinfo=datetime.UTC)
    assert (state.status, state.end_at, state.deleted_at) == ("Deleted", at, at)
    gone = workloads.state(_job(), [], resources=RESOURCES, gone=True, now=NOW)
    assert (gone.status, gone.end_at, gone.gpu_request, gone.deleted) == ("Deleted", NOW, 0, True)


def test_a_workload_deleted_after_it_ended_keeps_how_it_ended() -> None:
    pods = [_pod("a", "Failed", 1, "2026-11-21T11:30:00Z")]
    failed = _ended(_job(), "Failed", "BackoffLimitExceeded")
    gone = workloads.state(failed, pods, resources=RESOURCES, gone=True, now=NOW)
    assert (gone.status, gone.status_reason, gone.deleted_at) == (
        "Failed",
        "BackoffLimitExceeded",
        NOW,
    )


def test_a_top_level_workload_has_no_parent() -> None:
    top = _job()
    del top["metadata"]["ownerReferences"]
    state = workloads.state(top, [], resources=RESOURCES, gone=False, now=NOW)
    assert state.parent_uid == "" and state.status == "Succeeded" and state.end_at == NOW
