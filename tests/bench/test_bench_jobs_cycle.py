from __future__ import annotations

import pytest

from tests.bench.benchrun import bench_figures


@pytest.mark.slow_timeout
def test_the_jobs_benchmark_prints_each_jobs_cycle_both_ways_and_the_budgets() -> None:
    figures = bench_figures("jobs_cycle", "--preset", "small", "--cycles", "2", timeout=120)
    assert figures["benchmark"] == "jobs_cycle" and figures["nodes"] == 2
    lens = figures["lens"]
    assert set(lens) == {
        "allocation",
        "node-info",
        "workload-status",
        "consumers",
        "gpu-hours",
        "idle-gpus",
    }
    for job in lens.values():
        assert job["requests_per_cycle"] == 0 and job["rows_written_unchanged"] == 0
        assert 0 < job["cpu_seconds_median"] <= job["cpu_seconds_max"]
    # The jobs the API shows figures of say when they measured them: one row a run (idle
    # GPUs' only when a new minute is due: in a cycle with none it reads nothing).
    measured = {name: job["freshness_rows_per_cycle"] for name, job in lens.items()}
    assert measured == {
        "allocation": 0,
        "node-info": 1,
        "workload-status": 0,
        "consumers": 0,
        "gpu-hours": 1,
        "idle-gpus": 0,
    }
    assert lens["node-info"]["first_cycle"]["rows"] == 2  # a row per GPU node, then none
    original = figures["original"]
    assert original["allocation"]["requests"] == 1 + 2  # the node list and a kubelet per node
    assert original["node-info"]["rows"] == 2
    assert figures["original_requests_per_cycle_of_all"] > 0
    assert figures["budgets"]["unchanged_rows_ok"] is True
