"""`lens jobs`' consumers: per top-level workload, the original's gauges — GPUs allocated,
active pods and utilization (percent) — from lens/usage/consumers.py, on the leader; the series
of a consumer that ended are removed (the original kept them until a restart)."""

from __future__ import annotations

import datetime
from collections.abc import Callable

import peewee

from lens.roles.jobs.leading import add_leader_loop
from lens.runtime.clock import Clock
from lens.runtime.config import Config
from lens.runtime.process import Process
from lens.runtime.selfmetrics import SelfMetrics
from lens.store import database
from lens.usage import consumers
from lens.usage.consumers import Consumer

_LABELS = ("kind", "name", "uid")


class ConsumerGauges:
    """The original's names and labels (REFERENCE.md 3), what they meant rather than did."""

    def __init__(self, metrics: SelfMetrics) -> None:
        self.usage = metrics.gauge(
            "consumer_pod_gpu_usage",
            "Mean utilization (percent) of the GPUs a top-level workload's running pods held "
            "over the last jobs.consumers_utilization_minutes, weighted by seconds held.",
            _LABELS,
        )
        self.allocated = metrics.gauge(
            "consumer_pod_gpu_allocated",
            "GPUs requested by a top-level workload's running pods, each pod counted once.",
            _LABELS,
        )
        self.active = metrics.gauge(
            "consumer_pod_active", "Running GPU pods of a top-level workload.", _LABELS
        )

    def show(self, found: list[Consumer]) -> None:
        for gauge in (self.usage, self.allocated, self.active):
            gauge.clear()
        for consumer in found:
            labels = (consumer.kind, consumer.name, consumer.uid)
            self.allocated.labels(*labels).set(consumer.gpus_allocated)
            self.active.labels(*labels).set(consumer.active_pods)
            if consumer.utilization_ratio is not None:
                self.usage.labels(*labels).set(100 * consumer.utilization_ratio)


class Consumers:
    """The loop's body."""

    def __init__(
        self, config: Config, *, db: peewee.Database, clock: Clock, gauges: ConsumerGauges
    ) -> None:
        self._cluster = config.cluster.name
        self._window = datetime.timedelta(minutes=config.jobs.consumers_utilization_minutes)
        self._db = db
        self._clock = clock
        self._gauges = gauges

    def run(self) -> None:
        now = datetime.datetime.fromtimestamp(self._clock.time(), datetime.UTC)
        with database.session(self._db):
            found = consumers.consumers(self._cluster, since=now - self._window)
        self._gauges.show(found)


def add(
    config: Config, process: Process, db: peewee.Database, *, leading: Callable[[], bool]
) -> Consumers:
    """The consumers loop, run by the leader only."""
    body = Consumers(config, db=db, clock=process.clock, gauges=ConsumerGauges(process.metrics))
    add_leader_loop(
        process,
        name="consumers",
        interval_seconds=config.jobs.consumers_interval_seconds,
        run=body.run,
        leading=leading,
    )
    return body
