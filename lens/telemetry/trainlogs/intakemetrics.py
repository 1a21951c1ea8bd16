"""The training-log intake's instruments: the original's three families (REFERENCE.md 3.3) and
Lens's own. `log_consume_latency_seconds` is a summary with the original's quantiles over the
last 10 minutes (client_golang's default window) and `log_consume_latency_histogram_seconds` the
histogram with its buckets. Counters end in `_total` (Prometheus naming, which prometheus_client
applies to every counter's sample): `log_analysis_consume_count_total`. The original's test
series `gpu_utilization` (#29) is not made."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from lens.runtime.selfmetrics import SelfMetrics

LATENCY_BUCKETS = (0.1, 0.5, 1.0, 2.0, 3.0, 5.0, 8.0, 10.0, 15.0, 30.0, 60.0, 120.0, 300.0)
LAG_BUCKETS = (0.05, 0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 5.0, 10.0, 30.0, 60.0)


class IntakeMetrics:
    def __init__(self, metrics: SelfMetrics) -> None:
        self._originals(metrics)
        self._records(metrics)
        self._writes(metrics)

    def _originals(self, metrics: SelfMetrics) -> None:
        self.latency = metrics.summary(
            "log_consume_latency_seconds",
            "Seconds from a log record's time to its processing, by the node that logged it: "
            "quantiles of the last 10 minutes.",
            ("node",),
        )
        self.latency_histogram = metrics.histogram(
            "log_consume_latency_histogram_seconds",
            "Seconds from a log record's time to its processing, by the node that logged it.",
            ("node",),
            buckets=LATENCY_BUCKETS,
        )
        self.consumed = metrics.counter(
            "log_analysis_consume_count_total",
            "Training log lines recognised, by type (StartTrain banners, Performance iterations).",
            ("type",),
        )

    def _records(self, metrics: SelfMetrics) -> None:
        self.received = metrics.counter(
            "lens_trainlogs_received_records_total", "Log records accepted into the queue."
        )
        self.skipped = metrics.counter(
            "lens_trainlogs_skipped_records_total",
            "Log records of accepted bodies skipped, by reason (no_line, no_kubernetes, "
            "no_pod_uid, line_too_long).",
            ("reason",),
        )
        self.refused = metrics.counter(
            "lens_trainlogs_refused_records_total",
            "Log records refused because the queue was full (the sender retries).",
        )
        self.dropped = metrics.counter(
            "lens_trainlogs_dropped_lines_total",
            "Iteration and banner lines given up, by reason (unknown_workload, waiting_full, "
            "stopped).",
            ("reason",),
        )

    def _writes(self, metrics: SelfMetrics) -> None:
        self.rows = metrics.counter(
            "lens_trainlogs_rows_written_total",
            "training_performance rows written new or with new figures.",
        )
        self.runs = metrics.counter(
            "lens_trainlogs_runs_started_total", "Training runs begun (StartTrain events written)."
        )
        self.write_failures = metrics.counter(
            "lens_trainlogs_write_failures_total", "Batches whose write failed and was retried."
        )
        self.observer_errors = metrics.counter(
            "lens_trainlogs_observer_errors_total", "Observers of stored iterations that raised."
        )
        self.queued = metrics.gauge(
            "lens_trainlogs_queued_records", "Log records waiting in the queue to be processed."
        )
        self.waiting = metrics.gauge(
            "lens_trainlogs_waiting_lines",
            "Iteration and banner lines waiting for their pod's workloads to be stored.",
        )
        self.lag = metrics.histogram(
            "lens_trainlogs_store_lag_seconds",
            "Seconds from receiving an iteration or banner line to committing it.",
            buckets=LAG_BUCKETS,
        )

    def observe_latency(self, by_node: Mapping[str, Iterable[float]]) -> None:
        for node, latencies in by_node.items():
            window = self.latency.labels(node or "unknown")
            child = self.latency_histogram.labels(node or "unknown")
            for latency in latencies:
                window.observe(max(latency, 0.0))
                child.observe(max(latency, 0.0))

    def count_skipped(self, reasons: Mapping[str, int]) -> None:
        for reason, count in reasons.items():
            self.skipped.labels(reason).inc(count)

    def count_dropped(self, reasons: Mapping[str, int]) -> None:
        for reason, count in reasons.items():
            if count:
                self.dropped.labels(reason).inc(count)
