"""`lens jobs`' stragglers: the iteration times the log intake stores feed the tracker
(lens/telemetry/trainlogs/stragglers.py); a loop judges each interval closed, writes the flags
that began, went on or ended to training_stragglers and shows them as lens_training_straggler.

A source is the rank a line's prefix names, else the node the pod ran on: Megatron prints its
iteration line on one rank only, so a job's sources are usually the ranks of launchers that
prefix every rank's output (torchrun --tee) or the nodes of jobs whose every node logs.
"""

from __future__ import annotations

import threading

import peewee

from lens.runtime.config import Config
from lens.runtime.periodic import Loop
from lens.runtime.process import Process
from lens.store import database
from lens.telemetry.trainlogs import stragglerstore
from lens.telemetry.trainlogs.batching import StoredIteration
from lens.telemetry.trainlogs.stragglers import (
    StragglerGauge,
    StragglerSettings,
    StragglerTracker,
)

ITERATION_TIME = "elapsed_time_per_iteration_ms"


class Stragglers:
    """`observe` from the intake's writer thread; `run` from the loop."""

    def __init__(self, config: Config, process: Process, db: peewee.Database) -> None:
        telemetry = config.telemetry
        self._tracker = StragglerTracker(
            StragglerSettings(
                interval_seconds=telemetry.straggler_interval_seconds,
                share_above_median=telemetry.straggler_share,
                intervals=telemetry.straggler_intervals,
            )
        )
        self._lock = threading.Lock()
        self._gauge = StragglerGauge(process.metrics)
        self._cluster = config.cluster.name
        self._db = db
        self._clock = process.clock
        self._resumed = False
        process.add_loop(
            Loop(
                name="stragglers",
                interval_seconds=telemetry.straggler_interval_seconds / 4,
                run=self.run,
            )
        )

    def observe(self, stored: StoredIteration) -> None:
        """Take a stored iteration's time, once per line: for the pod's own job (not for each
        workload above it too)."""
        iteration_ms = stored.figures.get(ITERATION_TIME)
        if not stored.nearest or iteration_ms is None:
            return
        source = f"rank {stored.rank}" if stored.rank is not None else stored.node or stored.pod_uid
        with self._lock:
            self._tracker.observe(
                workload_uid=stored.workload_uid,
                run=stored.run,
                source=source,
                node=stored.node,
                at=stored.at,
                iteration_ms=iteration_ms,
            )

    def run(self) -> None:
        with database.session(self._db):
            if not self._resumed:
                self._resume()
            with self._lock:
                changes = self._tracker.evaluate(self._clock.time())
            if changes:
                stragglerstore.save(self._cluster, changes)
        self._gauge.show(changes)

    def _resume(self) -> None:
        """Carry on the flags stored as open (after a restart)."""
        stored = stragglerstore.open_straggles(self._cluster)
        with self._lock:
            for straggle in stored:
                self._tracker.resume(straggle)
        self._gauge.show(stored)
        self._resumed = True
