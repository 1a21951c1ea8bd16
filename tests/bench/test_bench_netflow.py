from __future__ import annotations

from pathlib import Path

import pytest

from tests.bench.benchrun import bench_figures


@pytest.mark.slow_timeout
def test_the_netflow_benchmark_prints_each_observers_cost_and_the_ratios() -> None:
    arguments = ["--seconds", "0.5", "--repeat", "1", "--rate", "300"]
    arguments += ["--loop-rounds", "2", "--loop-connections", "300"]
    figures = bench_figures("netflow", *arguments, timeout=300)
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
    assert cost["lens_attachment"] == "raw_tracepoint"  # this kernel has BTF
    for prefix in ("lens", "ordinary_tracepoints"):
        median = cost[f"{prefix}_added_ns_per_connection_median"]
        assert abs(median) < cost["none_ns_per_connection_median"]
        assert len(cost[f"{prefix}_added_ns_per_connection_quartiles"]) == 2
    assert Path("/proc/sys/kernel/bpf_stats_enabled").read_text().strip() == "0"  # put back
