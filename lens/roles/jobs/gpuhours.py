"""`lens jobs`' GPU-hours per day: the leader sums today's and yesterday's GPU-hours per
namespace, top-level workload and team (lens/usage/gpuhours.py) into gpu_hours_daily, each day
brought up to date (only the rows that changed are written), so hours rolled up late are counted
at the next run."""

from __future__ import annotations

import datetime
import logging
from collections.abc import Callable

import peewee

from lens.roles.jobs.leading import add_leader_loop
from lens.runtime.clock import Clock
from lens.runtime.config import Config
from lens.runtime.process import Process
from lens.store import database
from lens.usage import gpuhours

log = logging.getLogger(__name__)


class DailyGpuHours:
    """The loop's body."""

    def __init__(self, config: Config, *, db: peewee.Database, clock: Clock) -> None:
        self._cluster = config.cluster.name
        self._label = config.jobs.team_label
        self._db = db
        self._clock = clock

    def run(self) -> None:
        today = datetime.datetime.fromtimestamp(self._clock.time(), datetime.UTC).date()
        written = {}
        with database.session(self._db):
            models = gpuhours.gpu_models(self._cluster)
            for day in (today - datetime.timedelta(days=1), today):
                groups = gpuhours.day_hours(
                    self._cluster, day, label_key=self._label, gpu_models=models
                )
                written[day.isoformat()] = gpuhours.save_day(self._cluster, day, groups)
        log.debug("daily GPU-hours summed", extra={"rows": written})


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
