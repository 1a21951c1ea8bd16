from __future__ import annotations

from pathlib import Path

from tests.bench.benchrun import bench_figures

REPO = Path(__file__).resolve().parents[2]


def test_the_cli_benchmark_times_help_against_the_floor_and_a_reference() -> None:
    figures = bench_figures("cli", "--runs", "2", "--reference", str(REPO), timeout=60)
    assert figures["benchmark"] == "cli" and figures["runs"] == 2
    assert figures["lens_help_ms"] > figures["floor_ms"] > 0
    assert figures["over_floor_ratio"] > 1
    assert figures["reference_help_ms"] > 0 and figures["vs_reference_ratio"] > 0
