from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_the_scenario_benchmark_prints_its_figures_and_ratio() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "bench", "scenario", "--presets", "small", "--baseline", "small"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert result.returncode == 0, result.stderr
    figures = json.loads(result.stdout)
    assert figures["small"]["objects_written"] > 50
    assert figures["small"]["replay_events"] > 0
    baseline = figures["baseline"]
    assert (
        baseline["preset"] == "small"
        and baseline["http_client_seconds"] > 0
        and baseline["ratio"] > 0
    )
    assert figures["peak_rss_mib"] > 0
