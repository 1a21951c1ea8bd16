"""`lens jobs`' daily report: at `jobs.daily_report_time` (the process's local time) the leader
writes the GPU-hours of the last UTC day that had ended by then — summed again first, so it is
final — as CSV under `jobs.daily_report_dir`, and says so in one log line with the day's totals.

The `schedule` package fires at the wall-clock time, behind the runtime's runner: a loop runs
its pending jobs every 30 s (on the leader only). A report already written is not written
again, and one missed — the process was down, or not the leader, at the time — is written at
the next run after it was due.
"""

from __future__ import annotations

import datetime
import logging
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

import peewee
import schedule

from lens.roles.jobs.leading import add_leader_loop
from lens.runtime.clock import Clock
from lens.runtime.config import Config
from lens.runtime.process import Process
from lens.store import database
from lens.usage import dailyreport, gpuhours

log = logging.getLogger(__name__)

PENDING_CHECK_SECONDS = 30.0


def report_directory(config: Config) -> Path:
    directory = Path(config.jobs.daily_report_dir)
    return directory if directory.is_absolute() else Path(config.service.data_dir) / directory


class DailyReport:
    """The loop's body; `zone` is the local time zone (default: the process's)."""

    def __init__(
        self,
        config: Config,
        *,
        db: peewee.Database,
        clock: Clock,
        zone: datetime.tzinfo | None = None,
    ) -> None:
        self._cluster = config.cluster.name
        self._label = config.jobs.team_label
        self._at = datetime.time.fromisoformat(config.jobs.daily_report_time)
        self._directory = report_directory(config)
        self._db = db
        self._clock = clock
        self._zone = zone
        self.scheduler = schedule.Scheduler()  # its own: no module-level scheduler
        self.scheduler.every().day.at(config.jobs.daily_report_time).do(self._fire)
        self._checked_missed = False

    def run(self) -> None:
        if not self._checked_missed:
            self.write_due()  # one due while this replica was down or following
            self._checked_missed = True
        self.scheduler.run_pending()

    def _fire(self) -> None:
        self.write_due()  # returns None: a job returning schedule.CancelJob would end

    def due_day(self) -> datetime.date:
        """The last UTC day that had ended at the latest report time passed."""
        now = datetime.datetime.fromtimestamp(self._clock.time(), self._zone or _local_zone())
        moment = datetime.datetime.combine(now.date(), self._at, tzinfo=now.tzinfo)
        if moment > now:
            moment -= datetime.timedelta(days=1)
        return moment.astimezone(datetime.UTC).date() - datetime.timedelta(days=1)

    def path_of(self, day: datetime.date) -> Path:
        return self._directory / f"gpu-hours-{self._cluster}-{day.isoformat()}.csv"

    def write_due(self) -> Path | None:
        """The due day's report, unless it is there already; its path when written."""
        day = self.due_day()
        path = self.path_of(day)
        if path.exists():
            return None
        with database.session(self._db):
            groups = gpuhours.day_hours(
                self._cluster,
                day,
                label_key=self._label,
                gpu_models=gpuhours.gpu_models(self._cluster),
            )
            gpuhours.save_day(self._cluster, day, groups)
            rows = dailyreport.report_rows(self._cluster, day)
        _write_atomically(path, dailyreport.render_csv(rows))
        sums = dailyreport.totals(rows)
        log.info(
            "daily GPU-hours report written",
            extra={
                "day": day.isoformat(),
                "path": str(path),
                "held_gpu_hours": round(sums.held_gpu_hours, 3),
                "used_gpu_hours": round(sums.used_gpu_hours, 3),
                "namespaces": sums.namespaces,
                "workloads": sums.workloads,
            },
        )
        return path


def _local_zone() -> datetime.tzinfo:
    zone = datetime.datetime.now().astimezone().tzinfo
    return zone if zone is not None else datetime.UTC


def _write_atomically(path: Path, text: str) -> None:
    """A reader never sees half a report: written beside it, then renamed over."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as out:
            out.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def add(
    config: Config, process: Process, db: peewee.Database, *, leading: Callable[[], bool]
) -> DailyReport | None:
    """The daily report loop on the leader; None when jobs.daily_report_time is empty."""
    if not config.jobs.daily_report_time:
        return None
    body = DailyReport(config, db=db, clock=process.clock)
    add_leader_loop(
        process,
        name="daily-report",
        interval_seconds=PENDING_CHECK_SECONDS,
        run=body.run,
        leading=leading,
    )
    return body
