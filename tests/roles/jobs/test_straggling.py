"""The straggler loop of `lens jobs`: iteration times stored by the log intake, judged per
interval, flags written to training_stragglers and shown as lens_training_straggler, carried on
after a restart."""

from __future__ import annotations

import dataclasses

import peewee

from lens.roles.jobs.straggling import Stragglers
from lens.runtime.clock import FakeClock
from lens.runtime.config import ClusterConfig, Config, TelemetryConfig
from lens.runtime.process import Process
from lens.store import database, models
from lens.telemetry.trainlogs.batching import StoredIteration

START = 1_777_636_800.0  # a minute's start
RANKS = 4
SLOW = 2  # the rank 30 % slower than the others


def _stragglers(db: peewee.Database, clock: FakeClock) -> tuple[Stragglers, Process]:
    config = Config(
        cluster=ClusterConfig(name="lab"),
        telemetry=TelemetryConfig(straggler_interval_seconds=60, straggler_intervals=2),
    )
    process = Process(
        "jobs", server=config.server, service=config.service, clock=clock, handle_signals=False
    )
    return Stragglers(config, process, db), process


def _iteration(rank: int, at: float, *, ms: float, nearest: bool = True) -> StoredIteration:
    return StoredIteration(
        workload_uid="uid-llama",
        run=1,
        pod_uid=f"uid-trainer-{rank}",
        node=f"node-{rank}",
        rank=rank,
        at=at,
        iteration=int(at),
        figures={"elapsed_time_per_iteration_ms": ms, "lm_loss": 2.0},
        nearest=nearest,
    )


def _feed(stragglers: Stragglers, minutes: range) -> None:
    for minute in minutes:
        for second in (5, 25, 45):
            at = START + 60 * minute + second
            for rank in range(RANKS):
                stragglers.observe(_iteration(rank, at, ms=1300.0 if rank == SLOW else 1000.0))
                # The same line as the parent workload sees it: not a second source.
                stragglers.observe(_iteration(rank, at, ms=9999.0, nearest=False))


def _gauge(process: Process) -> dict[str, float]:
    return {
        sample.labels["source"]: sample.value
        for family in process.metrics.registry.collect()
        if family.name == "lens_training_straggler"
        for sample in family.samples
    }


def test_a_rank_slower_than_its_run_is_flagged_stored_and_shown(db: peewee.Database) -> None:
    clock = FakeClock(start_time=START)
    stragglers, process = _stragglers(db, clock)
    _feed(stragglers, range(3))
    clock.advance(3 * 60 + 31)  # three minutes closed, and the lag after them
    stragglers.run()
    assert _gauge(process) == {f"rank {SLOW}": 1.0}
    table = models.TrainingStraggler
    with database.session(db):
        (row,) = table.select()
    assert (row.workload_uid, row.serial, row.source, row.node_name, row.open) == (
        "uid-llama",
        1,
        f"rank {SLOW}",
        f"node-{SLOW}",
        True,
    )
    assert abs(row.mean_share_above_median - 0.3) < 1e-9

    restarted, again = _stragglers(db, clock)
    restarted.run()
    assert _gauge(again) == {f"rank {SLOW}": 1.0}, "an open flag is carried on after a restart"


def test_lines_without_an_iteration_time_or_of_equal_ranks_flag_nothing(
    db: peewee.Database,
) -> None:
    clock = FakeClock(start_time=START)
    stragglers, process = _stragglers(db, clock)
    for minute in range(3):
        for rank in range(RANKS):
            at = START + 60 * minute + 10
            stragglers.observe(_iteration(rank, at, ms=1000.0))
            untimed = _iteration(rank, at, ms=1.0)
            stragglers.observe(dataclasses.replace(untimed, figures={"lm_loss": 2.0}))
    clock.advance(3 * 60 + 31)
    stragglers.run()
    assert _gauge(process) == {}
    with database.session(db):
        assert models.TrainingStraggler.select().count() == 0
