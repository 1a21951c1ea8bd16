"""/v1/workloads, /v1/workloadMetadata, /v1/nodes/{name}/workloads and workloadsHistory,
/v1/clusters/consumers and /v1/storage/stat on rows written by Lens's writers, on every engine:
the original's payloads with its bugs fixed, every figure worked out by hand from what the test
wrote; bad input on every parameter a 400 naming it."""

from __future__ import annotations

import datetime
import time

import peewee
import pytest
from fastapi.testclient import TestClient

from lens.storage.classes import StorageBackend
from lens.storage.rows import StorageRow, StorageRows
from lens.storage.usage import ABSENT, VolumeUsage
from lens.store import database, freshness, models, upserting
from tests.roles.api import workloadrows as rows
from tests.roles.api.conftest import (
    CLUSTER,
    NOW,
    T0,
    data,
    error,
    gpu,
    node,
    write_gpus,
    write_nodes,
)
from tests.roles.api.seriesrows import at_wall_time

HOUR = 3600
PJ = rows.workload("pj", "PyTorchJob", name="bert", created=-4 * HOUR)
DEP = rows.workload("dep", "Deployment", name="serve", created=-5 * HOUR, api_version="apps/v1")
RS = rows.workload("rs", "ReplicaSet", name="serve-5d8", owner=DEP, api_version="apps/v1")
ETL = rows.workload("etl", "Job", name="etl", created=-6 * HOUR, api_version="batch/v1")
GJ = rows.workload(
    "gj", "Job", name="cleanup", namespace="batch", created=-7 * HOUR, api_version="batch/v1"
)
GHOST = rows.workload("ghost", "Job", name="never-stored", api_version="batch/v1")

PJ_0 = rows.gpu_pod("pj-0", node="gpu-a", gpus=4, owner=PJ, created=-3 * HOUR)
PJ_1 = rows.gpu_pod("pj-1", node="gpu-b", gpus=2, owner=PJ, created=-3 * HOUR + 60)
RS_0 = rows.gpu_pod("rs-0", node="gpu-a", gpus=1, owner=RS, created=-HOUR)
RS_1 = rows.gpu_pod("rs-1", node="gpu-a", gpus=1, owner=RS, created=-3 * HOUR, finished=-HOUR)
ETL_0 = rows.gpu_pod(
    "etl-0", node="gpu-b", gpus=1, owner=ETL, created=-6 * HOUR + 60, finished=-2 * HOUR
)
GJ_0 = rows.gpu_pod(
    "gj-0", node="gpu-b", gpus=1, owner=GJ, namespace="batch", created=-7 * HOUR + 60,
    finished=-HOUR // 2,
)  # fmt: skip
BARE = rows.gpu_pod("bare", node="gpu-a", gpus=1, created=-HOUR)
OLD = rows.gpu_pod("old", node="gpu-b", gpus=2, created=-2 * HOUR)  # deleted while running
ORPH = rows.gpu_pod("orph", node="gpu-b", gpus=1, owner=GHOST, created=-90 * 60, finished=-HOUR)
NEVER = rows.gpu_pod("never", node="gpu-b", gpus=8, created=-HOUR, phase="Pending")


def _cluster(db: peewee.Database, client: TestClient) -> None:
    """Nodes of four and two GPUs (and one idle); five workloads, one Succeeded and one
    Deleted, with their pods; GPU-minutes their pods held in the hours before NOW, rolled up
    and summed."""
    write_nodes(db, node("gpu-a", gpu_count=4), node("gpu-b", gpu_count=2), node("gpu-idle"))
    write_gpus(db, "gpu-a", tuple(gpu(i) for i in range(4)))
    write_gpus(db, "gpu-b", tuple(gpu(i, model="MI325X", uuid=f"B-{i}") for i in range(2)))
    rows.write_cluster(
        db,
        workloads=(PJ, DEP, RS, ETL, GJ),
        pods=(PJ_0, PJ_1, RS_0, RS_1, ETL_0, GJ_0, BARE, OLD, ORPH, NEVER),
        deleted_pods=("old", "never"),
        gone=("gj",),
    )
    # pj-0 holds two MI300X for 30 minutes, pj-1 one MI325X for 10: 3600 s and 600 s.
    rows.write_held_minutes(
        db,
        node="gpu-a",
        pod=PJ_0,
        gpu_uuids=("GPU-0", "GPU-1"),
        first=T0 - 2 * HOUR,
        loads=[0.5] * 30,
    )
    rows.write_held_minutes(
        db, node="gpu-b", pod=PJ_1, gpu_uuids=("B-0",), first=T0 - 2 * HOUR, loads=[0.5] * 10
    )
    # rs-0 holds an MI300X for 20 minutes; rs-1 a GPU no inventory names for 5.
    rows.write_held_minutes(
        db, node="gpu-a", pod=RS_0, gpu_uuids=("GPU-2",), first=T0 - HOUR, loads=[0.1] * 20
    )
    rows.write_held_minutes(
        db, node="gpu-a", pod=RS_1, gpu_uuids=("GPU-7",), first=T0 - 2 * HOUR, loads=[None] * 5
    )
    rows.sum_gpu_hours(db)
    # The controller watched until 10 s before NOW; the GPU-hours were summed at NOW.
    freshness.record(db, cluster=CLUSTER, figure=freshness.PODS, as_of=WATCHED, interval_seconds=30)
    freshness.record(
        db, cluster=CLUSTER, figure=freshness.GPU_HOURS, as_of=NOW, interval_seconds=60
    )
    at_wall_time(client, NOW)


WATCHED = NOW - datetime.timedelta(seconds=10)
PODS_MEASURED = {"as_of": int(WATCHED.timestamp()), "stale": False}


def _listed(client: TestClient, **query: str | int) -> tuple[list[str], int]:
    listed = data(client.get("/v1/workloads", params=query))
    assert isinstance(listed, dict)
    return [row["uid"] for row in listed["data"]], listed["total"]


def test_the_list_of_top_level_workloads(db: peewee.Database, client: TestClient) -> None:
    _cluster(db, client)
    listed = data(client.get("/v1/workloads", params={"page_size": 2}))
    assert listed == {
        "data": [
            {
                "kind": "PyTorchJob",
                "name": "bert",
                "namespace": "ml",
                "uid": "pj",
                "gpu_allocated": 6,
                "gpu_allocation": {"MI300X": 3600.0, "MI325X": 600.0},
                "status": "Running",
                "status_reason": "",
                "status_color": "green",
                "start_at": T0 - 4 * HOUR,
                "end_at": None,
                "source": "k8s",
            },
            {
                "kind": "Deployment",
                "name": "serve",
                "namespace": "ml",
                "uid": "dep",
                "gpu_allocated": 1,  # rs-0 alone: rs-1 finished
                "gpu_allocation": {"MI300X": 1200.0, "unknown": 300.0},
                "status": "Running",
                "status_reason": "",
                "status_color": "green",
                "start_at": T0 - 5 * HOUR,
                "end_at": None,
                "source": "k8s",
            },
        ],
        "total": 4,  # the ReplicaSet is not top-level
        "measured": {
            "status": PODS_MEASURED,
            "gpu_hours": {"as_of": int(T0), "stale": False},
        },
    }
    etl, gone = data(client.get("/v1/workloads", params={"page_num": 2, "page_size": 2}))["data"]  # type: ignore[index]
    assert (etl["uid"], etl["status"], etl["status_color"]) == ("etl", "Succeeded", "blue")
    assert (etl["end_at"], etl["gpu_allocation"], etl["gpu_allocated"]) == (T0 - 2 * HOUR, None, 1)
    # The real end (its last pod's finish), not the row's last update (the original's).
    assert (gone["uid"], gone["status"], gone["status_color"]) == ("gj", "Deleted", "gray")
    assert gone["end_at"] == T0 - HOUR // 2


def test_filters_sorting_both_ways_and_pages(db: peewee.Database, client: TestClient) -> None:
    _cluster(db, client)
    assert _listed(client) == (["pj", "dep", "etl", "gj"], 4)
    assert _listed(client, order="asc") == (["gj", "etl", "dep", "pj"], 4)
    # Running workloads have no end: last either way, then by uid.
    assert _listed(client, order_by="end_at") == (["gj", "etl", "dep", "pj"], 4)
    assert _listed(client, order_by="end_at", order="asc") == (["etl", "gj", "dep", "pj"], 4)
    assert _listed(client, order_by="gpu_allocated") == (["pj", "dep", "etl", "gj"], 4)
    assert _listed(client, order_by="name", order="asc") == (["pj", "gj", "etl", "dep"], 4)
    assert _listed(client, order_by="kind", order="asc", page_size=1) == (["dep"], 4)
    assert _listed(client, kind="Job") == (["etl", "gj"], 2)
    assert _listed(client, namespace="batch") == (["gj"], 1)
    assert _listed(client, status="Succeeded") == (["etl"], 1)
    assert _listed(client, status="Done") == (["etl"], 1)  # the original's word for it
    assert _listed(client, status="Failed") == ([], 0)
    assert _listed(client, name="ER") == (["pj", "dep"], 2)
    assert _listed(client, name="%") == ([], 0)
    assert _listed(client, page_num=3, page_size=2) == ([], 4)
    assert _listed(client, cluster="c2") == ([], 0)


def test_one_workload_with_its_pods_and_real_end(db: peewee.Database, client: TestClient) -> None:
    _cluster(db, client)
    assert data(client.get("/v1/workloads/pj")) == {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "name": "bert",
        "namespace": "ml",
        "uid": "pj",
        "gpu_allocation": {"MI300X": 3600.0, "MI325X": 600.0},
        "status": "Running",
        "status_reason": "",
        "status_color": "green",
        "pods": [
            {"nodeName": "gpu-a", "podNamespace": "ml", "podName": "pod-pj-0"},
            {"nodeName": "gpu-b", "podNamespace": "ml", "podName": "pod-pj-1"},
        ],
        "startTime": T0 - 4 * HOUR,
        "endTime": None,
        "source": "k8s",
    }
    done = data(client.get("/v1/workloads/etl"))
    assert isinstance(done, dict)
    assert (done["endTime"], done["gpu_allocation"]) == (T0 - 2 * HOUR, None)
    # Below the top: its own pods' GPU-seconds, from the hourly rollup.
    below = data(client.get("/v1/workloads/rs"))
    assert isinstance(below, dict)
    assert below["gpu_allocation"] == {"MI300X": 1200.0, "unknown": 300.0}
    assert [p["podName"] for p in below["pods"]] == ["pod-rs-1", "pod-rs-0"]
    assert error(client.get("/v1/workloads/nope"), 404) == "workload nope not found"
    assert error(client.get("/v1/workloads/pj", params={"cluster": "c2"}), 404)


def test_a_failed_workload_says_why(db: peewee.Database, client: TestClient) -> None:
    failed = {
        **rows.workload("bad", "Job", name="bad-config", api_version="batch/v1"),
        "status": {
            "conditions": [
                {
                    "type": "Failed",
                    "status": "True",
                    "reason": "BackoffLimitExceeded",
                    "lastTransitionTime": rows.stamp(-HOUR),
                }
            ]
        },
    }
    pod = rows.gpu_pod("bad-0", node="gpu-a", gpus=1, owner=failed, phase="Failed")
    rows.write_cluster(db, workloads=(failed,), pods=(pod,))
    assert _listed(client, status="Failed") == (["bad"], 1)
    (item,) = data(client.get("/v1/workloads"))["data"]  # type: ignore[index]
    assert (item["status"], item["status_reason"], item["status_color"]) == (
        "Failed",
        "BackoffLimitExceeded",
        "red",
    )
    assert item["end_at"] == T0 - HOUR
    detail = data(client.get("/v1/workloads/bad"))
    assert isinstance(detail, dict)
    assert (detail["status"], detail["status_reason"]) == ("Failed", "BackoffLimitExceeded")


def test_the_hierarchy_below_a_workload(db: peewee.Database, client: TestClient) -> None:
    _cluster(db, client)
    assert data(client.get("/v1/workloads/dep/hierarchy")) == {
        "kind": "Deployment",
        "name": "serve",
        "namespace": "ml",
        "uid": "dep",
        "children": [
            {
                "kind": "ReplicaSet",
                "name": "serve-5d8",
                "namespace": "ml",
                "uid": "rs",
                "children": [],
            }
        ],
    }
    leaf = data(client.get("/v1/workloads/rs/hierarchy"))
    assert isinstance(leaf, dict) and leaf["children"] == []
    assert error(client.get("/v1/workloads/nope/hierarchy"), 404)


def _training(db: peewee.Database) -> None:
    row = {"cluster": CLUSTER, "workload_uid": "pj", "pod_uuid": "pj-0", "serial": 1}
    at = [NOW - datetime.timedelta(seconds=s) for s in (600, 300, 60)]
    with database.session(db):
        upserting.insert_new(
            models.TrainingPerformance,
            [
                {**row, "iteration": 10, "created_at": at[0],
                 "performance": {"tflops": 120.5, "iteration": 10, "loss": "n/a", "ok": True}},
                {**row, "iteration": 20, "created_at": at[1],
                 "performance": {"tflops": 130, "lr": 0.0001, "nested": {"a": 1}}},
                {**row, "iteration": 30, "created_at": at[2], "performance": None},
            ],
        )  # fmt: skip


def test_training_performance_is_a_bare_array(db: peewee.Database, client: TestClient) -> None:
    _cluster(db, client)
    _training(db)
    ms = T0 * 1000
    answer = client.get(
        "/v1/workloads/pj/trainingPerformance", params={"start": ms - 700_000, "end": ms}
    )
    assert answer.status_code == 200
    assert answer.json() == [
        {"metric": "iteration", "value": 10.0, "timestamp": ms - 600_000},
        {"metric": "tflops", "value": 120.5, "timestamp": ms - 600_000},
        {"metric": "lr", "value": 0.0001, "timestamp": ms - 300_000},
        {"metric": "tflops", "value": 130.0, "timestamp": ms - 300_000},
    ]
    narrow = client.get(
        "/v1/workloads/pj/trainingPerformance",
        params={"start": ms - 300_000, "end": ms - 300_000 + 1},
    )
    assert [p["metric"] for p in narrow.json()] == ["lr", "tflops"]
    empty = client.get("/v1/workloads/dep/trainingPerformance", params={"start": 0, "end": ms})
    assert empty.json() == []
    unknown = {"start": 0, "end": ms}
    assert error(client.get("/v1/workloads/nope/trainingPerformance", params=unknown), 404)


def test_workload_metadata(db: peewee.Database, client: TestClient) -> None:
    assert data(client.get("/v1/workloadMetadata")) == {"namespaces": [], "kinds": []}
    _cluster(db, client)
    assert data(client.get("/v1/workloadMetadata")) == {
        "namespaces": ["batch", "ml"],
        "kinds": ["Deployment", "Job", "PyTorchJob"],
    }


def test_a_nodes_running_workloads(db: peewee.Database, client: TestClient) -> None:
    _cluster(db, client)
    listed = data(client.get("/v1/nodes/gpu-a/workloads"))

    def row(kind: str, name: str, uid: str, total: int, here: int) -> dict[str, object]:
        return {
            "kind": kind,
            "name": name,
            "namespace": "ml",
            "uid": uid,
            "gpu_allocated": total,
            "gpu_allocated_node": here,
            "node_name": "gpu-a",
            "status": "Running",
        }

    assert listed == {
        "data": [
            row("PyTorchJob", "bert", "pj", 6, 4),
            row("Pod", "pod-bare", "bare", 1, 1),  # nothing owns it: itself
            row("Deployment", "serve", "dep", 1, 1),
        ],
        "total": 3,
        "measured": PODS_MEASURED,
    }
    second = data(client.get("/v1/nodes/gpu-a/workloads", params={"page_num": 2, "page_size": 1}))
    assert second == {
        "data": [row("Pod", "pod-bare", "bare", 1, 1)],
        "total": 3,
        "measured": PODS_MEASURED,
    }
    other = data(client.get("/v1/nodes/gpu-b/workloads"))
    assert isinstance(other, dict) and other["total"] == 1
    assert (other["data"][0]["gpu_allocated"], other["data"][0]["gpu_allocated_node"]) == (6, 2)
    idle = data(client.get("/v1/nodes/gpu-idle/workloads"))
    assert idle == {"data": [], "total": 0, "measured": PODS_MEASURED}
    assert error(client.get("/v1/nodes/nowhere/workloads"), 404) == "node nowhere not found"


def test_a_nodes_history_with_pods_of_unknown_workloads(
    db: peewee.Database, client: TestClient
) -> None:
    _cluster(db, client)
    listed = data(client.get("/v1/nodes/gpu-b/workloadsHistory"))
    assert isinstance(listed, dict) and listed["total"] == 4  # the Pending pod never ran
    orph, old, etl, gone = listed["data"]
    # Its owner was never stored: shown as itself (the original crashed).
    assert orph == {
        "kind": "Pod",
        "name": "pod-orph",
        "namespace": "ml",
        "uid": "orph",
        "gpu_allocated": 1,
        "pod_name": "pod-orph",
        "pod_namespace": "ml",
        "start_time": T0 - 90 * 60,
        "end_time": T0 - HOUR,
    }
    assert (old["kind"], old["uid"], old["end_time"]) == ("Pod", "old", T0)  # deleted at NOW
    assert etl == {
        "kind": "Job",
        "name": "etl",
        "namespace": "ml",
        "uid": "etl",
        "gpu_allocated": 1,
        "pod_name": "pod-etl-0",
        "pod_namespace": "ml",
        "start_time": T0 - 6 * HOUR + 60,
        "end_time": T0 - 2 * HOUR,
    }
    assert (gone["name"], gone["namespace"], gone["pod_namespace"]) == ("cleanup", "batch", "batch")
    page = data(
        client.get("/v1/nodes/gpu-b/workloadsHistory", params={"page_num": 2, "page_size": 3})
    )
    assert isinstance(page, dict) and [r["pod_name"] for r in page["data"]] == ["pod-gj-0"]
    mine = data(client.get("/v1/nodes/gpu-a/workloadsHistory"))
    assert isinstance(mine, dict) and [(r["kind"], r["pod_name"]) for r in mine["data"]] == [
        ("Deployment", "pod-rs-1")
    ]
    assert error(client.get("/v1/nodes/nowhere/workloadsHistory"), 404)


def test_consumers_are_top_level_with_their_own_utilization(
    db: peewee.Database, client: TestClient
) -> None:
    _cluster(db, client)
    now = time.time()
    first = int(now) // 60 * 60 - 180  # three minutes ago, inside the five-minute window
    # pj's pods: two GPUs at 0.2 then 0.4, one at 0.9 twice: (4 * 0.3 + 2 * 0.9) / 6 = 0.5.
    rows.write_held_minutes(
        db,
        node="gpu-a",
        pod=PJ_0,
        gpu_uuids=("GPU-0", "GPU-1"),
        first=first,
        loads=[0.2, 0.4],
        now=now,
    )
    rows.write_held_minutes(
        db, node="gpu-b", pod=PJ_1, gpu_uuids=("B-0",), first=first, loads=[0.9, 0.9], now=now
    )
    listed = data(client.get("/v1/clusters/consumers"))
    assert isinstance(listed, dict) and listed["total"] == 3
    pj, bare, dep = listed["data"]
    assert pj["stat"]["gpu_utilization"] == pytest.approx(50.0)
    pj["stat"]["gpu_utilization"] = 50.0
    assert pj == {
        "kind": "PyTorchJob",
        "name": "bert",
        "namespace": "ml",
        "uid": "pj",
        "stat": {"gpu_request": 6, "gpu_utilization": 50.0},
        "pods": [
            {"nodeName": "gpu-a", "podNamespace": "ml", "podName": "pod-pj-0"},
            {"nodeName": "gpu-b", "podNamespace": "ml", "podName": "pod-pj-1"},
        ],
        "source": "k8s",
    }
    # No minute of their GPUs in the window: unknown, not 0. The ReplicaSet is not listed.
    assert bare == {
        "kind": "Pod",
        "name": "pod-bare",
        "namespace": "ml",
        "uid": "bare",
        "stat": {"gpu_request": 1, "gpu_utilization": None},
        "pods": [{"nodeName": "gpu-a", "podNamespace": "ml", "podName": "pod-bare"}],
        "source": "k8s",
    }
    assert (dep["uid"], dep["stat"], len(dep["pods"])) == (
        "dep",
        {"gpu_request": 1, "gpu_utilization": None},
        1,
    )
    last = data(client.get("/v1/clusters/consumers", params={"page_num": 3, "page_size": 1}))
    assert isinstance(last, dict) and [c["uid"] for c in last["data"]] == ["dep"]
    assert data(client.get("/v1/clusters/consumers", params={"cluster": "c2"})) == {
        "data": [],
        "total": 0,
        "measured": {"as_of": None, "stale": True},  # no controller watched c2
    }
    assert listed["measured"] == PODS_MEASURED


def _backend(kind: str) -> StorageBackend:
    return StorageBackend(
        kind=kind, storage_class=f"{kind}-sc", provisioner=f"{kind}.csi", parameters=(), secrets=()
    )


def test_storage_is_summed_over_the_backends(db: peewee.Database, client: TestClient) -> None:
    assert data(client.get("/v1/storage/stat")) == {
        "total_space": None,
        "used_space": None,
        "usage_percentage": None,
        "total_inodes": None,
        "used_inodes": None,
        "inodes_usage_percentage": None,
        "read_bandwidth": None,
        "write_bandwidth": None,
    }
    writer = StorageRows(db, cluster=CLUSTER, wall_time=lambda: NOW)

    def backend(kind: str, usage: VolumeUsage) -> StorageRow:
        return StorageRow(
            kind=kind,
            name=kind,
            backend=_backend(kind),
            storage_classes=(f"{kind}-sc",),
            usage=usage,
        )

    jfs = backend(
        "juicefs",
        VolumeUsage(capacity_bytes=1000, used_bytes=250, total_inodes=100, used_inodes=10),
    )
    weka = backend("weka", VolumeUsage(capacity_bytes=3000, used_bytes=750))
    gone = backend("ceph", VolumeUsage(capacity_bytes=10**9, used_bytes=10**9))
    writer.write([jfs, weka, backend("nfs", ABSENT), gone])
    writer.write([jfs, weka, backend("nfs", ABSENT)])  # ceph's classes are gone
    assert data(client.get("/v1/storage/stat")) == {
        "total_space": 4000,
        "used_space": 1000,
        "usage_percentage": 25.0,
        "total_inodes": 100,
        "used_inodes": 10,
        "inodes_usage_percentage": 10.0,
        "read_bandwidth": None,
        "write_bandwidth": None,
    }


@pytest.mark.parametrize(
    ("path", "query", "parameter"),
    [
        ("/v1/workloads", {"page_num": "0"}, "page_num"),
        ("/v1/workloads", {"page_size": "1001"}, "page_size"),
        ("/v1/workloads", {"order_by": "created_at; DROP TABLE gpu_workloads"}, "order_by"),
        ("/v1/workloads", {"order_by": "uid"}, "order_by"),
        ("/v1/workloads", {"order": "sideways"}, "order"),
        ("/v1/workloads", {"status": "running"}, "status"),
        ("/v1/workloads", {"name": "n" * 254}, "name"),
        ("/v1/workloads", {"kind": "k" * 65}, "kind"),
        ("/v1/workloads", {"namespace": "n" * 65}, "namespace"),
        ("/v1/workloads", {"cluster": "Not_A_Label"}, "cluster"),
        (f"/v1/workloads/{'u' * 65}", {}, "uid"),
        ("/v1/workloads/u1", {"cluster": "-x"}, "cluster"),
        ("/v1/workloads/u1/hierarchy", {"cluster": ""}, "cluster"),
        ("/v1/workloads/u1/trainingPerformance", {"end": "1000"}, "start"),
        ("/v1/workloads/u1/trainingPerformance", {"start": "1000"}, "end"),
        ("/v1/workloads/u1/trainingPerformance", {"start": "x", "end": "1000"}, "start"),
        ("/v1/workloads/u1/trainingPerformance", {"start": "-1", "end": "1000"}, "start"),
        ("/v1/workloads/u1/trainingPerformance", {"start": "0", "end": "1" + "0" * 20}, "end"),
        ("/v1/workloads/u1/trainingPerformance", {"start": "2000", "end": "1000"}, "end"),
        ("/v1/workloads/u1/trainingPerformance", {"start": "1000", "end": "1000"}, "end"),
        ("/v1/workloadMetadata", {"cluster": "A B"}, "cluster"),
        ("/v1/nodes/n1/workloads", {"page_size": "0"}, "page_size"),
        (f"/v1/nodes/{'n' * 254}/workloads", {}, "name"),
        ("/v1/nodes/n1/workloadsHistory", {"page_num": "x"}, "page_num"),
        ("/v1/clusters/consumers", {"page_size": "-1"}, "page_size"),
        ("/v1/clusters/consumers", {"cluster": "c" * 64}, "cluster"),
        ("/v1/storage/stat", {"cluster": "A"}, "cluster"),
    ],
)
def test_bad_input_is_a_400_naming_the_parameter(
    sqlite_client: TestClient, path: str, query: dict[str, str], parameter: str
) -> None:
    message = error(sqlite_client.get(path, params=query), 400)
    assert message.startswith(f"{parameter}: "), message


def test_a_range_holding_too_many_iterations_is_refused(
    sqlite_db: peewee.Database, sqlite_client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lens.store.queries import training

    _cluster(sqlite_db, sqlite_client)
    _training(sqlite_db)
    monkeypatch.setattr(training, "MAX_ROWS", 2)
    query = {"start": 0, "end": T0 * 1000}
    message = error(sqlite_client.get("/v1/workloads/pj/trainingPerformance", params=query), 400)
    assert message == "start: the range holds over 2 iterations; narrow it"


def test_the_sort_names_are_the_queries_allow_list() -> None:
    from lens.roles.api.routers import workloads as router
    from lens.store.queries import workloads as queries

    assert [member.value for member in router.WorkloadOrder] == list(queries.SORTABLE)
