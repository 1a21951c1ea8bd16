"""The controller's metrics: changes written, their lag, write failures, finalizers."""

from __future__ import annotations

from lens.runtime.selfmetrics import SelfMetrics

LAG_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0)
BATCH_BUCKETS = (1, 5, 10, 50, 100, 500, 1000, 2000, 5000, 10000)
LEADER_GAUGE = ("lens_controller_leader", "1 while this replica leads (writes), else 0.")


class SyncMetrics:
    """Every series carries the cluster it is about."""

    def __init__(self, metrics: SelfMetrics) -> None:
        self.changes = metrics.counter(
            "lens_controller_changes_total",
            "Watched changes written to the store, by cluster and kind (pod or workload).",
            ("cluster", "kind"),
        )
        self.lag = metrics.histogram(
            "lens_controller_change_lag_seconds",
            "Seconds from a change arriving on a watch to its commit in the database.",
            ("cluster",),
            buckets=LAG_BUCKETS,
        )
        self.batch = metrics.histogram(
            "lens_controller_batch_changes",
            "Changes committed together, by cluster.",
            ("cluster",),
            buckets=BATCH_BUCKETS,
        )
        self.write_errors = metrics.counter(
            "lens_controller_write_errors_total",
            "Batches whose commit failed and was retried (database unreachable), by cluster.",
            ("cluster",),
        )
        self.pending = metrics.gauge(
            "lens_controller_pending_changes",
            "Changes received but not yet committed, by cluster.",
            ("cluster",),
        )
        self.tracked = metrics.gauge(
            "lens_controller_tracked_workloads",
            "Workloads with GPU pods that the controller keeps current, by cluster.",
            ("cluster",),
        )
        self.finalizers_released = metrics.counter(
            "lens_controller_finalizers_released_total",
            "Finalizers removed after the workload's final state was committed, by cluster.",
            ("cluster",),
        )
        self.finalizers_forced = metrics.counter(
            "lens_controller_finalizers_forced_total",
            "Finalizers removed after the grace period without the final state committed (the "
            "database was unreachable): workload history lost, by cluster.",
            ("cluster",),
        )
