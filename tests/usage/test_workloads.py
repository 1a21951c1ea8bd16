"""A pod's top-level workload, walked up gpu_workloads from its owner."""

from __future__ import annotations

import peewee

from lens.store import models
from lens.usage import workloads

from .conftest import CLUSTER


def test_a_pods_workload_is_the_top_of_its_owners(db: peewee.Database) -> None:
    models.GpuPod.create(cluster=CLUSTER, namespace="ml", name="p", uid="pod-1", owner_uid="rs")
    models.GpuPod.create(cluster=CLUSTER, namespace="ml", name="q", uid="pod-2", owner_uid="")
    for uid, parent in (("rs", "deploy"), ("deploy", "")):
        models.GpuWorkload.create(
            cluster=CLUSTER, kind="X", name=uid, uid=uid, parent_uid=parent, namespace="ml"
        )
    assert workloads.top_workloads(CLUSTER, ["pod-1", "pod-2", "pod-3"]) == {
        "pod-1": "deploy",
        "pod-2": "",
        "pod-3": "",
    }
