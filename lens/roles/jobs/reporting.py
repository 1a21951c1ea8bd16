"""`lens jobs`' share of node device reports: the event server's extension that stores agents'
minutes and inventories, and the loops that keep their tables — day partitions made ahead
(PostgreSQL), hours rolled up as their minutes arrive, old minutes and hours deleted.
"""

from __future__ import annotations

import datetime
import logging
from collections.abc import Callable

import peewee

from lens.reports.storing import hours, partitions, retention
from lens.reports.storing.devices import DeviceStore
from lens.reports.storing.minutes import MinuteStore
from lens.reports.storing.recording import RecordingMetrics, ReportRecorder
from lens.roles.jobs.leading import add_leader_loop
from lens.runtime.config import Config
from lens.runtime.periodic import Loop
from lens.runtime.process import Process
from lens.store import freshness
from lens.store.queries import seriesnow

log = logging.getLogger(__name__)

PARTITIONS_INTERVAL_SECONDS = 3600.0


class ReportUpkeep:
    """The loops' bodies, each a short run over the store."""

    def __init__(self, config: Config, process: Process, db: peewee.Database) -> None:
        jobs = config.jobs
        self._db = db
        self._cluster = config.cluster.name
        self._clock = process.clock
        self._rollup_interval = jobs.reports_rollup_interval_seconds
        self.minutes_keep = datetime.timedelta(days=jobs.reports_minutes_retention_days)
        self.hours_keep = datetime.timedelta(days=jobs.reports_hours_retention_days)
        self.minutes = MinuteStore(
            db, cluster=self._cluster, clock=process.clock, keep=self.minutes_keep
        )

    def _now(self) -> datetime.datetime:
        return datetime.datetime.fromtimestamp(self._clock.time(), datetime.UTC)

    def make_partitions(self) -> None:
        partitions.ensure_ahead(self._db, today=self._now().date())

    def roll_up(self) -> None:
        now = self._now()
        newest = seriesnow.newest_minute(self._db, cluster=self._cluster, now=now)
        done = hours.roll_up(self._db, cluster=self._cluster, now=now, keep=self.minutes_keep)
        if not done.complete:
            log.info("hours left to roll up in the next run", extra={"rolled": done.node_hours})
        elif newest is not None:
            # Every minute stored when the run began is in its hour: the hours are as of the
            # end of the newest of them.
            freshness.record(
                self._db,
                cluster=self._cluster,
                figure=freshness.ROLLUP,
                as_of=newest + seriesnow.MINUTE,
                interval_seconds=self._rollup_interval,
                lag_seconds=seriesnow.MINUTE.total_seconds(),
            )

    def trim(self) -> None:
        now = self._now()
        trimmed = retention.trim(
            self._db, now=now, minutes_keep=self.minutes_keep, hours_keep=self.hours_keep
        )
        self.minutes.forget_days_before((now - self.minutes_keep).date())
        deleted = {t.table: t.deleted for t in trimmed if t.deleted or t.partitions_dropped}
        if deleted:
            log.info("expired device reports deleted", extra={"rows": deleted})


def add(
    config: Config, process: Process, db: peewee.Database, *, leading: Callable[[], bool]
) -> ReportRecorder:
    """The extension for the event server; its loops added to `process`, the rollup and
    retention run only while `leading` (partitions are made on every replica: its writers need
    them)."""
    upkeep = ReportUpkeep(config, process, db)
    process.add_loop(
        Loop(
            name="report-partitions",
            interval_seconds=PARTITIONS_INTERVAL_SECONDS,
            run=upkeep.make_partitions,
        )
    )
    add_leader_loop(
        process,
        name="report-rollup",
        interval_seconds=config.jobs.reports_rollup_interval_seconds,
        run=upkeep.roll_up,
        run_at_start=False,
        leading=leading,
    )
    add_leader_loop(
        process,
        name="report-retention",
        interval_seconds=config.jobs.reports_retention_interval_seconds,
        run=upkeep.trim,
        run_at_start=False,
        leading=leading,
    )
    return ReportRecorder(
        minutes=upkeep.minutes,
        devices=DeviceStore(cluster=config.cluster.name),
        metrics=RecordingMetrics(process.metrics),
    )
