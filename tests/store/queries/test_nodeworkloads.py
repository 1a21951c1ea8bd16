"""What ran on a node, on every engine: running pods grouped by top-level workload, paged in SQL;
finished pods with their workload or, lacking one, themselves; unknown nodes None."""

from __future__ import annotations

import peewee

from lens.store.queries import nodeworkloads
from lens.store.queries.nodeworkloads import NodeWorkload
from lens.store.queries.reading import Page
from tests.roles.api import workloadrows as rows
from tests.roles.api.conftest import CLUSTER, NOW

JOB = rows.workload("job", "PyTorchJob", name="llm")
PODS = [rows.gpu_pod(f"w{i}", node="n1", gpus=2, owner=JOB, created=-600 + i) for i in range(3)]
ELSEWHERE = rows.gpu_pod("w9", node="n2", gpus=8, owner=JOB)
BARES = [rows.gpu_pod(f"b{i}", node="n1", gpus=1, created=-60 * i) for i in range(1, 4)]


def test_running_workloads_of_a_node_known_only_by_its_pods(db: peewee.Database) -> None:
    rows.write_cluster(db, workloads=(JOB,), pods=(*PODS, ELSEWHERE, *BARES))
    found = nodeworkloads.node_workloads(db, cluster=CLUSTER, node_name="n1", page=Page(limit=2))
    assert found is not None and found.total == 4
    job = NodeWorkload(
        uid="job",
        kind="PyTorchJob",
        name="llm",
        namespace="ml",
        status="Running",
        gpus_on_node=6,
        gpus=14,
    )
    bare = NodeWorkload(
        uid="b1",
        kind="Pod",
        name="pod-b1",
        namespace="ml",
        status="Running",
        gpus_on_node=1,
        gpus=1,
    )
    assert found.rows == (job, bare)
    rest = nodeworkloads.node_workloads(
        db, cluster=CLUSTER, node_name="n1", page=Page(offset=2, limit=5)
    )
    assert rest is not None and [w.uid for w in rest.rows] == ["b2", "b3"]
    assert nodeworkloads.node_workloads(db, cluster=CLUSTER, node_name="n3", page=Page()) is None
    assert nodeworkloads.node_workloads(db, cluster="c2", node_name="n1", page=Page()) is None


def test_finished_pods_newest_first(db: peewee.Database) -> None:
    done = [
        rows.gpu_pod(f"d{i}", node="n1", gpus=1, owner=JOB, created=-900 + i, finished=-60)
        for i in range(3)
    ]
    failed = rows.gpu_pod("f", node="n1", gpus=4, created=-100, finished=-50, phase="Failed")
    rows.write_cluster(db, workloads=(JOB,), pods=(*done, failed, *PODS))
    found = nodeworkloads.node_history(db, cluster=CLUSTER, node_name="n1", page=Page(limit=2))
    assert found is not None and found.total == 4
    newest, next_one = found.rows
    assert (newest.pod_uid, newest.workload_kind, newest.gpus) == ("f", "Pod", 4)
    assert newest.end_at is not None and int(NOW.timestamp() - newest.end_at.timestamp()) == 50
    assert (next_one.pod_name, next_one.workload_name, next_one.workload_uid) == (
        "pod-d2",
        "llm",
        "job",
    )
    assert next_one.end_at is not None and int(NOW.timestamp() - next_one.end_at.timestamp()) == 60
    empty = nodeworkloads.node_history(db, cluster=CLUSTER, node_name="n1", page=Page(offset=4))
    assert empty is not None and (empty.rows, empty.total) == ((), 4)
    assert nodeworkloads.node_history(db, cluster=CLUSTER, node_name="n9", page=Page()) is None
