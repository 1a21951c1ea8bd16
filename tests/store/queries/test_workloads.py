"""Workload reads on every engine: the list's sort allow-list, a workload with no GPU-seconds,
the metadata of top-level workloads only, and the running pods of workloads and bare pods."""

from __future__ import annotations

import peewee
import pytest

from lens.store.queries import workloads
from lens.store.queries.reading import Page
from lens.store.queries.workloads import PodPlace, WorkloadFilter, WorkloadSort
from tests.roles.api import workloadrows as rows
from tests.roles.api.conftest import CLUSTER, NOW

JOB = rows.workload("job", "PyTorchJob", name="llm")
RS = rows.workload("rs", "ReplicaSet", owner=JOB, namespace="inner")
SCOPED = rows.workload("scoped", "ClusterJob", namespace="", api_version="x.io/v1")
W0 = rows.gpu_pod("w0", node="n1", gpus=8, owner=RS, created=-300)
W1 = rows.gpu_pod("w1", node="n2", gpus=8, owner=JOB, created=-200)
DONE = rows.gpu_pod("done", node="n2", gpus=8, owner=JOB, created=-900, finished=-600)
BARE = rows.gpu_pod("bare", node="n1", gpus=1)


def test_sorting_is_on_an_allow_list() -> None:
    with pytest.raises(ValueError, match="uid"):
        WorkloadSort(column="uid")
    assert WorkloadSort().column == "start_at" and WorkloadSort().descending


def test_reads_of_a_small_cluster(db: peewee.Database) -> None:
    rows.write_cluster(db, workloads=(JOB, RS, SCOPED), pods=(W0, W1, DONE, BARE))
    found = workloads.list_workloads(
        db, cluster=CLUSTER, wanted=WorkloadFilter(), sort=WorkloadSort(), page=Page(limit=5)
    )
    assert [(w.uid, w.gpu_request, w.gpu_seconds) for w in found.rows] == [
        ("job", 16, None),  # no agent saw its GPUs: unknown, not 0
        ("scoped", 0, None),
    ]
    detail = workloads.get_workload(db, cluster=CLUSTER, uid="rs")
    assert detail is not None and detail.workload.parent_uid == "job"
    assert detail.workload.created_at == NOW.replace(hour=1)
    assert [p.name for p in detail.pods] == ["pod-w0"]
    assert workloads.get_workload(db, cluster="c2", uid="rs") is None
    metadata = workloads.workload_metadata(db, cluster=CLUSTER)
    assert (metadata.namespaces, metadata.kinds) == (("ml",), ("ClusterJob", "PyTorchJob"))
    running = workloads.running_pods(db, cluster=CLUSTER, owners=["job", "bare", "rs", "none"])
    assert running == {
        "job": (
            PodPlace(uid="w0", name="pod-w0", namespace="ml", node_name="n1"),
            PodPlace(uid="w1", name="pod-w1", namespace="ml", node_name="n2"),
        ),
        "rs": (PodPlace(uid="w0", name="pod-w0", namespace="ml", node_name="n1"),),
        "bare": (PodPlace(uid="bare", name="pod-bare", namespace="ml", node_name="n1"),),
    }
    assert workloads.running_pods(db, cluster=CLUSTER, owners=[]) == {}
