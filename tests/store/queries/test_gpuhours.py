"""GPU-hours over whole UTC days read back from rows the gpu-hours job body summed
(tests/roles/api/usagerows.py): the label keys the table holds, every row or a page, workloads
named (a pod without an owner as kind Pod)."""

from __future__ import annotations

import datetime

import peewee
import pytest

from lens.store import database
from lens.store.queries import gpuhours
from lens.store.queries.gpus import Workload
from lens.store.queries.reading import Page
from tests.roles.api.conftest import CLUSTER
from tests.roles.api.usagerows import hours_cluster, sum_days

DAY = datetime.date(2026, 11, 21)
BOTH = gpuhours.Days(first=DAY, last=DAY + datetime.timedelta(days=1))


def _read(db: peewee.Database, group_by: gpuhours.GroupBy, page: Page | None) -> gpuhours.HoursPage:
    return gpuhours.gpu_hours(
        db, cluster=CLUSTER, group_by=group_by, days=BOTH, sort=gpuhours.HoursSort(), page=page
    )


def test_groupings_and_days_are_checked() -> None:
    for kind, key in (("team", ""), ("label", ""), ("namespace", "team"), ("workload", "x")):
        with pytest.raises(ValueError, match="no GPU-hours grouped by"):
            gpuhours.GroupBy(kind=kind, key=key)
    with pytest.raises(ValueError, match="before the first"):
        gpuhours.Days(first=DAY, last=DAY - datetime.timedelta(days=1))
    assert gpuhours.Days(first=DAY, last=DAY).starts() == (
        datetime.datetime(2026, 11, 21, tzinfo=datetime.UTC),
        datetime.datetime(2026, 11, 21, tzinfo=datetime.UTC),
    )
    with pytest.raises(ValueError, match="not sorted by"):
        gpuhours.HoursSort(column="day")


def test_the_label_keys_kept(db: peewee.Database) -> None:
    assert gpuhours.label_keys(db, cluster=CLUSTER) == ()
    hours_cluster(db, DAY)
    assert gpuhours.label_keys(db, cluster=CLUSTER) == ("team",)
    later = datetime.datetime(2026, 11, 23, tzinfo=datetime.UTC)
    sum_days(db, [DAY], now=later, label_key="owner")  # the team label was changed
    assert gpuhours.label_keys(db, cluster=CLUSTER) == ("owner", "team")
    assert gpuhours.label_keys(db, cluster="c2") == ()


def test_every_row_or_a_page(db: peewee.Database) -> None:
    hours_cluster(db, DAY)
    by_workload = gpuhours.GroupBy(kind=gpuhours.WORKLOAD)
    every = _read(db, by_workload, None)
    assert every.total == 4
    assert [(r.value, r.gpu_model, round(r.held_gpu_hours, 9)) for r in every.rows] == [
        ("p3", "MI300X", 0.2),
        ("w1", "MI300X", 0.15),
        ("p3", "", 0.1),
        ("d1", 'MI325X, "OAM"', 0.05),
    ]
    assert every.rows[0].workload == Workload(uid="p3", kind="Pod", name="pod-p3", namespace="dev")
    page = _read(db, by_workload, Page(offset=1, limit=2))
    assert (page.rows, page.total) == (every.rows[1:3], 4)
    by_team = _read(db, gpuhours.GroupBy(kind=gpuhours.LABEL, key="team"), None)
    assert {r.workload for r in by_team.rows} == {None}
    assert {(r.kind, r.key) for r in by_team.rows} == {("label", "team")}


def test_workloads_named(db: peewee.Database) -> None:
    hours_cluster(db, DAY)
    with database.session(db):
        named = gpuhours.workload_names(CLUSTER, ["w1", "p3", "", "r1", "nobody"])
    assert named == {
        "w1": Workload(uid="w1", kind="PyTorchJob", name="train", namespace="ml"),
        "p3": Workload(uid="p3", kind="Pod", name="pod-p3", namespace="dev"),
        "r1": Workload(uid="r1", kind="ReplicaSet", name="web-1", namespace="serve"),
    }
