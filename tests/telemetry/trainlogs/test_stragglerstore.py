"""Straggler flags in SQL, on every engine: written, updated by their start, read back open."""

from __future__ import annotations

import dataclasses
import datetime

import peewee

from lens.store import models
from lens.telemetry.trainlogs import stragglerstore
from lens.telemetry.trainlogs.stragglers import Straggle

CLUSTER = "c1"
STARTED = datetime.datetime(2026, 8, 22, 12, 0, 0, 482113, tzinfo=datetime.UTC)
FLAG = Straggle(
    workload_uid="w-top",
    run=2,
    source="rank-13",
    node="gpu-node-7",
    started_at=STARTED,
    ended_at=STARTED + datetime.timedelta(minutes=3),
    intervals=3,
    mean_share_above_median=0.21,
    peak_share_above_median=0.25,
    open=True,
)


def test_a_flag_is_written_read_back_open_and_updated_by_its_start(db: peewee.Database) -> None:
    assert stragglerstore.save(CLUSTER, [FLAG]) == 1
    assert stragglerstore.open_straggles(CLUSTER) == [FLAG]
    assert stragglerstore.open_straggles("another") == []
    ended = dataclasses.replace(
        FLAG, ended_at=STARTED + datetime.timedelta(minutes=5), intervals=5, open=False
    )
    stragglerstore.save(CLUSTER, [ended])
    assert stragglerstore.open_straggles(CLUSTER) == []
    (row,) = models.TrainingStraggler.select()
    assert (row.cluster, row.workload_uid, row.serial, row.source, row.node_name) == (
        CLUSTER,
        "w-top",
        2,
        "rank-13",
        "gpu-node-7",
    )
    assert (row.started_at, row.ended_at, row.intervals, row.open) == (
        STARTED,
        STARTED + datetime.timedelta(minutes=5),
        5,
        False,
    )
    assert (row.mean_share_above_median, row.peak_share_above_median) == (0.21, 0.25)


def test_a_sources_second_flag_is_a_row_of_its_own_and_open_ones_come_oldest_first(
    db: peewee.Database,
) -> None:
    later = dataclasses.replace(FLAG, started_at=STARTED + datetime.timedelta(hours=1))
    other = dataclasses.replace(FLAG, source="rank-2", node="gpu-node-1")
    assert stragglerstore.save(CLUSTER, [later, FLAG, other]) == 3
    assert stragglerstore.open_straggles(CLUSTER) == [FLAG, other, later]
    assert stragglerstore.save(CLUSTER, []) == 0
