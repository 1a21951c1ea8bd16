from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow_timeout
def test_the_dashboard_benchmark_times_each_page_and_its_bytes() -> None:
    command = [sys.executable, "-m", "bench", "dashboard", "--preset", "small", "--loads", "1"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=REPO)
    assert result.returncode == 0, result.stderr
    figures = json.loads(result.stdout)
    assert figures["benchmark"] == "dashboard" and figures["gpus"] == 16
    pages = figures["pages"]
    assert set(pages) == {"overview", "heatmap"}
    assert pages["heatmap"]["heatmap_cells"] == 16
    for page in pages.values():
        assert 0 < page["drawn_p50_ms"] <= page["drawn_max_ms"]
        assert page["first_load_bytes"] > 10_000  # the page, its scripts and its answers
        assert page["data_fetched_p50_ms"] > 0 and page["drawn_to_fetched_ratio"] > 0
    assert isinstance(figures["budgets"]["drawn_ok"], bool)
