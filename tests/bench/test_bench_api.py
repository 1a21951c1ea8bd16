from __future__ import annotations

import pytest

from bench import bench_api
from tests.bench.benchrun import bench_figures


@pytest.mark.slow_timeout
def test_the_api_benchmark_asks_every_route_and_the_originals_overview() -> None:
    arguments = ["--preset", "small", "--requests", "2"]
    arguments += ["--seconds", "0.5", "--warmup", "0.2", "--clients", "2"]
    figures = bench_figures("api", *arguments, timeout=120)
    assert figures["benchmark"] == "api" and figures["nodes"] == 2
    lens = figures["lens"]
    assert len(lens) >= 20 and figures["budgets"]["all_ok_statuses"] is True
    for route in lens.values():
        assert 0 < route["p50_ms"] <= route["p95_ms"] <= route["max_ms"] and route["bytes"] > 0
    # A day of every GPU's minutes: the last 30 copied 47 times back (16 GPUs on 2 nodes).
    day = figures["a_day"]
    assert day["gpu_minutes"] == 16 * 30 * 47 and day["training_performance"] == 86_400 // 10
    assert day["gpu_minute_holders"] > 0 and day["gpu_minute_holders"] % (30 * 47) == 0
    assert 0 < day["gpu_minute_pods"] <= day["gpu_minute_holders"]
    # The workload's day read as before gpu_minute_pods, on the same data: the same answer.
    holder_rows = figures["workload_metrics_day_from_holder_rows"]
    assert holder_rows["numbers_compared"] > 1000
    assert holder_rows["largest_relative_difference"] < 1e-9
    assert holder_rows["lens"]["status"] == 200 and holder_rows["alone"]["requests"] > 0
    # The day's answer holds the workload's day: a point per 240 s bucket of the day, about.
    assert lens["workload metrics day"]["bytes"] > lens["workload metrics"]["bytes"]
    for name in bench_api.LISTED:
        for kind, clients in (("alone", 1), ("loaded", 2)):
            load = figures["load"][name][kind]
            assert load["clients"] == clients and load["requests"] > 0, (name, kind)
            assert 0 < load["p50_ms"] <= load["p95_ms"] <= load["p99_ms"] <= load["max_ms"]
            assert list(load["statuses"]) == ["200"]
    issue = figures["budgets"]["issue"]
    assert (
        issue["overview_requests_per_second"]
        == (figures["load"]["clusters overview"]["loaded"]["requests_per_second"])
    )
    assert issue["worst_listed_p95_ms"] >= issue["overview_p95_ms"] > 0
    # The original's overview: three node LISTs, a GET of each node three times, its kubelet twice.
    assert figures["original_overview"]["requests"] == 3 + 3 * 2 + 2 * 2
    assert figures["budgets"]["overview_ratio"] > 0
