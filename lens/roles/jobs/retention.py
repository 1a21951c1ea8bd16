"""`lens jobs`' retention of the tables that only grow — events, snapshots, the device
changelog, training performance — and of event stream positions of agent boots long gone.

The original kept all of them forever (REFERENCE.md 15.2). Each table's age is a `jobs`
setting (0: forever); rows go in bounded batches, each its own short transaction, at most
MAX_BATCHES per table and run, so a backlog is worked off over several runs without long locks.
The device report tables have their own upkeep (reporting.py).
"""

from __future__ import annotations

import dataclasses
import datetime
import logging
from collections.abc import Callable

from lens.roles.jobs.leading import add_leader_loop
from lens.runtime.clock import Clock
from lens.runtime.config import JobsConfig
from lens.runtime.process import Process
from lens.runtime.selfmetrics import SelfMetrics
from lens.store import models, retention

log = logging.getLogger(__name__)

BATCH_ROWS = 1000
MAX_BATCHES = 100


@dataclasses.dataclass(frozen=True, slots=True)
class Kept:
    """How long one table's rows are kept: from their creation, or from their last update."""

    model: type[models.LensModel]
    days: float  # 0: forever
    since_update: bool = False


def policies(jobs: JobsConfig) -> tuple[Kept, ...]:
    return (
        Kept(models.NodeContainerEvent, jobs.events_retention_days),
        Kept(models.GpuPodEvent, jobs.events_retention_days),
        Kept(models.WorkloadEvent, jobs.events_retention_days),
        Kept(models.PodSnapshot, jobs.snapshots_retention_days),
        Kept(models.GpuWorkloadSnapshot, jobs.snapshots_retention_days),
        Kept(models.NodeDeviceChangelog, jobs.changelog_retention_days),
        Kept(models.TrainingPerformance, jobs.training_retention_days),
        Kept(models.EventStream, jobs.event_streams_retention_days, since_update=True),
        Kept(models.GpuIdleInterval, jobs.idle_retention_days, since_update=True),
        Kept(models.GpuHoursDaily, jobs.gpu_hours_retention_days, since_update=True),
    )


class TableRetention:
    """The loop's body: every table trimmed to its age once."""

    def __init__(self, kept: tuple[Kept, ...], *, clock: Clock, metrics: SelfMetrics) -> None:
        self._kept = tuple(k for k in kept if k.days > 0)
        self._clock = clock
        self._deleted = metrics.counter(
            "lens_retention_deleted_rows_total",
            "Rows the jobs' retention deleted for their age, by table.",
            ("table",),
        )

    def run(self) -> None:
        now = datetime.datetime.fromtimestamp(self._clock.time(), datetime.UTC)
        deleted: dict[str, int] = {}
        behind: list[str] = []
        for kept in self._kept:
            delete = retention.delete_untouched if kept.since_update else retention.delete_expired
            result = delete(
                kept.model,
                before=now - datetime.timedelta(days=kept.days),
                batch_size=BATCH_ROWS,
                max_batches=MAX_BATCHES,
            )
            if result.deleted:
                deleted[result.table] = result.deleted
                self._deleted.labels(result.table).inc(result.deleted)
            if not result.complete:
                behind.append(result.table)
        if deleted:
            log.info("expired rows deleted", extra={"rows": deleted, "left_for_next_run": behind})


def add(jobs: JobsConfig, process: Process, *, leading: Callable[[], bool]) -> TableRetention:
    """The retention loop, run by the leader only."""
    body = TableRetention(policies(jobs), clock=process.clock, metrics=process.metrics)
    add_leader_loop(
        process,
        name="retention",
        interval_seconds=jobs.retention_interval_seconds,
        run=body.run,
        run_at_start=False,
        leading=leading,
    )
    return body
