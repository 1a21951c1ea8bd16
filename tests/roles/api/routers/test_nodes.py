"""/v1/nodes on rows written by Lens's writers, on every engine: the original's payloads, its
filters, sorting and pagination, and when its figures were measured; bad input on every
parameter is a 400 naming it."""

from __future__ import annotations

import json

import peewee
import pytest
from fastapi.testclient import TestClient

from lens.store import freshness
from tests.roles.api.conftest import (
    CLUSTER,
    NOW,
    T0,
    data,
    error,
    gpu,
    make_client,
    node,
    write_gpus,
    write_nodes,
)
from tests.roles.api.seriesrows import S, at, at_wall_time, gpu_minute, write_minutes

# The cluster's latest complete minute at NOW.
SETTLED = int(T0) - 120


def _three_nodes(db: peewee.Database, client: TestClient) -> None:
    """Nodes whose GPUs were busy at 50 % (gpu-a), 10 % (cpu_x%) and not known (gpu-b) in
    SETTLED; the node info job ran 20 s before NOW."""
    write_nodes(
        db,
        node("gpu-a", address="10.0.0.1", gpu_allocation=8),
        node("gpu-b", address="10.0.0.2", status="NotReady", gpu_allocation=2),
        node("cpu_x%", gpu_name="NVIDIA H100", gpu_count=4),
    )
    write_minutes(db, "gpu-a", [gpu_minute(SETTLED, 0, utilization_mean_ratio=0.5)])
    write_minutes(db, "cpu_x%", [gpu_minute(SETTLED, 0, utilization_mean_ratio=0.1)])
    freshness.record(
        db, cluster=CLUSTER, figure=freshness.NODES, as_of=at(T0 - 20), interval_seconds=30
    )
    at_wall_time(client, NOW)


def test_the_list_has_the_originals_shape(db: peewee.Database, client: TestClient) -> None:
    _three_nodes(db, client)
    listed = data(client.get("/v1/nodes", params={"name": "gpu-a"}))
    assert listed == {
        "data": [
            {
                "name": "gpu-a",
                "ip": "10.0.0.1",
                "gpu_name": "AMD Instinct MI300X",
                "gpu_count": 8,
                "gpu_allocation": 8,
                "gpu_utilization": 50.0,
                "status": "Ready",
                "status_color": "green",
            }
        ],
        "total": 1,
        "measured": {
            "nodes": {"as_of": int(T0 - 20), "stale": False},
            "utilization": {"as_of": SETTLED, "stale": False},
        },
    }


def test_figures_not_measured_lately_are_stale(db: peewee.Database, client: TestClient) -> None:
    _three_nodes(db, client)
    at_wall_time(client, at(T0 + 60))  # the job's 30 s twice over; the minute still settling
    listed = data(client.get("/v1/nodes"))
    assert isinstance(listed, dict)
    assert listed["measured"]["nodes"] == {"as_of": int(T0 - 20), "stale": True}
    assert listed["measured"]["utilization"] == {"as_of": SETTLED, "stale": False}
    at_wall_time(client, at(T0 + 240))  # no newer minute four minutes on: the agents are late
    late = data(client.get("/v1/nodes"))
    assert isinstance(late, dict)
    assert late["measured"]["utilization"] == {"as_of": SETTLED, "stale": True}
    at_wall_time(client, at(T0 + 3600))  # none recent: unknown, never the old figure
    gone = data(client.get("/v1/nodes"))
    assert isinstance(gone, dict)
    assert gone["measured"]["utilization"] == {"as_of": None, "stale": True}
    assert {row["gpu_utilization"] for row in gone["data"]} == {None}


def test_nothing_measured_yet_is_said(db: peewee.Database, client: TestClient) -> None:
    listed = data(client.get("/v1/nodes"))
    assert listed == {
        "data": [],
        "total": 0,
        "measured": {
            "nodes": {"as_of": None, "stale": True},
            "utilization": {"as_of": None, "stale": True},
        },
    }


def test_filters_sorting_and_pages(db: peewee.Database, client: TestClient) -> None:
    _three_nodes(db, client)

    def names(**query: object) -> tuple[list[str], int]:
        listed = data(client.get("/v1/nodes", params=query))
        assert isinstance(listed, dict)
        return [row["name"] for row in listed["data"]], listed["total"]

    assert names() == (["cpu_x%", "gpu-a", "gpu-b"], 3)
    assert names(order_by="gpu_utilization", desc="true") == (["gpu-a", "cpu_x%", "gpu-b"], 3)
    assert names(order_by="gpu_utilization") == (["cpu_x%", "gpu-a", "gpu-b"], 3)  # null last
    assert names(page_num=2, page_size=2) == (["gpu-b"], 3)
    assert names(page_num=5, page_size=2) == ([], 3)
    assert names(status="NotReady, Unknown") == (["gpu-b"], 1)
    assert names(gpu_name="h100") == (["cpu_x%"], 1)
    # % and _ match themselves: no LIKE wildcard reaches the database from a request.
    assert names(name="_x%") == (["cpu_x%"], 1)
    assert names(name="%") == (["cpu_x%"], 1)
    assert names(name="GPU-") == (["gpu-a", "gpu-b"], 2)


def test_the_cluster_parameter_reads_another_clusters_rows(
    db: peewee.Database, client: TestClient
) -> None:
    write_nodes(db, node("other-node"), cluster="c2")
    listed = data(client.get("/v1/nodes"))
    assert isinstance(listed, dict) and (listed["data"], listed["total"]) == ([], 0)
    listed = data(client.get("/v1/nodes", params={"cluster": "c2"}))
    assert isinstance(listed, dict) and listed["total"] == 1


def test_one_node_and_an_unknown_one(db: peewee.Database, client: TestClient) -> None:
    write_nodes(db, node("gpu-a"), node("gpu-b", cpu="", taints=json.dumps([{"key": "k"}])))
    freshness.record(
        db, cluster=CLUSTER, figure=freshness.NODES, as_of=at(T0 - 5), interval_seconds=30
    )
    at_wall_time(client, NOW)
    assert data(client.get("/v1/nodes/gpu-a")) == {
        "name": "gpu-a",
        "health": "Ready",
        "cpu": "192 X AMD EPYC 9654",
        "memory": "2113459300Ki",
        "os": "Ubuntu 22.04.4 LTS",
        "gpu_driver_version": "6.7.0",
        "static_gpu_details": "8 X AMD Instinct MI300X",
        "kubelet_version": "v1.30.2",
        "containerd_version": "containerd://1.7.13",
        "cpu_count": 192,
        "cpu_model": "AMD EPYC 9654",
        "memory_bytes": 2113459300 * 1024,
        "gpu_count": 8,
        "gpu_model": "AMD Instinct MI300X",
        "measured": {"as_of": int(T0) - 5, "stale": False},
    }
    detail = data(client.get("/v1/nodes/gpu-b"))
    assert isinstance(detail, dict) and detail["cpu"] == "192 X unknown"
    assert (detail["cpu_count"], detail["cpu_model"]) == (192, None)
    assert error(client.get("/v1/nodes/nowhere"), 404) == "node nowhere not found"
    assert error(client.get("/v1/nodes/gpu-a", params={"cluster": "c2"}), 404)


def test_gpu_devices_in_index_order_without_the_ones_gone(
    db: peewee.Database, client: TestClient
) -> None:
    write_nodes(db, node("gpu-a"), node("gpu-empty"))
    write_gpus(db, "gpu-a", (gpu(1), gpu(0), gpu(2)))
    write_gpus(db, "gpu-a", (gpu(1), gpu(0), gpu(2, vram_bytes=None)), time=T0 + 60)
    write_gpus(db, "gpu-a", (gpu(1), gpu(0)), time=T0 + 120)
    write_gpus(db, "agent-only", (gpu(0),))
    devices = data(client.get("/v1/nodes/gpu-a/gpuDevices"))
    assert devices == [
        {
            "deviceId": index,
            "uuid": f"GPU-{index}",
            "model": "MI300X",
            "memory": "192GB",
            "utilization": None,
            "temperature": None,
            "power": None,
            "health": None,  # an agent that does not judge health
        }
        for index in (0, 1)
    ]
    assert data(client.get("/v1/nodes/gpu-empty/gpuDevices")) == []
    # The figures are those of each GPU's latest minute of the last few (none: null).
    minute = gpu_minute(
        S + 3000,
        1,
        utilization_mean_ratio=0.25,
        power_mean_watts=310.5,
        temperatures=[("junction", 71.0), ("edge", 55.0)],
    )
    write_minutes(db, "gpu-a", [minute])
    at_wall_time(client, at(S + 3000 + 150))
    one = data(client.get("/v1/nodes/gpu-a/gpuDevices"))
    assert isinstance(one, list)
    assert [(d["utilization"], d["temperature"], d["power"]) for d in one] == [
        (None, None, None),
        (25.0, 71.0, 310.5),
    ]
    at_wall_time(client, at(S + 3000 + 3600))  # an hour later: no recent minute
    later = data(client.get("/v1/nodes/gpu-a/gpuDevices"))
    assert isinstance(later, list) and {d["power"] for d in later} == {None}
    # The agent's judgement of each GPU, as its latest inventory said it.
    judged = (gpu(1, health="unhealthy: ecc_uncorrectable"), gpu(0, health="healthy"))
    write_gpus(db, "gpu-a", judged, time=T0 + 180)
    health = data(client.get("/v1/nodes/gpu-a/gpuDevices"))
    assert isinstance(health, list)
    assert [d["health"] for d in health] == ["healthy", "unhealthy: ecc_uncorrectable"]
    assert isinstance(data(client.get("/v1/nodes/agent-only/gpuDevices")), list)
    assert error(client.get("/v1/nodes/nowhere/gpuDevices"), 404)


def test_the_changelog_newest_first(db: peewee.Database, client: TestClient) -> None:
    write_gpus(db, "gpu-a", (gpu(0), gpu(1)))
    write_gpus(db, "gpu-a", (gpu(0, serial="S9"),), time=T0 + 60)
    listed = data(client.get("/v1/nodes/gpu-a/changelog"))
    assert isinstance(listed, dict) and listed["total"] == 4
    newest = listed["data"][:2]
    assert sorted((row["op"], row["device_uuid"]) for row in newest) == [
        ("DELETE", "GPU-1"),
        ("UPDATE", "GPU-0"),
    ]
    update = next(row for row in newest if row["op"] == "UPDATE")
    assert update == {
        "device_type": "gpu",
        "device_name": "MI300X",
        "device_uuid": "GPU-0",
        "op": "UPDATE",
        "changes": 'serial: "S0" -> "S9"',
        "created_at": int(T0 + 60),
    }
    created = data(client.get("/v1/nodes/gpu-a/changelog", params={"op": "CREATE"}))
    assert isinstance(created, dict) and created["total"] == 2
    rdma = data(client.get("/v1/nodes/gpu-a/changelog", params={"device_type": "rdma"}))
    assert rdma == {"data": [], "total": 0}
    assert error(client.get("/v1/nodes/nowhere/changelog"), 404)


@pytest.mark.parametrize(
    ("path", "query", "parameter"),
    [
        ("/v1/nodes", {"page_num": "0"}, "page_num"),
        ("/v1/nodes", {"page_num": "x"}, "page_num"),
        ("/v1/nodes", {"page_num": "99999999999999999999999"}, "page_num"),
        ("/v1/nodes", {"page_size": "-1"}, "page_size"),
        ("/v1/nodes", {"page_size": "1001"}, "page_size"),
        ("/v1/nodes", {"order_by": "name; DROP TABLE nodes"}, "order_by"),
        ("/v1/nodes", {"order_by": "cpu"}, "order_by"),
        ("/v1/nodes", {"desc": "maybe"}, "desc"),
        ("/v1/nodes", {"name": "n" * 254}, "name"),
        ("/v1/nodes", {"gpu_name": "g" * 254}, "gpu_name"),
        ("/v1/nodes", {"status": "s" * 1001}, "status"),
        ("/v1/nodes", {"cluster": "Not_A_Label"}, "cluster"),
        ("/v1/nodes", {"cluster": "c" * 64}, "cluster"),
        ("/v1/nodes/n1", {"cluster": "-x"}, "cluster"),
        (f"/v1/nodes/{'n' * 254}", {}, "name"),
        ("/v1/nodes/n1/gpuDevices", {"cluster": ""}, "cluster"),
        ("/v1/nodes/n1/changelog", {"device_type": "disk"}, "device_type"),
        ("/v1/nodes/n1/changelog", {"op": "create"}, "op"),
        ("/v1/nodes/n1/changelog", {"page_size": "0"}, "page_size"),
    ],
)
def test_bad_input_is_a_400_naming_the_parameter(
    sqlite_client: TestClient, path: str, query: dict[str, str], parameter: str
) -> None:
    message = error(sqlite_client.get(path, params=query), 400)
    assert message.startswith(f"{parameter}: "), message


def test_the_largest_page_is_configured(sqlite_db: peewee.Database) -> None:
    small = make_client(sqlite_db, max_page_size=5)
    listed = data(small.get("/v1/nodes", params={"page_size": 5}))
    assert isinstance(listed, dict) and (listed["data"], listed["total"]) == ([], 0)
    assert error(small.get("/v1/nodes", params={"page_size": 6}), 400).startswith("page_size: ")


def test_the_sort_columns_are_the_queries_allow_list() -> None:
    from lens.roles.api.routers import nodes as router
    from lens.store.queries import nodes as queries

    assert [member.value for member in router.NodeOrder] == list(queries.SORTABLE)
