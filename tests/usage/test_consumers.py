"""Consumers from the controller's tables and the device minutes: a pod counted once with its
request, utilization from its own GPU-minutes weighted by seconds held, an ownerless pod its
own consumer, ended pods left out."""

from __future__ import annotations

import datetime

import peewee
import pytest

from lens.store import models
from lens.usage import consumers

from .conftest import CLUSTER, T0, Minutes


def _pod(uid: str, *, owner: str = "", gpus: int = 1, running: bool = True) -> None:
    models.GpuPod.create(
        cluster=CLUSTER,
        namespace="team-a",
        name=uid,
        uid=f"uid-team-a-{uid}",
        owner_uid=owner,
        gpu_allocated=gpus,
        running=running,
        phase="Running" if running else "Succeeded",
    )


def _workload(uid: str, kind: str, parent: str = "") -> None:
    models.GpuWorkload.create(
        cluster=CLUSTER, kind=kind, name=f"{uid}-name", uid=uid, parent_uid=parent, namespace="ml"
    )


def test_each_top_level_workload_with_its_pods_gpus_and_own_utilization(
    db: peewee.Database, held: Minutes
) -> None:
    _workload("job", "PyTorchJob")
    _workload("rs", "ReplicaSet", parent="job")
    _pod("worker-0", owner="rs", gpus=8)
    _pod("worker-1", owner="job", gpus=8)
    _pod("bare", gpus=1)
    _pod("done", owner="job", gpus=8, running=False)
    held.held(0, [0.2, 0.4], pod="worker-0", uuid="GPU-0")
    held.held(0, [0.6, None], pod="worker-1", uuid="GPU-1")  # unknown: left out
    held.held(0, [0.9, 0.9], pod="other", uuid="GPU-2")  # another pod's GPU
    since = datetime.datetime.fromtimestamp(T0, datetime.UTC)
    found = {c.uid: c for c in consumers.consumers(CLUSTER, since=since)}
    assert set(found) == {"job", "uid-team-a-bare"}
    job = found["job"]
    assert (job.kind, job.name, job.namespace) == ("PyTorchJob", "job-name", "ml")
    assert (job.gpus_allocated, job.active_pods) == (16, 2)
    assert job.utilization_ratio == pytest.approx((0.2 + 0.4 + 0.6) / 3)
    bare = found["uid-team-a-bare"]
    assert (bare.kind, bare.name, bare.gpus_allocated, bare.active_pods) == ("Pod", "bare", 1, 1)
    assert bare.utilization_ratio is None  # no minute of its GPU yet


def test_a_page_of_consumers_reads_only_its_own_minutes(db: peewee.Database, held: Minutes) -> None:
    _workload("job", "PyTorchJob")
    _pod("worker-0", owner="job", gpus=8)
    _pod("bare", gpus=1)
    held.held(0, [0.2, 0.4], pod="worker-0", uuid="GPU-0")
    since = datetime.datetime.fromtimestamp(T0, datetime.UTC)
    groups = consumers.consumer_pods(CLUSTER)
    assert [(g.uid, g.gpus_allocated, len(g.pods)) for g in groups] == [
        ("job", 8, 1),
        ("uid-team-a-bare", 1, 1),
    ]
    (job,) = consumers.with_utilization(CLUSTER, groups[:1], since=since)
    assert job == next(c for c in consumers.consumers(CLUSTER, since=since) if c.uid == "job")
    assert job.utilization_ratio == pytest.approx(0.3)
    assert consumers.with_utilization(CLUSTER, [], since=since) == []


def test_only_minutes_since_the_window_count(db: peewee.Database, held: Minutes) -> None:
    _pod("worker-0", gpus=1)
    held.held(0, [0.0, 0.0, 1.0], pod="worker-0")
    since = datetime.datetime.fromtimestamp(T0 + 120, datetime.UTC)
    (only,) = consumers.consumers(CLUSTER, since=since)
    assert only.utilization_ratio == pytest.approx(1.0)


def test_no_running_gpu_pods_no_consumers(db: peewee.Database) -> None:
    _pod("done", running=False)
    assert consumers.consumers(CLUSTER, since=datetime.datetime.now(datetime.UTC)) == []
