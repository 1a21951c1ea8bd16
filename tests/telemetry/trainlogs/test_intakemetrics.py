"""The intake's families: the original's three under their names (the latency summary with its
quantiles, the histogram with its buckets), Lens's own, never the test series gpu_utilization
(#29)."""

from __future__ import annotations

from prometheus_client import generate_latest

from lens.runtime.selfmetrics import SelfMetrics
from lens.telemetry.trainlogs.intakemetrics import IntakeMetrics


def test_the_originals_families_and_lenss_own() -> None:
    metrics = SelfMetrics(process=False)
    IntakeMetrics(metrics)
    declared = {family.name: family.type for family in metrics.declared}
    assert declared["log_consume_latency_seconds"] == "summary"
    assert declared["log_consume_latency_histogram_seconds"] == "histogram"
    assert declared["log_analysis_consume_count_total"] == "counter"
    assert "gpu_utilization" not in declared
    assert all(name.startswith(("log_", "lens_trainlogs_")) for name in declared)


def test_latency_by_node_in_the_originals_buckets() -> None:
    metrics = SelfMetrics(process=False)
    instruments = IntakeMetrics(metrics)
    instruments.observe_latency({"gpu-node-07": [0.3, 4.0, -1.0], "": [700.0]})

    def bucket(node: str, le: str) -> float | None:
        return metrics.registry.get_sample_value(
            "log_consume_latency_histogram_seconds_bucket", {"node": node, "le": le}
        )

    assert bucket("gpu-node-07", "0.1") == 1  # a record stamped after now counts as 0
    assert bucket("gpu-node-07", "0.5") == 2
    assert bucket("gpu-node-07", "5.0") == 3
    assert bucket("unknown", "300.0") == 0 and bucket("unknown", "+Inf") == 1
    text = generate_latest(metrics.registry).decode()
    buckets = [
        line.split('le="')[1].split('"')[0]
        for line in text.splitlines()
        if line.startswith("log_consume_latency_histogram_seconds_bucket")
        and 'node="unknown"' in line
    ]
    assert buckets == [
        "0.1", "0.5", "1.0", "2.0", "3.0", "5.0", "8.0", "10.0", "15.0", "30.0", "60.0",
        "120.0", "300.0", "+Inf",
    ]  # fmt: skip
    quantile = metrics.registry.get_sample_value
    assert (
        quantile("log_consume_latency_seconds", {"node": "gpu-node-07", "quantile": "0.5"}) == 0.3
    )
    assert quantile("log_consume_latency_seconds", {"node": "gpu-node-07", "quantile": "0.99"}) == 4
    assert quantile("log_consume_latency_seconds_count", {"node": "gpu-node-07"}) == 3


def test_skips_and_drops_by_reason() -> None:
    metrics = SelfMetrics(process=False)
    instruments = IntakeMetrics(metrics)
    instruments.count_skipped({"no_pod_uid": 2})
    instruments.count_dropped({"unknown_workload": 3, "stopped": 0})
    value = metrics.registry.get_sample_value
    assert value("lens_trainlogs_skipped_records_total", {"reason": "no_pod_uid"}) == 2
    assert value("lens_trainlogs_dropped_lines_total", {"reason": "unknown_workload"}) == 3
    assert value("lens_trainlogs_dropped_lines_total", {"reason": "stopped"}) is None
