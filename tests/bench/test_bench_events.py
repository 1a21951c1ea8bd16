from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow_timeout


def test_the_events_benchmark_prints_rates_ratios_and_latency() -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench",
            "events",
            "--events",
            "400",
            "--baseline-events",
            "20",
            "--latency-seconds",
            "0.5",
            "--runs",
            "2",
        ],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=REPO,
    )
    assert result.returncode == 0, result.stderr
    figures = json.loads(result.stdout)
    assert figures["benchmark"] == "events" and figures["database"] == "postgresql"
    for shape in ("full_node", "one_gpu"):
        entry = figures[shape]
        lens, baseline = entry["lens"], entry["one_event_per_message_select_then_insert"]
        assert (lens["events"], lens["event_rows"]) == (400, 400)
        assert (baseline["events"], baseline["event_rows"]) == (20, 20)
        assert entry["ratio"] == round(lens["events_per_s"] / baseline["events_per_s"], 1)
        assert set(lens["cpu_seconds_per_1000_events"]) == {"agent", "server", "postgresql"}
        runs = lens["runs_events_per_s"]
        assert len(runs) == 2 and runs == sorted(runs) and lens["events_per_s"] in runs
    latency = figures["latency"]
    assert latency["events"] == 50
    assert 0 < latency["p50_ms"] <= latency["p99_ms"] <= latency["max_ms"]
