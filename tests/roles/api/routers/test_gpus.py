"""/v1/gpus on rows written by Lens's writers (usagerows.gpu_cluster), on every engine: each GPU
with its latest fresh minute's figures and holder, filters, sorting and pages; bad input is a
400 naming the parameter."""

from __future__ import annotations

import time
from typing import Any

import peewee
import pytest
from fastapi.testclient import TestClient

from tests.roles.api.conftest import data, error
from tests.roles.api.usagerows import GIB, gpu_cluster

UNKNOWN = {
    "as_of": None,
    "utilization_percent": None,
    "memory_used_bytes": None,
    "power_watts": None,
    "temperature_celsius": None,
    "holder": None,
    "holder_pods": 0,
}


def _listed(client: TestClient, **query: Any) -> dict[str, Any]:
    listed = data(client.get("/v1/gpus", params=query))
    assert isinstance(listed, dict)
    return listed


def _keys(listed: dict[str, Any]) -> list[str]:
    rows = listed["data"]
    assert isinstance(rows, list)
    return [f"{row['node']}/{row['gpu_id']}" for row in rows]


def test_every_gpu_with_its_latest_minute_and_holder(
    db: peewee.Database, client: TestClient
) -> None:
    latest = int(gpu_cluster(db, now=time.time()))
    listed = _listed(client)
    assert listed["total"] == 5  # gone's GPU is left out: its node is Deleted
    by_key = dict(zip(_keys(listed), listed["data"], strict=True))
    assert by_key["agent-only/0"] == {
        "node": "agent-only",
        "gpu_id": 0,
        "uuid": "GPU-0",
        "model": "MI300X",
        "memory_total_bytes": 192 * GIB,
        **UNKNOWN,
    }
    assert by_key["gpu-a/0"] == {
        "node": "gpu-a",
        "gpu_id": 0,
        "uuid": "GPU-0",
        "model": "MI300X",
        "memory_total_bytes": 192 * GIB,
        "as_of": latest,  # not the minute before, at 10 %
        "utilization_percent": 50.0,
        "memory_used_bytes": 10 * GIB,
        "power_watts": 300.0,
        "temperature_celsius": 70.0,  # the hottest sensor
        "holder": {
            "namespace": "ml",
            "pod_name": "pod-p1",
            "pod_uid": "p1",
            "containers": ["main"],
            "held_seconds": 60.0,
            "workload": {"uid": "w1", "kind": "PyTorchJob", "name": "train", "namespace": "ml"},
        },
        "holder_pods": 1,
    }
    shared = by_key["gpu-a/1"]
    assert (shared["as_of"], shared["utilization_percent"], shared["holder_pods"]) == (
        latest,
        0.0,
        2,
    )
    # The longest held of the two pods; its workload is the Deployment above its ReplicaSet.
    assert shared["holder"] == {
        "namespace": "serve",
        "pod_name": "pod-p2",
        "pod_uid": "p2",
        "containers": ["main"],
        "held_seconds": 60.0,
        "workload": {"uid": "d1", "kind": "Deployment", "name": "web", "namespace": "serve"},
    }
    stale = by_key["gpu-a/2"]  # its last minute is 10 minutes old: nothing live, no holder
    assert {k: stale[k] for k in UNKNOWN} == UNKNOWN
    free = by_key["gpu-b/0"]  # a free GPU of unknown utilization; the minute ahead is ignored
    assert (free["model"], free["memory_total_bytes"]) == ("MI325X", 256 * GIB)
    assert {k: free[k] for k in UNKNOWN} == {**UNKNOWN, "as_of": latest}


def test_filters_sorting_and_pages(db: peewee.Database, client: TestClient) -> None:
    gpu_cluster(db, now=time.time())
    everything = ["agent-only/0", "gpu-a/0", "gpu-a/1", "gpu-a/2", "gpu-b/0"]
    assert _keys(_listed(client)) == everything
    assert _keys(_listed(client, desc="true")) == everything[::-1]
    assert _keys(_listed(client, node="gpu-a")) == ["gpu-a/0", "gpu-a/1", "gpu-a/2"]
    assert _keys(_listed(client, node="gpu")) == []  # a node's name exactly
    assert _keys(_listed(client, model="mi325")) == ["gpu-b/0"]
    assert _keys(_listed(client, model="%")) == []  # no LIKE wildcard from a request
    # Held in the latest fresh minute: GPU-2's stale minute held by ml does not count.
    assert _keys(_listed(client, holder_namespace="ml")) == ["gpu-a/0"]
    assert _keys(_listed(client, holder_namespace="dev")) == ["gpu-a/1"]  # the other holder
    assert _keys(_listed(client, holder_namespace="nobody")) == []
    # Unknown figures last, either way; ties by node and index.
    by_use = ["gpu-a/0", "gpu-a/1", "agent-only/0", "gpu-a/2", "gpu-b/0"]
    assert _keys(_listed(client, order_by="utilization", desc="true")) == by_use
    assert _keys(_listed(client, order_by="utilization")) == ["gpu-a/1", "gpu-a/0", *by_use[2:]]
    assert _keys(_listed(client, order_by="power"))[:1] == ["gpu-a/0"]
    assert _keys(_listed(client, order_by="model", desc="true"))[0] == "gpu-b/0"
    paged = _listed(client, page_num=2, page_size=2)
    assert (_keys(paged), paged["total"]) == (["gpu-a/1", "gpu-a/2"], 5)
    assert _listed(client, page_num=9, page_size=2) == {"data": [], "total": 5}
    assert _listed(client, node="gpu-a", page_size=1)["total"] == 3


def test_an_empty_cluster_and_another_cluster(db: peewee.Database, client: TestClient) -> None:
    assert _listed(client) == {"data": [], "total": 0}
    gpu_cluster(db, now=time.time())
    assert _listed(client, cluster="c2") == {"data": [], "total": 0}


@pytest.mark.parametrize(
    ("query", "parameter"),
    [
        ({"order_by": "uuid; DROP TABLE gpu_devices"}, "order_by"),
        ({"order_by": "holder"}, "order_by"),
        ({"desc": "sometimes"}, "desc"),
        ({"node": "n" * 254}, "node"),
        ({"node": "gpu-a\x00"}, "node"),  # PostgreSQL refuses a NUL in text
        ({"model": "\x1f"}, "model"),
        ({"model": "m" * 129}, "model"),
        ({"holder_namespace": "n" * 64}, "holder_namespace"),
        ({"page_num": "0"}, "page_num"),
        ({"page_size": "1001"}, "page_size"),
        ({"cluster": "Bad_Cluster"}, "cluster"),
    ],
)
def test_bad_input_is_a_400_naming_the_parameter(
    sqlite_client: TestClient, query: dict[str, str], parameter: str
) -> None:
    message = error(sqlite_client.get("/v1/gpus", params=query), 400)
    assert message.startswith(f"{parameter}: "), message


def test_the_sort_columns_are_the_queries_allow_list() -> None:
    from lens.roles.api.routers import gpus as router
    from lens.store.queries import gpus as queries

    assert [member.value for member in router.GpuOrder] == list(queries.SORTABLE)
