"""Idle intervals read back from rows the idle-gpus job body wrote (tests/roles/api/usagerows.py):
those open now, those overlapping a range with their minutes inside it, and the totals per
namespace, summed in SQL for the intervals inside the range and here for those crossing it."""

from __future__ import annotations

import datetime

import peewee
import pytest

from lens.store.queries import idle
from lens.store.queries.reading import Page
from lens.usage import idlestore
from lens.usage.idle import Holding, IdleInterval
from tests.roles.api.conftest import CLUSTER, T0
from tests.roles.api.usagerows import at, idle_cluster

B = int(T0)
EVERY = Page(offset=0, limit=100)


def _listed(db: peewee.Database, during: idle.TimeRange | None, **wanted: str) -> idle.IdlePage:
    return idle.list_idle(
        db,
        cluster=CLUSTER,
        wanted=idle.IdleFilter(**wanted),
        sort=idle.IdleSort(),
        page=EVERY,
        during=during,
    )


def _range(start: float, end: float) -> idle.TimeRange:
    return idle.TimeRange(start=at(start), end=at(end))


def test_minutes_inside_a_range() -> None:
    during = _range(B + 60, B + 180)
    assert during.minutes_of(at(B), at(B + 600)) == 2.0
    assert during.minutes_of(at(B + 90), at(B + 120)) == 0.5
    assert during.minutes_of(at(B + 170), at(B + 600)) == pytest.approx(10 / 60)
    assert during.minutes_of(at(B + 180), at(B + 240)) == 0.0  # the end is not in the range
    assert during.minutes_of(at(B), at(B + 60)) == 0.0
    with pytest.raises(ValueError, match="ends after it starts"):
        _range(B, B)


def test_open_now_and_over_a_range(db: peewee.Database) -> None:
    idle_cluster(db, B)
    now = _listed(db, None)
    assert [(r.pod_uid, r.started_at, r.ended_at, r.minutes) for r in now.rows] == [
        ("p2", at(B), at(B + 600), 10),
        ("p1", at(B + 360), at(B + 600), 4),
    ]
    assert all(r.open and r.minutes_in_range is None for r in now.rows)
    assert now.namespaces == (
        idle.NamespaceIdle(namespace="ml", intervals=1, idle_minutes=4.0),
        idle.NamespaceIdle(namespace="serve", intervals=1, idle_minutes=10.0),
    )
    # [B+150, B+390): A [B, B+300) and C [B, B+600) cross its start, B [B+360, B+600) its
    # end; D [B+120, B+360) crosses its start too. Nothing wholly inside.
    crossing = _listed(db, _range(B + 150, B + 390))
    assert {(r.pod_uid, r.minutes): r.minutes_in_range for r in crossing.rows} == {
        ("p1", 5): 2.5,
        ("p2", 10): 4.0,
        ("p3", 4): 3.5,
        ("p1", 4): 0.5,
    }
    assert crossing.namespaces == (
        idle.NamespaceIdle(namespace="dev", intervals=1, idle_minutes=3.5),
        idle.NamespaceIdle(namespace="ml", intervals=2, idle_minutes=3.0),
        idle.NamespaceIdle(namespace="serve", intervals=1, idle_minutes=4.0),
    )
    # A range holding every interval whole: all summed in SQL.
    whole = _listed(db, _range(B - 60, B + 660))
    assert [(n.namespace, n.intervals, n.idle_minutes) for n in whole.namespaces] == [
        ("dev", 1, 4.0),
        ("ml", 2, 9.0),
        ("serve", 1, 10.0),
    ]
    assert _listed(db, _range(B - 60, B + 660), node="gpu-c", namespace="ml").total == 0


def test_a_workload_gone_from_the_table_is_unknown(db: peewee.Database) -> None:
    pod = Holding(node="n1", gpu_uuid="GPU-0", pod_uid="u1", namespace="ml", pod_name="p")
    interval = IdleInterval(
        holding=pod, start=at(B), end=at(B + 1800), minutes=30, utilization_sum=0.3, open=True
    )
    idlestore.save(CLUSTER, [interval], {"u1": "w-gone"})
    (row,) = _listed(db, None).rows
    assert (row.workload, row.gpu_id, row.gpu_model) == (None, None, None)
    assert row.utilization_mean_ratio == pytest.approx(0.01)
    assert row.started_at == datetime.datetime(2026, 11, 21, 5, tzinfo=datetime.UTC)


def test_only_allowed_columns_sort() -> None:
    with pytest.raises(ValueError, match="not sorted by"):
        idle.IdleSort(column="open")
