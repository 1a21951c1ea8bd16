"""/v1/clusters/overview from the nodes and gpu_pods tables, on every engine: the original's
flat object, each pod counted once, unknown figures null."""

from __future__ import annotations

import json

import peewee
from fastapi.testclient import TestClient

from lens.store import models
from tests.roles.api.conftest import data, error, node, pod, write_nodes, write_pods


def test_the_overview_of_a_cluster(db: peewee.Database, client: TestClient) -> None:
    write_nodes(
        db,
        node("busy", gpu_utilization=90.0),
        node("half", gpu_utilization=30.0),
        node("idle", status="NotReady"),
        node("cordoned", taints=json.dumps([{"key": "k", "value": "", "effect": "NoSchedule"}])),
    )
    write_pods(
        db,
        pod("p1", node_name="busy", gpus=8),
        pod("p2", node_name="half", gpus=2),
        pod("p3", node_name="half", gpus=2),
        pod("p4", node_name="idle", gpus=8, phase="Succeeded"),
        pod("p5", node_name="cordoned", gpus=1, phase="Pending"),
    )
    models.Storage.insert(
        cluster="c1", name="jfs", kind="juicefs", capacity_bytes=1000, used_bytes=250
    ).execute()
    overview = data(client.get("/v1/clusters/overview"))
    assert overview == {
        "total_space": 1000,
        "used_space": 250,
        "usage_percentage": 25.0,
        "total_inodes": None,
        "used_inodes": None,
        "inodes_usage_percentage": None,
        "read_bandwidth": None,
        "write_bandwidth": None,
        "total_tx": None,
        "total_rx": None,
        "totalNodes": 4,
        "healthyNodes": 2,
        "faultyNodes": 2,
        "fullyIdleNodes": 2,
        "partiallyIdleNodes": 1,
        "busyNodes": 1,
        "totalGpus": 32,
        "allocatedGpus": 12,
        "allocationRate": 37.5,
        "utilization": 60.0,
    }


def test_a_cluster_without_rows_has_zeros_and_nulls(
    db: peewee.Database, client: TestClient
) -> None:
    write_nodes(db, node("elsewhere"), cluster="c2")
    overview = data(client.get("/v1/clusters/overview"))
    assert isinstance(overview, dict)
    assert (overview["totalNodes"], overview["totalGpus"]) == (0, 0)
    assert (overview["allocationRate"], overview["utilization"]) == (None, None)
    other = data(client.get("/v1/clusters/overview", params={"cluster": "c2"}))
    assert isinstance(other, dict) and other["totalNodes"] == 1


def test_a_bad_cluster_is_a_400(sqlite_client: TestClient) -> None:
    message = error(sqlite_client.get("/v1/clusters/overview?cluster=A%20B"), 400)
    assert message.startswith("cluster: ")
