"""Series per step from the report tables on every engine: allocation from the pods' shares of
GPU-minutes (the cluster's over the GPUs it had), the hourly rollup for long ranges, unknown
nodes, empty tables."""

from __future__ import annotations

import dataclasses

import peewee
import pytest

from lens.reports.attribution import Attribution, Share
from lens.reports.gpuminutes import GpuMinute
from lens.store.queries import series
from lens.store.queries.timerange import Resolution, TimeRange
from tests.roles.api.conftest import gpu, node, write_gpus, write_nodes
from tests.roles.api.seriesrows import S, gpu_minute, holder, roll_up, write_minutes

DAY = 86_400


def _shared(start: int) -> GpuMinute:
    """GPU 0 held all minute by p1, over [20, 30) by a container of no pod (docker's) too, over
    [30, 60) by p2 too: shares p1 20 + 5 + 15, the container 5, p2 15 (docs/reports.md)."""
    no_pod = dataclasses.replace(holder("sidecar"), pod_uid="")
    shares = (
        Share(holder=holder("p1"), held_seconds=60.0, seconds=40.0),
        Share(holder=holder("p2"), held_seconds=30.0, seconds=15.0),
        Share(holder=no_pod, held_seconds=10.0, seconds=5.0),
    )
    minute = gpu_minute(start, 0, utilization_mean_ratio=1.0)
    return dataclasses.replace(minute, held_by=Attribution(shares=shares, idle_seconds=0.0))


def test_allocation_counts_the_pods_shares(db: peewee.Database) -> None:
    write_nodes(db, node("gpu-a"))
    write_minutes(db, "gpu-a", [_shared(S), gpu_minute(S, 1, held=[("p3", 20)])])
    span = TimeRange(start=S, end=S + 60, step=60)
    # GPU 0's pods' shares 40 + 15 s (not the 90 s they held, nor the container's 5); GPU 1
    # held 20 s: 75 of 120 s.
    minutes = series.tables(span.resolution())
    assert series.held_seconds(db, t=minutes, cluster="c1", span=span) == {0: 75.0}
    found = series.node_metrics(db, cluster="c1", node_name="gpu-a", span=span)
    assert found is not None
    assert found.allocation == (series.Point(timestamp=S, value=62.5),)
    assert [g.gpu_index for g in found.utilization] == [0]  # GPU 1's utilization unknown


def test_long_ranges_read_hours(db: peewee.Database) -> None:
    write_nodes(db, node("gpu-a"))
    write_minutes(
        db,
        "gpu-a",
        [
            gpu_minute(S, 0, held=[("p1", 60)], utilization_mean_ratio=0.2),
            gpu_minute(S + 60, 0, utilization_mean_ratio=0.4),
        ],
    )
    span = TimeRange(start=S - 3 * DAY, end=S + 60, step=60)  # over 3 days: hours
    assert span.resolution() is Resolution.HOURS
    assert series.node_metrics(db, cluster="c1", node_name="gpu-a", span=span) == (
        series.NodeMetrics(utilization=(), allocation=())
    )
    roll_up(db)
    found = series.node_metrics(db, cluster="c1", node_name="gpu-a", span=span)
    hour = series.Point(timestamp=S, value=pytest.approx(30.0))
    assert found == series.NodeMetrics(
        utilization=(series.GpuSeries(gpu_index=0, points=(hour,)),),
        allocation=(series.Point(timestamp=S, value=50.0),),  # 60 of 120 s
    )


def test_a_large_clusters_long_range_reads_hours(db: peewee.Database) -> None:
    """Three days of minutes of 120 GPUs would be 518,400 rows: too many, hours are read."""
    write_gpus(db, "big", tuple(gpu(i) for i in range(120)), time=S - 60)
    write_minutes(db, "big", [gpu_minute(S, 0, held=[("p1", 60)], utilization_mean_ratio=0.5)])
    span = TimeRange(start=S + 60 - 3 * DAY, end=S + 60, step=60)
    empty = series.ClusterHistory(allocation=(), utilization=(), vram=())
    assert series.cluster_history(db, cluster="c1", span=span) == empty
    assert series.cluster_history(db, cluster="c2", span=span) == empty
    roll_up(db)
    assert series.cluster_history(db, cluster="c1", span=span) == series.ClusterHistory(
        # One GPU of the 120 held for the minute the hour has so far.
        allocation=(series.Point(timestamp=S, value=pytest.approx(100.0 / 120)),),
        utilization=(series.Point(timestamp=S, value=50.0),),
        vram=(),
    )


def test_unknown_nodes_and_empty_tables(db: peewee.Database) -> None:
    span = TimeRange(start=S, end=S + 600, step=60)
    assert series.node_metrics(db, cluster="c1", node_name="nowhere", span=span) is None
    assert series.cluster_history(db, cluster="c1", span=span) == series.ClusterHistory(
        allocation=(), utilization=(), vram=()
    )


def test_the_pure_figures() -> None:
    assert series.mean(3.0, 2, scale=100.0) == 150.0
    assert series.mean(None, 0) is None and series.mean(0.0, 0) is None
    assert series.allocation_percent(30.0, 1.0) == 50.0
    assert series.allocation_percent(0.0, 0.0) is None


def test_the_clusters_allocation_is_of_its_gpus_whoever_reported(db: peewee.Database) -> None:
    """A lost node's GPUs keep their capacity (as the allocation now counts them), and a GPU
    counts from its first inventory: a cluster's first minute is not a whole one."""
    write_gpus(db, "up", (gpu(0), gpu(1)), time=S + 40)  # the agent's first inventory, 40 s in
    write_gpus(db, "lost", (gpu(0), gpu(1)), time=S + 40)  # its agent never reported a minute
    write_minutes(
        db,
        "up",
        [
            gpu_minute(S, 0, held=[("p1", 20)]),  # held from the container's start, 40 s in
            gpu_minute(S + 60, 0, held=[("p1", 60)]),
            gpu_minute(S + 60, 1),
        ],
    )
    span = TimeRange(start=S, end=S + 120, step=60)
    found = series.cluster_history(db, cluster="c1", span=span)
    # S: 20 s held of the 4 GPUs' 20 s each; S+60: one of four GPUs held.
    assert found.allocation == (
        series.Point(timestamp=S, value=25.0),
        series.Point(timestamp=S + 60, value=25.0),
    )


def test_the_clusters_allocation_is_at_most_all_of_it() -> None:
    assert series.cluster_allocation_percent(90.0, 60.0) == 100.0  # attributed before inventory
    assert series.cluster_allocation_percent(30.0, 60.0) == 50.0
    assert series.cluster_allocation_percent(0.0, 0.0) is None
