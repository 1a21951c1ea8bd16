from __future__ import annotations

import pytest

from tests.bench.benchrun import bench_figures


@pytest.mark.slow_timeout
def test_the_demo_benchmark_times_the_start_to_first_data() -> None:
    arguments = ["--presets", "small", "--runs", "1"]
    arguments += ["--steady", "2", "--speed", "60"]  # utilization in seconds, not minutes
    figures = bench_figures("demo", *arguments, timeout=400)
    assert figures["benchmark"] == "demo" and figures["cli_start_s"] > 0
    assert figures["speed"] == 60
    small = figures["presets"]["small"]
    (only,) = small["runs"]
    assert 0 < only["up_s"] <= only["first_data_s"] <= only["first_utilization_s"]
    assert only["steady_cpu_percent"] > 0 and only["peak_rss_mib"] > 0 and only["stop_s"] > 0
    assert small["first_data_p50_s"] == only["first_data_s"]
    assert isinstance(figures["budgets"]["first_data_ok"], bool)
