from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow_timeout
def test_the_netflow_benchmark_prints_each_observers_cost_and_the_ratios() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "bench", "netflow", "--seconds", "0.5", "--repeat", "1",
         "--rate", "300", "--loop-rounds", "2", "--loop-connections", "300"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    figures = json.loads(result.stdout)
    assert figures["benchmark"] == "netflow"
    for kind in ("none", "lens", "per_segment"):
        for load in ("short_connections", "bulk"):
            entry = figures[kind][load]
            assert entry["throughput"] > 0
            assert entry["observer_total_percent_of_one_core"] >= 0
    assert figures["none"]["bulk"]["observer_total_percent_of_one_core"] == 0
    assert figures["lens"]["short_connections"]["observer_bpf_percent_of_one_core"] > 0
    assert set(figures["per_segment_over_lens_cpu"]) == {"short_connections", "bulk"}
    cost = figures["connection_cost"]
    assert (cost["rounds"], cost["connections_per_round"]) == (2, 300)
    # A loopback connection takes microseconds to milliseconds, and Lens adds a fraction.
    assert 1_000 < cost["none_ns_per_connection_median"] < 10_000_000
    assert abs(cost["lens_added_ns_per_connection_median"]) < cost["none_ns_per_connection_median"]
    assert len(cost["lens_added_ns_per_connection_quartiles"]) == 2
    assert Path("/proc/sys/kernel/bpf_stats_enabled").read_text().strip() == "0"  # put back
