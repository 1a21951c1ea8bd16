"""`lens jobs`' GPU-hours per day: the leader sums today's GPU-hours per namespace, top-level
workload and team (lens/usage/gpuhours.py) into gpu_hours_daily every run, and yesterday's again
every YESTERDAY_INTERVAL, each day brought up to date (only the rows that changed are written),
so hours rolled up late are counted at the next run. Today's figures are as of the hourly
rollup's (store/freshness.py), which the API shows beside them."""

from __future__ import annotations

import datetime
import logging
from collections.abc import Callable

import peewee

from lens.roles.jobs.leading import add_leader_loop
from lens.runtime.clock import Clock
from lens.runtime.config import Config
from lens.runtime.process import Process
from lens.store import database, freshness
from lens.usage import gpuhours

log = logging.getLogger(__name__)

DAY = datetime.timedelta(days=1)
# Yesterday changes only by minutes resent late (an agent back after an outage): summed again
# this often, where today is summed every run.
YESTERDAY_INTERVAL = datetime.timedelta(minutes=10)


class DailyGpuHours:
    """The loop's body."""

    def __init__(self, config: Config, *, db: peewee.Database, clock: Clock) -> None:
        self._cluster = config.cluster.name
        self._label = config.jobs.team_label
        self._interval = config.jobs.gpu_hours_interval_seconds
        # How far behind the rollup is by design: its interval, and the minute it waits for.
        self._rollup_lag = config.jobs.reports_rollup_interval_seconds + 60.0
        self._db = db
        self._clock = clock
        self._yesterday_summed: datetime.datetime | None = None

    def run(self) -> None:
        now = datetime.datetime.fromtimestamp(self._clock.time(), datetime.UTC)
        today = now.date()
        days = [today]
        last = self._yesterday_summed
        if last is None or last.date() != today or now - last >= YESTERDAY_INTERVAL:
            days.insert(0, today - DAY)
        # Read first: what the rollup had rolled up before these sums began is in them.
        rolled = freshness.read(self._db, cluster=self._cluster, figures=[freshness.ROLLUP])
        written = {}
        with database.session(self._db):
            models = gpuhours.gpu_models(self._cluster)
            for day in days:
                groups = gpuhours.day_hours(
                    self._cluster, day, label_key=self._label, gpu_models=models
                )
                written[day.isoformat()] = gpuhours.save_day(self._cluster, day, groups)
        if len(days) == 2:
            self._yesterday_summed = now
        log.debug("daily GPU-hours summed", extra={"rows": written})
        # No rollup yet: no minute was stored, and the (empty) sums are as of now.
        through = rolled[freshness.ROLLUP].as_of if freshness.ROLLUP in rolled else now
        freshness.record(
            self._db,
            cluster=self._cluster,
            figure=freshness.GPU_HOURS,
            as_of=min(through, now),
            interval_seconds=self._interval,
            lag_seconds=self._rollup_lag,
        )


def add(
    config: Config, process: Process, db: peewee.Database, *, leading: Callable[[], bool]
) -> DailyGpuHours:
    """The GPU-hours loop, run by the leader only."""
    body = DailyGpuHours(config, db=db, clock=process.clock)
    add_leader_loop(
        process,
        name="gpu-hours",
        interval_seconds=config.jobs.gpu_hours_interval_seconds,
        run=body.run,
        leading=leading,
    )
    return body
