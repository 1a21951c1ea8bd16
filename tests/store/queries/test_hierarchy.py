"""A workload's tree from one recursive query on every engine: children by name, other clusters'
rows left out, the depth bounded, and parents that form a cycle walked once."""

from __future__ import annotations

import copy

import peewee

from lens.store.queries import hierarchy
from lens.store.queries.hierarchy import MAX_DEPTH, WorkloadNode
from tests.roles.api import workloadrows as rows
from tests.roles.api.conftest import CLUSTER


def _depth(node: WorkloadNode) -> int:
    return 1 + max((_depth(child) for child in node.children), default=0)


def test_a_tree_of_three_levels(db: peewee.Database) -> None:
    cron = rows.workload("cron", "CronJob", name="nightly", api_version="batch/v1")
    late = rows.workload("j2", "Job", name="nightly-2", owner=cron, api_version="batch/v1")
    early = rows.workload("j1", "Job", name="nightly-1", owner=cron, api_version="batch/v1")
    pods = [
        rows.gpu_pod(f"{j}-pod", node="n1", gpus=1, owner=o) for j, o in (("a", late), ("b", early))
    ]
    rows.write_cluster(db, workloads=(cron, late, early), pods=pods)
    rows.write_cluster(db, workloads=(rows.workload("j3", "Job", owner=cron),), cluster="c2")
    tree = hierarchy.workload_tree(db, cluster=CLUSTER, uid="cron")
    assert tree == WorkloadNode(
        uid="cron",
        kind="CronJob",
        name="nightly",
        namespace="ml",
        children=(
            WorkloadNode(uid="j1", kind="Job", name="nightly-1", namespace="ml"),
            WorkloadNode(uid="j2", kind="Job", name="nightly-2", namespace="ml"),
        ),
    )
    assert hierarchy.workload_tree(db, cluster=CLUSTER, uid="j2") == tree.children[1]
    assert hierarchy.workload_tree(db, cluster=CLUSTER, uid="nope") is None


def test_the_depth_is_bounded_and_a_cycle_ends(db: peewee.Database) -> None:
    chain = [rows.workload("w0", "Chain")]
    for level in range(1, MAX_DEPTH + 5):
        chain.append(rows.workload(f"w{level}", "Chain", owner=chain[-1]))
    first = rows.workload("a", "Loop")
    second = rows.workload("b", "Loop", owner=first)
    looped = copy.deepcopy(first)
    looped["metadata"]["ownerReferences"] = [
        {"apiVersion": "kubeflow.org/v1", "kind": "Loop", "name": "b-name", "uid": "b"}
    ]
    rows.write_cluster(db, workloads=(*chain, looped, second))
    deep = hierarchy.workload_tree(db, cluster=CLUSTER, uid="w0")
    assert deep is not None and _depth(deep) == MAX_DEPTH + 1  # w0 and 16 levels below it
    loop = hierarchy.workload_tree(db, cluster=CLUSTER, uid="a")
    assert loop == WorkloadNode(
        uid="a",
        kind="Loop",
        name="a-name",
        namespace="ml",
        children=(WorkloadNode(uid="b", kind="Loop", name="b-name", namespace="ml"),),
    )
