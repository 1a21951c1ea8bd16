"""The cluster's GPU figures now on every engine: the latest complete minute (settled, recent),
each node's allocation from `nodes`, the heatmap's bounds."""

from __future__ import annotations

import datetime

import peewee
import pytest

from lens.store.queries import seriesnow
from lens.store.queries.reading import reading
from tests.roles.api.conftest import gpu, node, write_gpus, write_nodes
from tests.roles.api.seriesrows import NOW, at, gpu_minute, write_minutes

MINUTE = 60
BASE = int(NOW.timestamp())


def _latest(now: datetime.datetime) -> datetime.datetime | None:
    return seriesnow.latest_minute("c1", now)


def test_the_latest_complete_minute(db: peewee.Database) -> None:
    with reading(db):
        assert _latest(NOW) is None
    write_minutes(db, "n1", [gpu_minute(BASE - ago * MINUTE, 0) for ago in (12, 5, 1)])
    with reading(db):
        # At NOW + 30 s, minutes up to NOW - 2 min are complete: NOW - 1 min is not yet.
        assert _latest(NOW + datetime.timedelta(seconds=30)) == at(BASE - 5 * MINUTE)
        assert _latest(NOW + datetime.timedelta(minutes=1)) == at(BASE - MINUTE)
        # At NOW - 4 min, the newest complete is NOW - 12 min; ten minutes after a minute, it
        # is no longer recent.
        assert _latest(NOW - datetime.timedelta(minutes=4)) == at(BASE - 12 * MINUTE)
        assert _latest(NOW + datetime.timedelta(minutes=5)) == at(BASE - MINUTE)
        assert _latest(NOW + datetime.timedelta(minutes=12)) is None
        assert seriesnow.latest_minute("c2", NOW) is None


def test_allocation_per_node_and_for_the_cluster(db: peewee.Database) -> None:
    write_nodes(
        db,
        node("b", gpu_count=4, gpu_allocation=1),
        node("a", gpu_count=8, gpu_allocation=8),
        node("gone", status="Deleted"),
        node("cpu", gpu_count=0),
    )
    write_gpus(db, "b", (gpu(0, vendor="nvidia"),))
    assert seriesnow.gpu_allocation(db, cluster="c1") == (
        seriesnow.NodeAllocation(node="a", vendor=None, capacity=8, allocated=8, rate=1.0),
        seriesnow.NodeAllocation(node="b", vendor="nvidia", capacity=4, allocated=1, rate=0.25),
    )
    figures = seriesnow.cluster_utilization(db, cluster="c1", now=NOW)
    assert figures == seriesnow.ClusterUtilization(
        allocation_percent=pytest.approx(75.0), utilization_percent=None, minute=None
    )
    assert seriesnow.gpu_allocation(db, cluster="c2") == ()


def test_the_heatmap_bounds_k(db: peewee.Database) -> None:
    for k in (0, seriesnow.MAX_TOP_NODES + 1):
        with pytest.raises(ValueError, match="k must be"):
            seriesnow.heatmap(db, cluster="c1", now=NOW, k=k)
    found = seriesnow.heatmap(db, cluster="c1", now=NOW, k=seriesnow.MAX_TOP_NODES)
    assert found == seriesnow.Heatmap(minute=None, power=(), temperature=(), utilization=())


def test_the_clusters_utilization_is_of_the_latest_complete_minute(db: peewee.Database) -> None:
    write_minutes(
        db,
        "n1",
        [
            gpu_minute(BASE - 3 * MINUTE, 0, utilization_mean_ratio=0.1),
            gpu_minute(BASE - 2 * MINUTE, 0, utilization_mean_ratio=0.4),
            gpu_minute(BASE - 2 * MINUTE, 1, utilization_mean_ratio=0.8),
            gpu_minute(BASE - 2 * MINUTE, 2),  # unknown: in no mean
            gpu_minute(BASE - MINUTE, 0, utilization_mean_ratio=1.0),  # not settled yet
        ],
    )
    figures = seriesnow.cluster_utilization(db, cluster="c1", now=NOW)
    assert figures.minute == at(BASE - 2 * MINUTE)
    assert figures.utilization_percent == pytest.approx(60.0)


def test_the_newest_minute_stored_and_when_the_latest_is_stale(db: peewee.Database) -> None:
    assert seriesnow.newest_minute(db, cluster="c1", now=NOW) is None
    write_minutes(db, "n1", [gpu_minute(BASE - ago * MINUTE, 0) for ago in (30, 1, -2)])
    # The minute two minutes ahead of `now` is a clock ahead: not the newest.
    assert seriesnow.newest_minute(db, cluster="c1", now=NOW) == at(BASE - MINUTE)
    assert seriesnow.newest_minute(db, cluster="c2", now=NOW) is None
    # The latest complete minute is from 2 to 3 minutes old as time goes: stale once it is
    # two minutes older than that.
    minute = at(BASE)
    assert not seriesnow.minute_stale(minute, minute + datetime.timedelta(minutes=5))
    assert seriesnow.minute_stale(minute, minute + datetime.timedelta(minutes=5, seconds=1))
