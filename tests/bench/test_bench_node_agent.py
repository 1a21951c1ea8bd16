from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow_timeout
def test_the_node_agent_benchmark_prints_its_figures_and_ratio() -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench",
            "node_agent",
            "--cycles",
            "5",
            "--original-cycles",
            "1",
            "--seconds",
            "3",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert result.returncode == 0, result.stderr
    figures = json.loads(result.stdout)
    assert figures["benchmark"] == "node_agent"
    lens, original = figures["lens_cycle"], figures["original_cycle_spawning_tools"]
    assert lens["cpu_ms"] > 0 and lens["metrics_samples"] > 600
    assert figures["cpu_per_cycle_ratio"] == round(original["cpu_ms"] / lens["cpu_ms"], 1)
    process = figures["agent_process"]
    assert process["scrapes"] >= 3 and process["peak_rss_mib"] > 0
    assert process["metrics_p50_ms"] <= process["metrics_p99_ms"] <= process["metrics_max_ms"]
    assert set(figures["budgets"]) == {"cpu_share_ok", "peak_rss_ok", "metrics_p99_ok"}
