from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow_timeout
def test_the_demo_benchmark_times_the_start_to_first_data() -> None:
    command = [sys.executable, "-m", "bench", "demo", "--presets", "small", "--runs", "1"]
    command += ["--steady", "2", "--speed", "60"]  # utilization in seconds, not minutes
    result = subprocess.run(command, capture_output=True, text=True, timeout=400, cwd=REPO)
    assert result.returncode == 0, result.stderr
    figures = json.loads(result.stdout)
    assert figures["benchmark"] == "demo" and figures["cli_start_s"] > 0
    assert figures["speed"] == 60
    small = figures["presets"]["small"]
    (only,) = small["runs"]
    assert 0 < only["up_s"] <= only["first_data_s"] <= only["first_utilization_s"]
    assert only["steady_cpu_percent"] > 0 and only["peak_rss_mib"] > 0 and only["stop_s"] > 0
    assert small["first_data_p50_s"] == only["first_data_s"]
    assert isinstance(figures["budgets"]["first_data_ok"], bool)
