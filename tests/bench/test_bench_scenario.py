from __future__ import annotations

from tests.bench.benchrun import bench_figures


def test_the_scenario_benchmark_prints_its_figures_and_ratio() -> None:
    figures = bench_figures("scenario", "--presets", "small", "--baseline", "small", timeout=120)
    assert figures["small"]["objects_written"] > 50
    assert figures["small"]["replay_events"] > 0
    baseline = figures["baseline"]
    assert (
        baseline["preset"] == "small"
        and baseline["http_client_seconds"] > 0
        and baseline["ratio"] > 0
    )
    assert figures["peak_rss_mib"] > 0
