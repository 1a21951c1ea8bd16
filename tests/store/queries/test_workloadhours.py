"""GPU-seconds by model: a top-level workload's summed over the days of gpu_hours_daily, a lower
one's from its pods' hourly holder rows with a shared GPU's minute split between its holders."""

from __future__ import annotations

import datetime

import peewee

from lens.store import database
from lens.store.queries import workloadhours
from lens.store.queries.workloadhours import ModelSeconds
from lens.usage import gpuhours
from lens.usage.gpuhours import GroupHours
from tests.roles.api import workloadrows as rows
from tests.roles.api.conftest import CLUSTER, T0, gpu, write_gpus

HOUR = 3600


def _day(day: datetime.date, *groups: tuple[str, str, float]) -> None:
    gpuhours.save_day(
        CLUSTER,
        day,
        [
            GroupHours(
                kind="workload",
                key="",
                value=uid,
                gpu_model=model,
                held_hours=held,
                used_hours=0.0,
                measured_hours=0.0,
            )
            for uid, model, held in groups
        ],
    )


def test_top_level_seconds_over_days_and_models(db: peewee.Database) -> None:
    with database.session(db):
        _day(datetime.date(2026, 11, 20), ("job", "MI300X", 1.5), ("other", "MI300X", 9.0))
        _day(datetime.date(2026, 11, 21), ("job", "MI300X", 0.25), ("job", "", 2.0))
        found = workloadhours.top_level_seconds(CLUSTER, ["job", "absent"])
        assert workloadhours.top_level_seconds(CLUSTER, []) == {}
    assert found == {
        "job": (
            ModelSeconds(gpu_model="", seconds=7200.0),
            ModelSeconds(gpu_model="MI300X", seconds=1.75 * HOUR),
        )
    }


def test_a_lower_workloads_own_pods_seconds(db: peewee.Database) -> None:
    job = rows.workload("job", "Job")
    rs = rows.workload("rs", "ReplicaSet", owner=job)
    mine = rows.gpu_pod("mine", node="n1", gpus=1, owner=rs)
    sibling = rows.gpu_pod("sibling", node="n1", gpus=1, owner=job)
    rows.write_cluster(db, workloads=(job, rs), pods=(mine, sibling))
    write_gpus(db, "n1", (gpu(0),))
    with database.session(db):
        assert workloadhours.pods_seconds(CLUSTER, "rs") is None
    # Both pods hold GPU-0 through the same 10 minutes: each is given half of every minute.
    rows.write_held_minutes(
        db,
        node="n1",
        pod=mine,
        sharing=(sibling,),
        gpu_uuids=("GPU-0",),
        first=T0 - HOUR,
        loads=[0.5] * 10,
    )
    # And alone, for a minute, a GPU the inventory does not name.
    rows.write_held_minutes(
        db, node="n1", pod=mine, gpu_uuids=("GPU-3",), first=T0 - 2 * HOUR, loads=[0.5]
    )
    rows.sum_gpu_hours(db)
    with database.session(db):
        found = workloadhours.pods_seconds(CLUSTER, "rs")
    assert found == (
        ModelSeconds(gpu_model="", seconds=60.0),
        ModelSeconds(gpu_model="MI300X", seconds=300.0),
    )
