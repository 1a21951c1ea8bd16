"""/v1/gpuHours on GPU-hours the jobs' bodies summed from minutes the report store wrote
(usagerows.hours_cluster), on every engine: per namespace, workload and team label, over whole
UTC days, as JSON and as CSV; bad input is a 400 naming the parameter."""

from __future__ import annotations

import csv
import datetime
import io
from typing import Any

import peewee
import pytest
from fastapi.testclient import TestClient

from lens.roles.api.routers import gpuhours as router
from lens.usage import dailyreport
from tests.roles.api.conftest import data, error, make_client
from tests.roles.api.usagerows import hours_cluster

DAY = datetime.date(2026, 11, 21)
BOTH = {"start": "2026-11-21", "end": "2026-11-22"}
OAM = 'MI325X, "OAM"'
# Worked out from usagerows.hours_cluster, in GPU-hours (held, used, measured):
# p1 (w1, ml, team nlp) on MI300X: day 1, 6 min at 50 %: 0.1, 0.05, 0.1; day 2, 3 min unknown:
# 0.05, 0, 0. p2 (d1, serve, ops) on OAM: 3 min at 100 %: 0.05 each. p3 (no owner, dev): day 1
# 6 min at 0 % on a GPU of unknown model: 0.1, 0, 0.1; day 2 12 min at 25 % on MI300X: 0.2,
# 0.05, 0.2.
P3 = {"uid": "p3", "kind": "Pod", "name": "pod-p3", "namespace": "dev"}
# When hours_cluster summed the days: 06:00 on the second (its minutes from 05:00, an hour on).
SUMMED = datetime.datetime(2026, 11, 22, 6, tzinfo=datetime.UTC)


def _rows(client: TestClient, **query: Any) -> list[tuple[object, ...]]:
    listed = data(client.get("/v1/gpuHours", params=query))
    assert isinstance(listed, dict)
    return [
        (
            row["group"]["value"],
            row["gpu_model"],
            pytest.approx(row["held_gpu_hours"]),
            pytest.approx(row["used_gpu_hours"]),
            pytest.approx(row["measured_gpu_hours"]),
        )
        for row in listed["data"]
    ]


def test_per_namespace_over_both_days_most_held_first(
    db: peewee.Database, client: TestClient
) -> None:
    hours_cluster(db, DAY)
    assert _rows(client, **BOTH) == [
        ("dev", "MI300X", 0.2, 0.05, 0.2),
        ("ml", "MI300X", 0.15, 0.05, 0.1),
        ("dev", "", 0.1, 0.0, 0.1),
        ("serve", OAM, 0.05, 0.05, 0.05),
    ]
    listed = data(client.get("/v1/gpuHours", params={**BOTH, "page_size": 1}))
    assert listed == {
        "data": [
            {
                "group": {"kind": "namespace", "key": "", "value": "dev", "workload": None},
                "gpu_model": "MI300X",
                "held_gpu_hours": pytest.approx(0.2),
                "used_gpu_hours": pytest.approx(0.05),
                "measured_gpu_hours": pytest.approx(0.2),
            }
        ],
        "total": 4,
        "start": "2026-11-21",
        "end": "2026-11-22",
        # As of the sums (an hour into the second day), long ago by this test's clock.
        "measured": {"as_of": int(SUMMED.timestamp()), "stale": True},
    }


def test_one_day_and_the_days_are_whole_and_included(
    db: peewee.Database, client: TestClient
) -> None:
    hours_cluster(db, DAY)
    first = {"start": "2026-11-21", "end": "2026-11-21"}
    assert _rows(client, **first) == [
        ("dev", "", 0.1, 0.0, 0.1),
        ("ml", "MI300X", 0.1, 0.05, 0.1),
        ("serve", OAM, 0.05, 0.05, 0.05),
    ]
    second = {"start": "2026-11-22", "end": "2026-11-30"}
    assert _rows(client, **second) == [
        ("dev", "MI300X", 0.2, 0.05, 0.2),
        ("ml", "MI300X", 0.05, 0.0, 0.0),  # held, utilization never known
    ]
    assert _rows(client, start="2026-11-23", end="2026-11-23") == []


def test_per_workload_named_and_per_team(db: peewee.Database, client: TestClient) -> None:
    hours_cluster(db, DAY)
    listed = data(client.get("/v1/gpuHours", params={**BOTH, "group_by": "workload"}))
    assert isinstance(listed, dict)
    groups = [(row["group"], row["gpu_model"]) for row in listed["data"]]
    assert groups == [
        ({"kind": "workload", "key": "", "value": "p3", "workload": P3}, "MI300X"),
        (
            {
                "kind": "workload",
                "key": "",
                "value": "w1",
                "workload": {"uid": "w1", "kind": "PyTorchJob", "name": "train", "namespace": "ml"},
            },
            "MI300X",
        ),
        ({"kind": "workload", "key": "", "value": "p3", "workload": P3}, ""),
        (
            {
                "kind": "workload",
                "key": "",
                "value": "d1",  # the Deployment above the pod's ReplicaSet
                "workload": {
                    "uid": "d1",
                    "kind": "Deployment",
                    "name": "web",
                    "namespace": "serve",
                },
            },
            OAM,
        ),
    ]
    assert _rows(client, **BOTH, group_by="label:team") == [
        ("", "MI300X", 0.2, 0.05, 0.2),  # p3 has no workload, so no team
        ("nlp", "MI300X", 0.15, 0.05, 0.1),
        ("", "", 0.1, 0.0, 0.1),
        ("ops", OAM, 0.05, 0.05, 0.05),
    ]
    team = data(client.get("/v1/gpuHours", params={**BOTH, "group_by": "label:team"}))
    assert isinstance(team, dict)
    assert team["data"][0]["group"] == {
        "kind": "label",
        "key": "team",
        "value": "",
        "workload": None,
    }


def test_sorting_and_pages(db: peewee.Database, client: TestClient) -> None:
    hours_cluster(db, DAY)

    def keys(**query: Any) -> list[tuple[object, object]]:
        return [(value, model) for value, model, *_ in _rows(client, **BOTH, **query)]

    assert keys(order_by="group", desc="false") == [
        ("dev", ""),
        ("dev", "MI300X"),
        ("ml", "MI300X"),
        ("serve", OAM),
    ]
    assert keys(order_by="used_gpu_hours", desc="false")[0] == ("dev", "")
    assert keys(order_by="measured_gpu_hours")[:2] == [("dev", "MI300X"), ("dev", "")]
    assert keys(order_by="gpu_model", desc="false")[0] == ("dev", "")
    assert keys(page_num=2, page_size=3) == [("serve", OAM)]
    assert keys(page_num=3, page_size=3) == []


def test_csv_with_accept_text_csv(db: peewee.Database, client: TestClient) -> None:
    hours_cluster(db, DAY)
    query: dict[str, Any] = {
        **BOTH,
        "group_by": "workload",
        "page_size": 1,
    }  # CSV: every row, no pages
    answer = client.get("/v1/gpuHours", params=query, headers={"Accept": "text/csv"})
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "text/csv; charset=utf-8"
    as_json = client.get("/v1/gpuHours", params=query)
    for said in (answer, as_json):  # one URL, two media types: caches keep them apart
        assert "Accept" in said.headers["vary"]
    assert answer.headers["content-disposition"] == (
        'attachment; filename="gpu-hours-c1-2026-11-21-2026-11-22-workload.csv"'
    )
    day = "2026-11-21,2026-11-22,workload,"
    assert answer.text == (
        "start,end,group_kind,group_key,group_value,workload_kind,workload_namespace,"
        "workload_name,gpu_model,held_gpu_hours,used_gpu_hours,measured_gpu_hours\r\n"
        f"{day},p3,Pod,dev,pod-p3,MI300X,0.200000,0.050000,0.200000\r\n"
        f"{day},w1,PyTorchJob,ml,train,MI300X,0.150000,0.050000,0.100000\r\n"
        f"{day},p3,Pod,dev,pod-p3,,0.100000,0.000000,0.100000\r\n"
        f'{day},d1,Deployment,serve,web,"MI325X, ""OAM""",0.050000,0.050000,0.050000\r\n'
    )
    parsed = list(csv.DictReader(io.StringIO(answer.text)))
    assert parsed[3]["gpu_model"] == OAM  # RFC 4180 quoting reads back
    label = client.get(
        "/v1/gpuHours", params={**BOTH, "group_by": "label:team"}, headers={"Accept": "text/csv"}
    )
    assert label.headers["content-disposition"].endswith('-label-team.csv"')
    # JSON unless CSV is preferred.
    json_too = client.get("/v1/gpuHours", params=BOTH, headers={"Accept": "application/json"})
    assert json_too.headers["content-type"] == "application/json"


def test_an_empty_table(db: peewee.Database, client: TestClient) -> None:
    answer = client.get("/v1/gpuHours", params=BOTH, headers={"Accept": "text/csv"})
    assert answer.text == ",".join(router.CSV_COLUMNS) + "\r\n"
    assert data(client.get("/v1/gpuHours", params=BOTH)) == {
        "data": [],
        "total": 0,
        "start": "2026-11-21",
        "end": "2026-11-22",
        "measured": {"as_of": None, "stale": True},  # never summed
    }
    # Nothing kept by any label yet: no label can be answered, but the one the jobs keep.
    message = error(client.get("/v1/gpuHours", params={**BOTH, "group_by": "label:team"}), 400)
    assert message.startswith("group_by: ")
    configured = make_client(db, team_label="team")
    by_team = {**BOTH, "group_by": "label:team"}
    assert data(configured.get("/v1/gpuHours", params=by_team))["total"] == 0  # type: ignore[index]


def test_a_label_the_table_does_not_keep_is_a_400(db: peewee.Database, client: TestClient) -> None:
    hours_cluster(db, DAY)
    message = error(client.get("/v1/gpuHours", params={**BOTH, "group_by": "label:owner"}), 400)
    assert message == "group_by: GPU-hours are kept by these labels only: team"


@pytest.mark.parametrize(
    ("query", "parameter"),
    [
        ({"end": "2026-11-22"}, "start"),
        ({"start": "2026-11-22"}, "end"),
        ({"start": "2026-11-22", "end": "2026-11-21"}, "end"),
        ({"start": "2026-13-01", "end": "2026-11-21"}, "start"),
        ({"start": "1969-12-31", "end": "1970-01-02"}, "start"),
        ({"start": "2020-01-01", "end": "2026-11-21"}, "end"),
        ({**BOTH, "group_by": "team"}, "group_by"),
        ({**BOTH, "group_by": "label:"}, "group_by"),
        ({**BOTH, "group_by": "namespace:x"}, "group_by"),
        ({**BOTH, "group_by": "l" * 200}, "group_by"),
        ({**BOTH, "group_by": "label:t\x00"}, "group_by"),  # PostgreSQL refuses a NUL
        ({**BOTH, "order_by": "held_gpu_hours DESC"}, "order_by"),
        ({**BOTH, "desc": "up"}, "desc"),
        ({**BOTH, "page_num": "-3"}, "page_num"),
        ({**BOTH, "cluster": "UPPER"}, "cluster"),
    ],
)
def test_bad_input_is_a_400_naming_the_parameter(
    sqlite_client: TestClient, query: dict[str, str], parameter: str
) -> None:
    answer = sqlite_client.get("/v1/gpuHours", params=query, headers={"Accept": "text/csv"})
    message = error(answer, 400)  # an error is the envelope, CSV asked or not
    assert message.startswith(f"{parameter}: "), message


@pytest.mark.parametrize(
    ("accept", "csv_wanted"),
    [
        (None, False),
        ("", False),
        ("*/*", False),
        ("text/csv", True),
        ("TEXT/CSV; charset=utf-8", True),
        ("text/csv, */*", True),
        ("text/*", True),
        ("application/json, text/csv", False),
        ("application/json;q=0.5, text/csv", True),
        ("text/csv;q=0.2, application/json;q=0.9", False),
        ("text/csv;q=0", False),
        ("text/csv;q=abc", False),
        ("image/png", False),
    ],
)
def test_csv_is_chosen_when_accept_prefers_it(accept: str | None, csv_wanted: bool) -> None:
    assert router.wants_csv(accept) is csv_wanted


def test_the_csv_columns_are_the_daily_reports() -> None:
    assert router.CSV_COLUMNS[:2] == ("start", "end")
    assert router.CSV_COLUMNS[2:] == dailyreport.COLUMNS[1:]


def test_both_media_types_are_in_the_openapi(sqlite_client: TestClient) -> None:
    schema = sqlite_client.get("/openapi.json").json()
    content = schema["paths"]["/v1/gpuHours"]["get"]["responses"]["200"]["content"]
    assert set(content) == {"application/json", "text/csv"}
    assert content["text/csv"]["schema"] == {"type": "string"}
    assert content["application/json"]["schema"]["$ref"].endswith("GpuHoursList_")
