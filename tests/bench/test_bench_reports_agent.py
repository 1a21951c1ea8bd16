from __future__ import annotations

import pytest

from tests.bench.benchrun import bench_figures


@pytest.mark.slow_timeout
def test_the_reports_agent_benchmark_prints_its_figures_and_ratio() -> None:
    figures = bench_figures("reports_agent", "--cycles", "130", "--seconds", "4", timeout=180)
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
