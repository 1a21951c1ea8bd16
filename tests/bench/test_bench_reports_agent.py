from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow_timeout
def test_the_reports_agent_benchmark_prints_its_figures_and_ratio() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "bench", "reports_agent", "--cycles", "130", "--seconds", "4"],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=REPO,
    )
    assert result.returncode == 0, result.stderr
    figures = json.loads(result.stdout)
    in_process = figures["in_process"]
    # 130 cycles at 1 s cross two minute boundaries: 8 GPU- and 8 port-minutes at each.
    assert in_process["minutes_reported"] == 32
    assert in_process["reports_cpu_ms"] > 0 and in_process["cycle_cpu_ms"] > 0
    assert figures["reports_to_cycle_ratio"] == round(
        in_process["reports_cpu_ms"] / in_process["cycle_cpu_ms"], 4
    )
    shares = figures["agent_process_cpu_share_percent"]
    # Read in 10 ms clock ticks: a few seconds of an agent at under 1 % of a core is a handful
    # of ticks each, so one run alone may read none; the two together never do.
    assert shares["reports_off"] >= 0 and shares["reports_on"] >= 0
    assert shares["reports_off"] + shares["reports_on"] > 0
