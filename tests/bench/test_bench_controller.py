from __future__ import annotations

import pytest

from tests.bench.benchrun import bench_figures

pytestmark = pytest.mark.slow_timeout


def test_the_controller_benchmark_prints_rates_latency_memory_and_releases() -> None:
    arguments = [
        *("--pods", "300", "--churn", "300", "--baseline-churn", "30"),
        *("--latency-seconds", "0.5", "--jobs", "3"),
    ]
    figures = bench_figures("controller", *arguments, timeout=300)
    lens = figures["lens"]
    assert lens["pods"] == 300 and lens["sustained"]["committed"] >= 300
    assert lens["sustained"]["events_per_second"] > 0
    assert lens["latency_at_100_per_second"]["changes"] == 50
    assert lens["finalizer_release"]["jobs"] == 3
    rss = lens["rss_mib"]
    assert 0 < rss["after_listing"] <= rss["peak"] and rss["at_end"] <= rss["peak"]
    assert figures["original_way"]["changes"] == 30
    assert figures["ratio_events_per_second"] > 0
