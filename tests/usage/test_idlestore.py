"""Idle intervals in SQL: held minutes read back in order, once per pod; intervals written and
read back open; pods' top-level workloads."""

from __future__ import annotations

import datetime

import peewee

from lens.store import models
from lens.usage import idlestore
from lens.usage.idle import MINUTE, Holding, IdleInterval

from .conftest import CLUSTER, T0, Minutes


def _at(minute: int) -> datetime.datetime:
    return datetime.datetime.fromtimestamp(T0 + 60 * minute, datetime.UTC)


def test_held_minutes_come_in_time_order_once_per_pod(db: peewee.Database, held: Minutes) -> None:
    held.held(0, [0.01, None, 0.5], containers=("main", "sidecar"))
    held.held(0, [0.9, 0.9, 0.9], pod=None, uuid="GPU-1")  # held by nobody
    found = idlestore.held_minutes(CLUSTER, since=_at(1), until=_at(3))
    assert [(m.minute, m.utilization) for m in found] == [(_at(1), None), (_at(2), 0.5)]
    (pod,) = {m.holding for m in found}
    assert (pod.node, pod.gpu_uuid, pod.pod_name, pod.namespace) == (
        "n1",
        "GPU-0",
        "train-0",
        "team-a",
    )
    assert found[0].minute.tzinfo is not None


def test_intervals_are_written_updated_by_their_start_and_read_back_open(
    db: peewee.Database,
) -> None:
    pod = Holding(node="n1", gpu_uuid="GPU-0", pod_uid="u1", namespace="ml", pod_name="p")
    opened = IdleInterval(
        holding=pod, start=_at(0), end=_at(30), minutes=30, utilization_sum=0.3, open=True
    )
    idlestore.save(CLUSTER, [opened], {"u1": "w-top"})
    assert idlestore.open_intervals(CLUSTER) == [opened]
    ended = IdleInterval(
        holding=pod, start=_at(0), end=_at(31), minutes=31, utilization_sum=0.31, open=False
    )
    idlestore.save(CLUSTER, [ended], {})
    (row,) = models.GpuIdleInterval.select()
    assert (row.ended_at, row.minutes, row.open, row.workload_uid) == (_at(31), 31, False, "")
    assert row.utilization_mean_ratio == 0.01
    assert idlestore.open_intervals(CLUSTER) == []


def test_a_fresh_start_reads_a_window_back_or_from_the_oldest_open_interval() -> None:
    until = _at(100)
    assert idlestore.lookback_start(until, 30, []) == until - 30 * MINUTE
    pod = Holding(node="n1", gpu_uuid="GPU-0", pod_uid="u1", namespace="ml", pod_name="p")
    old = IdleInterval(
        holding=pod, start=_at(0), end=_at(50), minutes=50, utilization_sum=0, open=True
    )
    assert idlestore.lookback_start(until, 30, [old]) == _at(50)
    ancient = IdleInterval(
        holding=pod, start=_at(-5000), end=_at(-3000), minutes=1, utilization_sum=0, open=True
    )
    assert idlestore.lookback_start(until, 30, [ancient]) == until - idlestore.MAX_LOOKBACK
