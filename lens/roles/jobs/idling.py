"""`lens jobs`' idle GPUs: the leader reads the held GPU-minutes that arrived, follows each
pod's stretch under the floor (lens/usage/idle.py), stores the intervals (gpu_idle_intervals)
and shows the GPUs idle now as gauges.

Minutes are read LAG after their end, so that those of every agent have arrived; a minute
arriving later still is not looked at again. A run after a pause (this replica just became
leader, or runs were missed) starts afresh: it carries on the intervals stored as open and reads
one window back to find the stretches under way. A run reads at most CATCH_UP of minutes, so a
new leader's look back (30 minutes of every GPU by default) is worked off over a few runs, each
a bounded cost, instead of in one long one.
"""

from __future__ import annotations

import datetime
import logging
from collections import Counter
from collections.abc import Callable

import peewee

from lens.roles.jobs.leading import add_leader_loop
from lens.runtime.clock import Clock
from lens.runtime.config import Config
from lens.runtime.process import Process
from lens.runtime.selfmetrics import SelfMetrics
from lens.store import database, freshness
from lens.usage import idlestore, workloads
from lens.usage.idle import MINUTE, Holding, IdleInterval, IdleTracker

log = logging.getLogger(__name__)

LAG = 2 * MINUTE
CATCH_UP = 4 * MINUTE  # at most this much read per run: 8,000 GPUs' worth is about 0.5 s of CPU


class IdleGauges:
    def __init__(self, metrics: SelfMetrics) -> None:
        self.gpus = metrics.gauge(
            "lens_gpu_idle",
            "1 for each GPU idle now: held by a pod, under jobs.idle_utilization_floor for at "
            "least jobs.idle_window_minutes.",
            ("node", "gpu_uuid", "namespace", "pod"),
        )
        self.namespaces = metrics.gauge(
            "lens_namespace_idle_gpus",
            "GPUs idle now, by the namespace of the pod holding them.",
            ("namespace",),
        )

    def show(self, idle: list[IdleInterval]) -> None:
        self.gpus.clear()
        self.namespaces.clear()
        for interval in idle:
            h = interval.holding
            self.gpus.labels(h.node, h.gpu_uuid, h.namespace, h.pod_name).set(1)
        for namespace, count in Counter(i.holding.namespace for i in idle).items():
            self.namespaces.labels(namespace).set(count)


class IdleGpus:
    """The loop's body. Runs on the leader only, one run at a time."""

    def __init__(
        self, config: Config, *, db: peewee.Database, clock: Clock, gauges: IdleGauges
    ) -> None:
        self._cluster = config.cluster.name
        self._floor = config.jobs.idle_utilization_floor
        self._window = config.jobs.idle_window_minutes
        self._interval = config.jobs.idle_interval_seconds
        self._pause = datetime.timedelta(seconds=3 * self._interval) + LAG
        self._db = db
        self._clock = clock
        self._gauges = gauges
        self._tracker: IdleTracker | None = None
        self._through: datetime.datetime | None = None
        self._behind = False  # the last run stopped short of the minutes due: carry on from it

    @property
    def caught_up(self) -> bool:
        """The last run read every minute due (it was not cut at CATCH_UP)."""
        return not self._behind

    def run(self) -> None:
        now = datetime.datetime.fromtimestamp(self._clock.time(), datetime.UTC)
        due = idlestore.minute_floor(now) - LAG
        with database.session(self._db):
            tracker, since, skip = self._tracker_from(due)
            if since >= due:
                return
            until = min(due, since + CATCH_UP)
            minutes = [
                m
                for m in idlestore.held_minutes(self._cluster, since=since, until=until)
                if m.minute >= skip.get(m.holding, since)
            ]
            changed = tracker.feed(minutes, through=until)
            pods = {i.holding.pod_uid for i in changed}
            tops = workloads.top_workloads(self._cluster, pods) if pods else {}
            idlestore.save(self._cluster, changed, tops)
        self._tracker, self._through, self._behind = tracker, until, until < due
        # Idle now means: through `until`, read LAG after each minute ended.
        freshness.record(
            self._db,
            cluster=self._cluster,
            figure=freshness.IDLE,
            as_of=until,
            interval_seconds=self._interval,
            lag_seconds=(LAG + MINUTE).total_seconds(),
        )
        self._gauges.show(tracker.open_intervals())
        if changed:
            log.info(
                "idle GPU intervals written",
                extra={
                    "open": sum(i.open for i in changed),
                    "ended": sum(not i.open for i in changed),
                },
            )

    def _tracker_from(
        self, until: datetime.datetime
    ) -> tuple[IdleTracker, datetime.datetime, dict[Holding, datetime.datetime]]:
        """The tracker to feed, where to read from, and per holding carried on the first
        minute not yet counted."""
        if (
            self._tracker is not None
            and self._through is not None
            and (self._behind or until - self._through <= self._pause)
        ):
            return self._tracker, self._through, {}
        tracker = IdleTracker(floor=self._floor, window_minutes=self._window)
        resumed = idlestore.open_intervals(self._cluster)
        for interval in resumed:
            tracker.resume(interval)
        since = idlestore.lookback_start(until, self._window, resumed)
        # Minutes before the first one held are none to read (a cluster new to Lens): the run
        # starts there, and says it is current rather than catching up on nothing.
        first = idlestore.first_held_minute(self._cluster, since=since, until=until)
        since = until if first is None else max(since, first)
        return tracker, since, {i.holding: i.end for i in resumed}


def add(
    config: Config, process: Process, db: peewee.Database, *, leading: Callable[[], bool]
) -> IdleGpus:
    """The idle GPUs loop, run by the leader only."""
    body = IdleGpus(config, db=db, clock=process.clock, gauges=IdleGauges(process.metrics))
    add_leader_loop(
        process,
        name="idle-gpus",
        interval_seconds=config.jobs.idle_interval_seconds,
        run=body.run,
        run_at_start=False,
        leading=leading,
    )
    return body
