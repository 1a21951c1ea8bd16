"""/v1/clusters/overview from the nodes and gpu_pods tables and the latest complete minute, on
every engine: the original's flat object, each pod counted once, unknown figures null, and
when each group of figures was measured."""

from __future__ import annotations

import json

import peewee
from fastapi.testclient import TestClient

from lens.store import freshness, models
from tests.roles.api.conftest import (
    CLUSTER,
    NOW,
    T0,
    data,
    error,
    node,
    pod,
    write_nodes,
    write_pods,
)
from tests.roles.api.seriesrows import at, at_wall_time, gpu_minute, write_minutes

SETTLED = int(T0) - 120  # the latest complete minute at NOW


def test_the_overview_of_a_cluster(db: peewee.Database, client: TestClient) -> None:
    write_nodes(
        db,
        node("busy"),
        node("half"),
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
    write_minutes(db, "busy", [gpu_minute(SETTLED, 0, utilization_mean_ratio=0.9)])
    write_minutes(db, "half", [gpu_minute(SETTLED, 0, utilization_mean_ratio=0.3)])
    for figure, ago in ((freshness.NODES, 10), (freshness.PODS, 20)):
        freshness.record(
            db, cluster=CLUSTER, figure=figure, as_of=at(T0 - ago), interval_seconds=30
        )
    at_wall_time(client, NOW)
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
        "measured": {
            "nodes": {"as_of": int(T0) - 10, "stale": False},
            "allocation": {"as_of": int(T0) - 20, "stale": False},
            "utilization": {"as_of": SETTLED, "stale": False},
            "storage": {"as_of": None, "stale": True},  # no scan has run
        },
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
