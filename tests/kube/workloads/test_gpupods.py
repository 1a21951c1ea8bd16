from __future__ import annotations

import datetime

from lens.kube.workloads import gpupods

UTC = datetime.UTC


def gpu_pod(
    *,
    phase: str = "Pending",
    conditions: list[tuple[str, str, str]] = (),  # type: ignore[assignment]
    init_gpus: int = 0,
    gpus: int = 1,
    restarts: int = 0,
    running_since: str = "",
    finished: str = "",
    deleted: str = "",
) -> dict[str, object]:
    state: dict[str, object] = {}
    if running_since:
        state = {"running": {"startedAt": running_since}}
    if finished:
        state = {"terminated": {"finishedAt": finished, "exitCode": 0}}
    metadata: dict[str, object] = {
        "uid": "u1",
        "name": "train-0",
        "namespace": "ml",
        "creationTimestamp": "2026-11-21T01:00:00Z",
        "resourceVersion": "7",
        "ownerReferences": [{"uid": "job-1", "kind": "Job", "controller": True}],
    }
    if deleted:
        metadata["deletionTimestamp"] = deleted
    init = [{"name": "prep", "resources": {"limits": {"amd.com/gpu": str(init_gpus)}}}]
    return {
        "metadata": metadata,
        "spec": {
            "nodeName": "n1",
            "initContainers": init if init_gpus else [],
            "containers": [{"name": "main", "resources": {"requests": {"amd.com/gpu": gpus}}}],
        },
        "status": {
            "phase": phase,
            "conditions": [
                {"type": t, "status": s, "lastTransitionTime": at} for t, s, at in conditions
            ],
            "containerStatuses": [{"name": "main", "restartCount": restarts, "state": state}],
        },
    }


def test_gpu_pods_by_the_schedulers_rule() -> None:
    assert gpupods.gpu_count(gpu_pod(gpus=2), gpupods.DEFAULT_GPU_RESOURCES) == 2
    only_init = gpu_pod(gpus=0, init_gpus=4)
    assert gpupods.gpu_count(only_init, gpupods.DEFAULT_GPU_RESOURCES) == 4
    assert gpupods.gpu_count(gpu_pod(gpus=0), gpupods.DEFAULT_GPU_RESOURCES) == 0
    assert gpupods.owner_uid(gpu_pod()) == "job-1"


def test_transitions_carry_their_own_times_and_restart_counts() -> None:
    pending = gpu_pod(conditions=[("PodScheduled", "True", "2026-11-21T01:00:01Z")])
    first = gpupods.transitions(None, pending)
    assert [(t.event_type, t.status, t.at.isoformat()) for t in first] == [
        ("PodScheduled", "True", "2026-11-21T01:00:01+00:00"),
        ("Phase", "Pending", "2026-11-21T01:00:00+00:00"),
    ]
    running = gpu_pod(
        phase="Running",
        restarts=1,
        running_since="2026-11-21T01:00:05.5Z",
        conditions=[
            ("PodScheduled", "True", "2026-11-21T01:00:01Z"),
            ("Ready", "True", "2026-11-21T01:00:06Z"),
        ],
    )
    later = gpupods.transitions(pending, running)
    assert [(t.event_type, t.status, t.restart_count) for t in later] == [
        ("Ready", "True", 1),
        ("Phase", "Running", 1),
    ]
    assert later[1].at == datetime.datetime(2026, 11, 21, 1, 0, 5, 500000, tzinfo=UTC)
    assert gpupods.transitions(running, running) == []


def test_finish_deletion_and_what_a_snapshot_ignores() -> None:
    done = gpu_pod(phase="Succeeded", finished="2026-11-21T02:00:00Z")
    assert gpupods.finished_at(done) == datetime.datetime(2026, 11, 21, 2, tzinfo=UTC)
    assert gpupods.phase_time(done) == gpupods.finished_at(done)
    gone = gpu_pod(deleted="2026-11-21T03:00:00Z")
    assert gpupods.last_change(gone) == datetime.datetime(2026, 11, 21, 3, tzinfo=UTC)
    bumped = gpu_pod()
    bumped["metadata"]["resourceVersion"] = "8"  # type: ignore[index]
    assert gpupods.snapshot_digest(bumped) == gpupods.snapshot_digest(gpu_pod())
    assert gpupods.snapshot_digest(gone) != gpupods.snapshot_digest(gpu_pod())
