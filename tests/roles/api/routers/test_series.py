"""The series and GPU-figure paths on GPU-minutes written by the jobs' writer, on every engine:
the original's shapes, figures worked out by hand from the minutes written, a workload's series
written as its model would, bad ranges 400, unknown nodes and workloads 404."""

from __future__ import annotations

import datetime

import peewee
import pytest
from fastapi.testclient import TestClient

from lens.roles.api.schemas import base
from lens.roles.api.schemas import series as payloads
from lens.store import freshness
from tests.roles.api.conftest import CLUSTER, data, error, gpu, node, write_gpus, write_nodes
from tests.roles.api.seriesrows import (
    GIB,
    NOW,
    S,
    at_wall_time,
    gpu_minute,
    roll_up,
    write_minutes,
    write_training,
    write_workload,
)

MINUTE = datetime.timedelta(minutes=1)


def _graph(serial: int, unit: str, series: list[dict[str, object]]) -> dict[str, object]:
    return {"serial": serial, "series": series, "config": {"y_axis_unit": unit}}


def _line(labels: dict[str, str], *points: tuple[int, float]) -> dict[str, object]:
    return {
        "labels": labels,
        "values": [{"timestamp": t, "value": pytest.approx(v)} for t, v in points],
    }


def _node_minutes(db: peewee.Database) -> None:
    """gpu-a: GPU 0 held by p1 (all of two minutes, then 30 s), GPU 1 held by p2 for a minute."""
    write_nodes(db, node("gpu-a"))
    write_minutes(
        db,
        "gpu-a",
        [
            gpu_minute(S, 0, held=[("p1", 60)], utilization_mean_ratio=0.5),
            gpu_minute(S + 60, 0, held=[("p1", 60)], utilization_mean_ratio=0.7),
            gpu_minute(S + 120, 0, held=[("p1", 30)], utilization_mean_ratio=0.2),
            gpu_minute(S, 1, utilization_mean_ratio=0.1),
            gpu_minute(S + 60, 1),  # utilization unknown: out of the mean, in the allocation
            gpu_minute(S + 180, 1, held=[("p2", 60)], utilization_mean_ratio=0.9),
        ],
    )


def test_a_nodes_gpu_metrics_per_step(db: peewee.Database, client: TestClient) -> None:
    _node_minutes(db)
    window = {"start": S, "end": S + 300, "step": 120}
    metrics = data(client.get("/v1/nodes/gpu-a/gpuMetrics", params=window))
    # Bucket S: GPU 0 (50 + 70) / 2, GPU 1 10 (its unknown minute left out); held 120 s of
    # 4 GPU-minutes. Bucket S+120: GPU 0 20, GPU 1 90; held 30 + 60 s of 2. S+240: no data.
    assert metrics == {
        "gpu_utilization": _graph(
            1,
            "%",
            [
                _line({"gpu_id": "0"}, (S, 60.0), (S + 120, 20.0)),
                _line({"gpu_id": "1"}, (S, 10.0), (S + 120, 90.0)),
            ],
        ),
        "gpu_allocation_rate": _graph(2, "%", [_line({}, (S, 50.0), (S + 120, 75.0))]),
    }


def test_gpu_metrics_of_a_node_without_minutes_and_of_an_unknown_one(
    db: peewee.Database, client: TestClient
) -> None:
    write_nodes(db, node("quiet"))
    write_gpus(db, "agent-only", (gpu(0),))
    window = {"start": S, "end": S + 300}
    assert data(client.get("/v1/nodes/quiet/gpuMetrics", params=window)) == {
        "gpu_utilization": _graph(1, "%", []),
        "gpu_allocation_rate": _graph(2, "%", []),
    }
    assert data(client.get("/v1/nodes/agent-only/gpuMetrics", params=window))
    message = error(client.get("/v1/nodes/nowhere/gpuMetrics", params=window), 404)
    assert message == "node nowhere not found"


def _cluster_minutes(db: peewee.Database) -> None:
    """Three nodes, gpu-c without an inventory (its VRAM unknown, its GPU in no capacity): the
    cluster's three GPUs known since ten minutes before S."""
    write_gpus(db, "gpu-a", (gpu(0), gpu(1)), time=S - 600)  # 192 GiB each
    write_gpus(db, "gpu-b", (gpu(0, vram_bytes=100 * GIB),), time=S - 600)
    write_minutes(
        db,
        "gpu-a",
        [
            gpu_minute(S, 0, held=[("p1", 60)], utilization_mean_ratio=0.4, **_vram(48)),
            gpu_minute(S + 60, 0, held=[("p1", 60)], utilization_mean_ratio=0.6),
            gpu_minute(S, 1, held=[("p2", 30)], utilization_mean_ratio=0.8, **_vram(96)),
        ],
    )
    write_minutes(
        db,
        "gpu-b",
        [
            gpu_minute(S, 0, **_vram(25)),
            gpu_minute(S + 120, 0, held=[("p3", 60)], utilization_mean_ratio=0.3),
        ],
    )
    write_minutes(db, "gpu-c", [gpu_minute(S, 0, utilization_mean_ratio=0.0, **_vram(10))])


def _vram(gib: float) -> dict[str, object]:
    return {"vram_used_mean_bytes": gib * GIB}


def test_the_clusters_history_is_one_figure_per_step(
    db: peewee.Database, client: TestClient
) -> None:
    _cluster_minutes(db)
    window = {"start": S, "end": S + 180, "step": 60}
    history = data(client.get("/v1/nodes/gpuUtilizationHistory", params=window))
    # S: utilization (40 + 80 + 0) / 3 (gpu-b's unknown); VRAM (25 + 50 + 25) / 3 (gpu-c's
    # VRAM size unknown); held 60 + 30 s of the cluster's 3 GPUs' 180 s, whoever reported.
    # S+60: gpu-a's GPU 0 held, 60 of 180 s. S+120: gpu-b's, held, VRAM unknown.
    third = 100.0 / 3
    assert history == {
        "allocationRate": _line({}, (S, 50.0), (S + 60, third), (S + 120, third))["values"],
        "utilization": _line({}, (S, 40.0), (S + 60, 60.0), (S + 120, 30.0))["values"],
        "vramUtilization": _line({}, (S, 100.0 / 3))["values"],
    }
    before = {"start": S - 180, "end": S}
    empty = data(client.get("/v1/nodes/gpuUtilizationHistory", params=before))
    assert empty == {"allocationRate": [], "utilization": [], "vramUtilization": []}


def test_long_steps_read_the_hourly_rollup(db: peewee.Database, client: TestClient) -> None:
    _cluster_minutes(db)
    window = {"start": S - 3600, "end": S + 7200, "step": 3600}
    path = "/v1/nodes/gpuUtilizationHistory"
    unrolled = data(client.get(path, params=window))
    assert unrolled == {"allocationRate": [], "utilization": [], "vramUtilization": []}
    roll_up(db)
    # The hour S. Each GPU-hour's mean weighs its minutes reported: utilization: gpu-a's GPU 0
    # (40 + 60) / 2 x 2, GPU 1 80 x 1, gpu-b's 30 (its one known minute) x 2, gpu-c's 0 x 1,
    # over 6; VRAM: 25 % x 2, 50 % x 1, 25 % x 2 (gpu-c's size unknown) over 5; held 60 + 60
    # + 30 + 60 s of the 3 GPUs' seconds in the hour's three minutes so far (540).
    assert data(client.get(path, params=window)) == {
        "allocationRate": _line({}, (S, 210 / 540 * 100))["values"],
        "utilization": _line({}, (S, 40.0))["values"],
        "vramUtilization": _line({}, (S, 30.0))["values"],
    }


def test_bad_ranges_are_400s_naming_the_parameter(sqlite_client: TestClient) -> None:
    client, path = sqlite_client, "/v1/nodes/gpuUtilizationHistory"
    assert error(client.get(path, params={"end": S}), 400).startswith("start:")
    assert error(client.get(path, params={"start": S}), 400).startswith("end:")
    assert error(client.get(path, params={"start": "x", "end": S}), 400).startswith("start:")
    assert error(client.get(path, params={"start": -1, "end": S}), 400).startswith("start:")
    assert error(client.get(path, params={"start": S, "end": 10**13}), 400).startswith("end:")
    assert error(client.get(path, params={"start": S, "end": S}), 400) == (
        "end: expected a time after start"
    )
    assert error(client.get(path, params={"start": S, "end": S + 60, "step": 0}), 400).startswith(
        "step:"
    )
    too_many = error(client.get(path, params={"start": S, "end": S + 11_001, "step": 1}), 400)
    assert too_many.startswith("step:") and "at most 11000" in too_many
    assert data(client.get(path, params={"start": S, "end": S + 11_000 * 60}))
    for other in ("/v1/nodes/gpu-a/gpuMetrics", "/v1/workloads/w1/metrics"):
        assert error(client.get(other, params={"start": S, "end": S - 1}), 400).startswith("end:")
    bad_cluster = {"start": S, "end": S + 60, "cluster": "Bad_Name"}
    assert error(client.get(path, params=bad_cluster), 400).startswith("cluster:")


def test_each_nodes_allocation(db: peewee.Database, client: TestClient) -> None:
    write_nodes(
        db,
        node("n2", gpu_allocation=8),
        node("n1", gpu_allocation=2),
        node("gone", status="Deleted", gpu_allocation=8),
        node("cpu-only", gpu_count=0),
    )
    write_gpus(db, "n1", (gpu(0), gpu(1)))
    assert data(client.get("/v1/nodes/gpuAllocation")) == [
        {"node": "n1", "vendor": "amd", "capacity": 8, "allocated": 2, "allocationRate": 0.25},
        {"node": "n2", "vendor": None, "capacity": 8, "allocated": 8, "allocationRate": 1.0},
    ]
    assert data(client.get("/v1/nodes/gpuAllocation", params={"cluster": "c2"})) == []


def _now_minutes(db: peewee.Database) -> datetime.datetime:
    """Minutes of three nodes at NOW - 2 min (complete; n1's GPU 0 held by p1 for half of
    it, every other GPU free) and NOW - 1 min (not yet): `now`."""
    settled, fresh = int((NOW - 2 * MINUTE).timestamp()), int((NOW - MINUTE).timestamp())
    junction = (("junction", 80.0),), (("junction", 60.0),)
    write_minutes(
        db,
        "n1",
        [
            gpu_minute(settled, 0, utilization_mean_ratio=0.9, power_mean_watts=500.0,
                       temperatures=junction[0], held=[("p1", 30)]),
            gpu_minute(settled, 1, utilization_mean_ratio=0.7, power_mean_watts=300.0,
                       temperatures=junction[1]),
            gpu_minute(fresh, 0, utilization_mean_ratio=0.0, power_mean_watts=1.0),
        ],
    )  # fmt: skip
    write_minutes(
        db,
        "n2",
        [
            gpu_minute(settled, 0, utilization_mean_ratio=0.5, power_mean_watts=700.0,
                       temperatures=(("gpu", 90.0), ("memory", 95.0))),
        ],
    )  # fmt: skip
    write_minutes(
        db,
        "n3",
        [gpu_minute(settled, 0, utilization_mean_ratio=0.6, temperatures=(("junction", 65.0),))],
    )
    return NOW + datetime.timedelta(seconds=30)


def test_the_clusters_utilization_now(db: peewee.Database, client: TestClient) -> None:
    path = "/v1/nodes/gpuUtilization"
    never = {"as_of": None, "stale": True}
    assert data(client.get(path)) == {
        "allocationRate": None,
        "utilization": None,
        "measured": {"allocation": never, "utilization": never},
    }
    write_nodes(
        db,
        node("n1", gpu_allocation=4),
        node("n2", gpu_allocation=8),
        node("gone", status="Deleted", gpu_allocation=8),
        node("cpu-only", gpu_count=0),
    )
    ran = NOW - datetime.timedelta(seconds=5)
    freshness.record(db, cluster=CLUSTER, figure=freshness.NODES, as_of=ran, interval_seconds=30)
    at_wall_time(client, _now_minutes(db))
    # 12 of 16 GPUs held; utilization (90 + 70 + 50 + 60) / 4 in NOW - 2 min.
    settled = {"as_of": int((NOW - 2 * MINUTE).timestamp()), "stale": False}
    assert data(client.get(path)) == {
        "allocationRate": 75.0,
        "utilization": pytest.approx(67.5),
        "measured": {
            "allocation": {"as_of": int(ran.timestamp()), "stale": False},
            "utilization": settled,
        },
    }
    at_wall_time(client, NOW + datetime.timedelta(minutes=15))  # the minutes are old now
    later = data(client.get(path))
    assert isinstance(later, dict)
    assert (later["allocationRate"], later["utilization"]) == (75.0, None)
    assert later["measured"] == {
        "allocation": {"as_of": int(ran.timestamp()), "stale": True},  # the job stopped too
        "utilization": never,
    }


def _heatmap(serial: int, unit: str, top: float, bottom: float, *cells: tuple) -> dict:
    """A figure's heatmap; cells (node, GPU, value), n1's GPU 0 the one held."""
    return {
        "serial": serial,
        "unit": unit,
        "yaxis_max": top,
        "yaxis_min": bottom,
        "Data": [
            {"node_name": n, "gpu_id": g, "value": pytest.approx(v), "held": (n, g) == ("n1", 0)}
            for n, g, v in cells
        ],
    }


def test_the_heatmap_of_the_top_nodes(db: peewee.Database, client: TestClient) -> None:
    at_wall_time(client, _now_minutes(db))
    # Node means: utilization n1 80, n3 60, n2 50; power n2 700, n1 400 (n3 unknown);
    # temperature n2 90 (its core, no junction), n1 70, n3 65.
    assert data(client.get("/v1/clusters/gpuHeatmap", params={"k": 2})) == {
        "power": _heatmap(2, "W", 850, 0, ("n2", 0, 700), ("n1", 0, 500), ("n1", 1, 300)),
        "temperature": _heatmap(3, "℃", 110, 20, ("n2", 0, 90), ("n1", 0, 80), ("n1", 1, 60)),
        "utilization": _heatmap(1, "%", 100, 0, ("n1", 0, 90), ("n1", 1, 70), ("n3", 0, 60)),
        "measured": {"as_of": int((NOW - 2 * MINUTE).timestamp()), "stale": False},
    }
    every = data(client.get("/v1/clusters/gpuHeatmap"))  # k = 5: all three nodes
    assert isinstance(every, dict)
    assert [c["node_name"] for c in every["utilization"]["Data"]] == ["n1", "n1", "n3", "n2"]
    assert [c["node_name"] for c in every["power"]["Data"]] == ["n2", "n1", "n1"]
    for k in (0, 10_001, "x"):  # every node of a large cluster at most (the dashboard's)
        message = error(client.get("/v1/clusters/gpuHeatmap", params={"k": k}), 400)
        assert message.startswith("k:")


def test_the_heatmap_without_a_recent_minute(client: TestClient) -> None:
    empty = data(client.get("/v1/clusters/gpuHeatmap"))
    assert empty == {
        "power": _heatmap(2, "W", 850, 0),
        "temperature": _heatmap(3, "℃", 110, 20),
        "utilization": _heatmap(1, "%", 100, 0),
        "measured": {"as_of": None, "stale": True},
    }


def _workload_rows(db: peewee.Database) -> None:
    """w1 runs p1 on gpu-a and p2 on gpu-b; w2 runs p3 on gpu-a's other GPU."""
    write_workload(db, "w1", ["p1", "p2"])
    write_workload(db, "w1-replicas", ["p1"], parent_uid="w1")
    write_workload(db, "w2", ["p3"])
    write_gpus(db, "gpu-a", (gpu(0), gpu(1)))  # 192 GiB each
    write_minutes(
        db,
        "gpu-a",
        [
            gpu_minute(S, 0, held=[("p1", 60)], utilization_mean_ratio=0.5,
                       vram_used_mean_bytes=96.0 * GIB, power_mean_watts=400.0),
            gpu_minute(S + 60, 0, held=[("p1", 30)], utilization_mean_ratio=0.8,
                       vram_used_mean_bytes=48.0 * GIB, power_mean_watts=600.0),
            gpu_minute(S, 1, held=[("p3", 60)], utilization_mean_ratio=0.1,
                       power_mean_watts=100.0),
        ],
    )  # fmt: skip
    write_minutes(
        db,
        "gpu-b",
        [gpu_minute(S, 0, held=[("p2", 60)], utilization_mean_ratio=0.2, power_mean_watts=200.0)],
    )
    write_training(
        db,
        "w1",
        [
            (S + 10.5, 1, {"tflops": 100.5}),
            (S + 59.999999, 2, {"tflops": 120}),
            (S + 70, 3, {"loss": 1.0}),
            (S + 100, 4, {"tflops": "abc"}),
            (S + 200, 5, {"tflops": 99.0}),  # after the range
        ],
    )


def test_a_workloads_metrics_per_node(db: peewee.Database, client: TestClient) -> None:
    _workload_rows(db)
    window = {"start": S, "end": S + 120, "step": 120}
    metrics = data(client.get("/v1/workloads/w1/metrics", params=window))
    node_a, node_b = {"primus_lens_node_name": "gpu-a"}, {"primus_lens_node_name": "gpu-b"}
    # gpu-a: p1's minutes weigh 60 and 30 s held: (50 x 60 + 80 x 30) / 90; VRAM 50 % and
    # 25 % of 192 GiB; power 400 and 600 W. p3's GPU is w2's. gpu-b: p2's; its VRAM unknown.
    assert metrics == {
        "GPU Utilization": _graph(1, "%", [_line(node_a, (S, 60.0)), _line(node_b, (S, 20.0))]),
        "GPU Memory Utilization": _graph(2, "%", [_line(node_a, (S, 3750 / 90))]),
        "GPU Power": _graph(3, "W", [_line(node_a, (S, 42000 / 90)), _line(node_b, (S, 200.0))]),
        "TrainingPerformance": _graph(
            4,
            " ",
            [
                # The last row of the one bucket: iteration 4, whose tflops is no number.
                _line({"primus_lens_node_name": "iteration"}, (S + 100, 4)),
            ],
        ),
    }
    per_minute = data(client.get("/v1/workloads/w1/metrics", params={**window, "step": 60}))
    assert isinstance(per_minute, dict)
    assert per_minute["GPU Utilization"]["series"][0] == _line(node_a, (S, 50.0), (S + 60, 80.0))
    assert per_minute["TrainingPerformance"]["series"] == [
        _line({"primus_lens_node_name": "tflops"}, (S + 59, 120.0)),
        _line({"primus_lens_node_name": "iteration"}, (S + 59, 2), (S + 100, 4)),
    ]
    # A workload below the top one has the pods beneath it only.
    child = data(client.get("/v1/workloads/w1-replicas/metrics", params=window))
    assert isinstance(child, dict)
    assert child["GPU Utilization"]["series"] == [_line(node_a, (S, 60.0))]
    assert child["TrainingPerformance"]["series"] == []


def test_a_workloads_metrics_are_the_bytes_their_model_dumps(
    db: peewee.Database, client: TestClient
) -> None:
    """The answer is written without its models (a day is thousands of points): the same bytes
    FastAPI would send from them, iterations as floats too."""
    _workload_rows(db)
    window = {"start": S, "end": S + 120, "step": 60}
    response = client.get("/v1/workloads/w1/metrics", params=window)
    assert response.headers["content-type"] == "application/json"
    model = base.Envelope[payloads.WorkloadMetrics].model_validate_json(response.content)
    assert response.content == model.model_dump_json(by_alias=True).encode()
    assert b'"value":2.0' in response.content, "iteration 2 as the model's float"


def test_a_workload_unknown_or_without_minutes(db: peewee.Database, client: TestClient) -> None:
    write_workload(db, "idle", ["p9"])
    window = {"start": S, "end": S + 120}
    assert data(client.get("/v1/workloads/idle/metrics", params=window)) == {
        "GPU Utilization": _graph(1, "%", []),
        "GPU Memory Utilization": _graph(2, "%", []),
        "GPU Power": _graph(3, "W", []),
        "TrainingPerformance": _graph(4, " ", []),
    }
    message = error(client.get("/v1/workloads/nope/metrics", params=window), 404)
    assert message == "workload nope not found"
    other = {**window, "cluster": "c2"}
    assert error(client.get("/v1/workloads/idle/metrics", params=other), 404)
