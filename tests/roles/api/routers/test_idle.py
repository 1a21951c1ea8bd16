"""/v1/idle on intervals the idle-gpus job body found in minutes the report store wrote
(usagerows.idle_cluster), on every engine: idle GPUs now, every interval of a range with its
idle minutes inside it, the totals per namespace; bad input is a 400 naming the parameter."""

from __future__ import annotations

from typing import Any

import peewee
import pytest
from fastapi.testclient import TestClient

from tests.roles.api.conftest import T0, data, error
from tests.roles.api.usagerows import idle_cluster

B = int(T0)
TRAIN = {"uid": "w1", "kind": "PyTorchJob", "name": "train", "namespace": "ml"}
WEB = {"uid": "d1", "kind": "Deployment", "name": "web", "namespace": "serve"}


def _listed(client: TestClient, **query: Any) -> dict[str, Any]:
    listed = data(client.get("/v1/idle", params=query))
    assert isinstance(listed, dict)
    return listed


def _names(listed: dict[str, Any]) -> list[str]:
    """Each interval as <pod>@<since, minutes from B>."""
    rows = listed["data"]
    assert isinstance(rows, list)
    return [f"{row['pod_uid']}@{(row['since'] - B) // 60}" for row in rows]


def test_the_gpus_idle_now(db: peewee.Database, client: TestClient) -> None:
    idle_cluster(db, B)
    listed = _listed(client)
    assert listed["data"] == [
        {
            "node": "gpu-a",
            "gpu_uuid": "GPU-1",
            "gpu_id": 1,
            "gpu_model": "MI300X",
            "namespace": "serve",
            "pod_name": "pod-p2",
            "pod_uid": "p2",
            "workload": WEB,  # the Deployment above the pod's ReplicaSet
            "since": B,
            "until": B + 600,
            "minutes": 10,
            "minutes_in_range": None,
            "utilization_percent": 0.0,
            "open": True,
        },
        {
            "node": "gpu-a",
            "gpu_uuid": "GPU-0",
            "gpu_id": 0,
            "gpu_model": "MI300X",
            "namespace": "ml",
            "pod_name": "pod-p1",
            "pod_uid": "p1",
            "workload": TRAIN,
            "since": B + 360,
            "until": B + 600,
            "minutes": 4,
            "minutes_in_range": None,
            "utilization_percent": pytest.approx(2.0),
            "open": True,
        },
    ]
    # Now: the GPUs idle and their idle time so far, per namespace.
    assert listed["namespaces"] == [
        {"namespace": "ml", "intervals": 1, "idle_gpu_hours": pytest.approx(4 / 60)},
        {"namespace": "serve", "intervals": 1, "idle_gpu_hours": pytest.approx(10 / 60)},
    ]
    assert (listed["total"], listed["start"], listed["end"]) == (2, None, None)


def test_every_interval_of_a_range_with_its_minutes_inside(
    db: peewee.Database, client: TestClient
) -> None:
    idle_cluster(db, B)
    listed = _listed(client, start=B + 60, end=B + 420)
    rows = listed["data"]
    assert isinstance(rows, list)
    inside = {f"{r['pod_uid']}@{(r['since'] - B) // 60}": r["minutes_in_range"] for r in rows}
    # A [0, 5) min: 1..5 inside; B [6, 10): 6..7; C [0, 10): 1..7; D [2, 6) wholly.
    assert inside == {"p2@0": 6.0, "p1@0": 4.0, "p3@2": 4.0, "p1@6": 1.0}
    ended = next(r for r in rows if r["pod_uid"] == "p3")
    assert ended["open"] is False and ended["until"] == B + 360
    assert (ended["gpu_id"], ended["gpu_model"], ended["workload"]) == (None, None, None)
    assert listed["namespaces"] == [
        {"namespace": "dev", "intervals": 1, "idle_gpu_hours": pytest.approx(4 / 60)},
        {"namespace": "ml", "intervals": 2, "idle_gpu_hours": pytest.approx(5 / 60)},
        {"namespace": "serve", "intervals": 1, "idle_gpu_hours": pytest.approx(6 / 60)},
    ]
    assert (listed["total"], listed["start"], listed["end"]) == (4, B + 60, B + 420)
    # Half a minute of C and of A.
    half = _listed(client, start=B + 30, end=B + 60)
    assert [r["minutes_in_range"] for r in half["data"]] == [0.5, 0.5]
    # Intervals end where their last idle minute does: none overlaps a range after that.
    assert _listed(client, start=B + 600, end=B + 700)["data"] == []


def test_filters_sorting_and_pages(db: peewee.Database, client: TestClient) -> None:
    idle_cluster(db, B)
    day = {"start": B - 3600, "end": B + 3600}
    assert _names(_listed(client, **day)) == ["p1@0", "p2@0", "p3@2", "p1@6"]
    assert _names(_listed(client, **day, order_by="minutes", desc="true")) == [
        "p2@0",
        "p1@0",
        "p1@6",  # 4 minutes each: by node, gpu-a before gpu-c
        "p3@2",
    ]
    assert _names(_listed(client, **day, order_by="namespace")) == ["p3@2", "p1@0", "p1@6", "p2@0"]
    assert _names(_listed(client, **day, order_by="node", desc="true"))[0] == "p3@2"
    only_ml = _listed(client, **day, namespace="ml")
    assert (_names(only_ml), only_ml["total"]) == (["p1@0", "p1@6"], 2)
    assert only_ml["namespaces"] == [
        {"namespace": "ml", "intervals": 2, "idle_gpu_hours": pytest.approx(9 / 60)}
    ]
    assert _names(_listed(client, **day, node="gpu-c")) == ["p3@2"]
    paged = _listed(client, **day, page_num=2, page_size=3)
    assert (_names(paged), paged["total"]) == (["p1@6"], 4)
    assert len(paged["namespaces"]) == 3  # totals of every page


def test_nothing_idle(client: TestClient) -> None:
    never = {"as_of": None, "stale": True}
    empty = {
        "data": [],
        "total": 0,
        "namespaces": [],
        "start": None,
        "end": None,
        "measured": never,
    }
    assert _listed(client) == empty
    assert _listed(client, start=B, end=B + 60) == {**empty, "start": B, "end": B + 60}
    assert _listed(client, cluster="c2")["total"] == 0


@pytest.mark.parametrize(
    ("query", "parameter"),
    [
        ({"start": B}, "end"),
        ({"end": B}, "start"),
        ({"start": B, "end": B}, "end"),
        ({"start": B + 60, "end": B}, "end"),
        ({"start": B, "end": B + 367 * 86_400}, "end"),
        ({"start": "-1", "end": B}, "start"),
        ({"start": "yesterday", "end": B}, "start"),
        ({"start": B, "end": "99999999999999999999"}, "end"),
        ({"order_by": "pod_uid"}, "order_by"),
        ({"desc": "2"}, "desc"),
        ({"namespace": "n" * 64}, "namespace"),
        ({"node": "n" * 254}, "node"),
        ({"namespace": "ml\x00"}, "namespace"),  # PostgreSQL refuses a NUL in text
        ({"page_size": "0"}, "page_size"),
        ({"cluster": "-"}, "cluster"),
    ],
)
def test_bad_input_is_a_400_naming_the_parameter(
    sqlite_client: TestClient, query: dict[str, Any], parameter: str
) -> None:
    message = error(sqlite_client.get("/v1/idle", params=query), 400)
    assert message.startswith(f"{parameter}: "), message


def test_the_range_limit_is_said(sqlite_client: TestClient) -> None:
    message = error(sqlite_client.get("/v1/idle", params={"start": 0, "end": 10**9}), 400)
    assert message == "end: the range is at most 366 days"


def test_the_sort_columns_are_the_queries_allow_list() -> None:
    from lens.roles.api.routers import idle as router
    from lens.store.queries import idle as queries

    assert [member.value for member in router.IdleOrder] == list(queries.SORTABLE)
