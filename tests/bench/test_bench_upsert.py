from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.bench.benchrun import bench_figures

REPO = Path(__file__).resolve().parents[2]


def test_the_upsert_benchmark_prints_one_json_object_with_its_ratio() -> None:
    arguments = ["--rows", "30", "--engines", "sqlite,postgresql", "--repeat", "1"]
    figures = bench_figures("upsert", *arguments, timeout=60)
    assert figures["benchmark"] == "upsert"
    assert figures["machine"]["cpus"] >= 1
    for engine in ("sqlite", "postgresql"):
        entry = figures[engine]
        assert entry["batched_upsert_rows_per_s"] > 0
        assert entry["select_then_insert_or_save_rows_per_s"] > 0
        rates = entry["batched_upsert_rows_per_s"] / entry["select_then_insert_or_save_rows_per_s"]
        assert entry["ratio"] == pytest.approx(rates, abs=0.1)


def test_an_unknown_benchmark_is_refused() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "bench", "nope"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
    )
    assert result.returncode == 2
    assert "invalid choice" in result.stderr
