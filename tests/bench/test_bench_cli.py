from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_the_cli_benchmark_times_help_against_the_floor_and_a_reference() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "bench", "cli", "--runs", "2", "--reference", str(REPO)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
    )
    assert result.returncode == 0, result.stderr
    figures = json.loads(result.stdout)
    assert figures["benchmark"] == "cli" and figures["runs"] == 2
    assert figures["lens_help_ms"] > figures["floor_ms"] > 0
    assert figures["over_floor_ratio"] > 1
    assert figures["reference_help_ms"] > 0 and figures["vs_reference_ratio"] > 0
