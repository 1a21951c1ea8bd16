"""Training points: one per numeric figure of each iteration's document, oldest first, within
the range; unknown workloads None; a range past the bound refused."""

from __future__ import annotations

import datetime

import peewee
import pytest

from lens.store import database, models, upserting
from lens.store.queries import training
from lens.store.queries.training import TrainingPoint
from tests.roles.api import workloadrows as rows
from tests.roles.api.conftest import CLUSTER, NOW

AT = NOW - datetime.timedelta(minutes=1)


def test_only_numbers_are_figures() -> None:
    document = {
        "tflops": 1.5,
        "iteration": 7,
        "done": True,
        "note": "warmup",
        "nested": {"a": 1},
        "nan": float("nan"),
        "inf": float("inf"),
        "huge": 10**400,
    }
    assert training.points(AT, document) == [
        TrainingPoint(metric="iteration", value=7.0, at=AT),
        TrainingPoint(metric="tflops", value=1.5, at=AT),
    ]
    assert training.points(AT, None) == []
    assert training.points(AT, [1, 2]) == []


def _iterations(db: peewee.Database, count: int) -> None:
    base = {"cluster": CLUSTER, "workload_uid": "pj", "pod_uuid": "p", "serial": 1}
    with database.session(db):
        upserting.insert_new(
            models.TrainingPerformance,
            [
                {
                    **base,
                    "iteration": i,
                    "created_at": NOW + datetime.timedelta(seconds=i),
                    "performance": {"tflops": float(i)},
                }
                for i in range(count)
            ],
        )


def test_a_range_of_iterations(db: peewee.Database, monkeypatch: pytest.MonkeyPatch) -> None:
    rows.write_cluster(db, workloads=(rows.workload("pj", "PyTorchJob"),))
    _iterations(db, 5)

    def between(first: int, last: int) -> list[float] | None:
        found = training.training_points(
            db,
            cluster=CLUSTER,
            uid="pj",
            start=NOW + datetime.timedelta(seconds=first),
            end=NOW + datetime.timedelta(seconds=last),
        )
        return None if found is None else [p.value for p in found]

    assert between(1, 3) == [1.0, 2.0, 3.0]
    assert between(10, 20) == []
    monkeypatch.setattr(training, "MAX_ROWS", 3)
    assert between(0, 2) == [0.0, 1.0, 2.0]
    with pytest.raises(training.TooManyRows):
        between(0, 3)
    unknown = training.training_points(db, cluster="c2", uid="pj", start=NOW, end=NOW)
    assert unknown is None
