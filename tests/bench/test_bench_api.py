from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow_timeout
def test_the_api_benchmark_asks_every_route_and_the_originals_overview() -> None:
    command = [sys.executable, "-m", "bench", "api", "--preset", "small", "--requests", "2"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=REPO)
    assert result.returncode == 0, result.stderr
    figures = json.loads(result.stdout)
    assert figures["benchmark"] == "api" and figures["nodes"] == 2
    lens = figures["lens"]
    assert len(lens) >= 20 and figures["budgets"]["all_ok_statuses"] is True
    for route in lens.values():
        assert 0 < route["p50_ms"] <= route["p95_ms"] <= route["max_ms"] and route["bytes"] > 0
    # The original's overview: three node LISTs, a GET of each node three times, its kubelet twice.
    assert figures["original_overview"]["requests"] == 3 + 3 * 2 + 2 * 2
    assert figures["budgets"]["overview_ratio"] > 0
