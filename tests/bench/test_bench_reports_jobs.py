from __future__ import annotations

import pytest

from tests.bench.benchrun import bench_figures


@pytest.mark.slow_timeout
def test_the_reports_jobs_benchmark_prints_both_ways_rows_and_ratio() -> None:
    figures = bench_figures("reports_jobs", "--nodes", "20", "--repeat", "2", timeout=120)
    assert figures["benchmark"] == "reports_jobs" and figures["database"] == "postgresql"
    assert (figures["gpu_minutes"], figures["port_minutes"]) == (160, 160)
    lens, baseline = figures["lens"], figures["baseline_pull_and_save_row_by_row"]
    for way in (lens, baseline):
        # The benchmark itself refuses a run whose database holds other rows than were sent.
        assert way["rows"] == {
            "gpu_minutes": 160,
            "gpu_minute_holders": 160,
            "rdma_port_minutes": 160,
        }
        assert way["seconds"] > 0 and way["rows_per_s"] > 0 and way["minutes_per_s"] > 0
        assert set(way["cpu_seconds"]) == {"ingest_process", "postgresql", "nodes_side"}
        runs = way["runs_seconds"]
        assert len(runs) == 2 and runs == sorted(runs) and way["min_seconds"] == runs[0]
        assert way["seconds"] in runs
    assert figures["ratio"] == round(baseline["seconds"] / lens["seconds"], 1)
    assert figures["budget_ok"] == (lens["seconds"] <= figures["budget_seconds"])
