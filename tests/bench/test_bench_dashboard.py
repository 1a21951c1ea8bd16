from __future__ import annotations

import pytest

from tests.bench.benchrun import bench_figures


@pytest.mark.slow_timeout
def test_the_dashboard_benchmark_times_each_page_and_its_bytes() -> None:
    figures = bench_figures("dashboard", "--preset", "small", "--loads", "1", timeout=120)
    assert figures["benchmark"] == "dashboard" and figures["gpus"] == 16
    pages = figures["pages"]
    assert set(pages) == {"overview", "heatmap"}
    assert pages["heatmap"]["heatmap_cells"] == 16
    for page in pages.values():
        assert 0 < page["drawn_p50_ms"] <= page["drawn_max_ms"]
        assert page["first_load_bytes"] > 10_000  # the page, its scripts and its answers
        assert page["data_fetched_p50_ms"] > 0 and page["drawn_to_fetched_ratio"] > 0
    assert isinstance(figures["budgets"]["drawn_ok"], bool)
