"""A workload's sums per node and bucket on every engine: the same from gpu_minute_pods as from
the holder rows joined to their GPU-minutes and devices — for ranges and steps of every shape,
for minutes written before migration 0011 (read from the holder rows), and for a node whose
GPUs' VRAM sizes are not those its minutes were summed with."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import peewee
import pytest

from lens.reports.attribution import Attribution, Share
from lens.reports.gpuminutes import GpuMinute
from lens.reports.storing import partitions
from lens.store import database, models
from lens.store.queries import seriesworkloads, workloadsums
from lens.store.queries.series import Point, tables
from lens.store.queries.timerange import Resolution, TimeRange
from tests.roles.api.conftest import CLUSTER, GIB, gpu, write_gpus
from tests.roles.api.seriesrows import S, at, gpu_minute, holder, write_minutes, write_workload
from tests.store.before0011 import as_if_all_before_0011, migrated_with_minutes_before_0011

PARTS = ("gpu_minutes", "gpu_minute_pods")
MINUTES = 10
SPANS = (  # every bucket whole, two minutes a bucket, misaligned, wider than the data, one
    TimeRange(start=S, end=S + 60 * MINUTES, step=60),
    TimeRange(start=S, end=S + 60 * MINUTES, step=120),
    TimeRange(start=S + 30, end=S + 60 * MINUTES - 30, step=90),
    TimeRange(start=S - 3600, end=S + 3600, step=240),
    TimeRange(start=S, end=S + 60 * MINUTES, step=60 * MINUTES),
)


def _figure(m: int, g: int, scale: float) -> float | None:
    """A figure that varies by minute and GPU, unknown now and then."""
    return None if (m + g) % 4 == 0 else scale * ((7 * m + 3 * g) % 10 + 1) / 10


def _minute(start: int, index: int, shares: tuple[Share, ...], m: int) -> GpuMinute:
    """GPU `index`'s minute held by `shares`, its figures varying (_figure)."""
    minute = gpu_minute(
        start,
        index,
        utilization_mean_ratio=_figure(m, index, 1.0),
        vram_used_mean_bytes=_figure(m + 1, index, 150.0 * GIB),
        power_mean_watts=_figure(m + 2, index, 700.0),
    )
    idle = max(0.0, 60.0 - sum(s.seconds for s in shares))
    return dataclasses.replace(minute, held_by=Attribution(shares=shares, idle_seconds=idle))


def _share(pod: str, seconds: float, held: float | None = None, container: str = "main") -> Share:
    return Share(holder=holder(pod, container), seconds=seconds, held_seconds=held or seconds)


def _node_a(m: int) -> list[GpuMinute]:
    """gpu-a's minute `m`: p1 all or half of GPU 0; GPU 1 shared by p1 and p2; GPU 2 w2's
    p3; GPU 3 p4's two containers."""
    start = S + 60 * m
    return [
        _minute(start, 0, (_share("p1", 60.0 if m % 3 else 30.0),), m),
        _minute(start, 1, (_share("p1", 30.0, 60.0), _share("p2", 30.0, 60.0)), m),
        _minute(start, 2, (_share("p3", 60.0),), m),
        _minute(start, 3, (_share("p4", 20.0), _share("p4", 40.0, container="side")), m),
    ]


def _node_b(m: int) -> list[GpuMinute]:
    return [_minute(S + 60 * m, 0, (_share("p2", 45.0),), m)] if m % 5 != 4 else []


def _workloads(db: peewee.Database) -> None:
    write_workload(db, "w1", ["p1", "p2", "p4"])
    write_workload(db, "w2", ["p3"])
    write_gpus(db, "gpu-a", tuple(gpu(i) for i in range(4)))  # 192 GiB each
    write_gpus(db, "gpu-b", (gpu(0, vram_bytes=64 * GIB),))


def _summed(db: peewee.Database, span: TimeRange, uid: str = "w1") -> dict[workloadsums.Key, list]:
    """The sums as floats (a SUM of no known figure is None, as 0 over 0 seconds known)."""
    with database.session(db):
        t = tables(Resolution.MINUTES)
        found = workloadsums.summed(db, t=t, cluster=CLUSTER, uid=uid, span=span)
    return {key: [float(s or 0) for s in sums] for key, sums in found.items()}


def _joined(db: peewee.Database, span: TimeRange, uid: str = "w1") -> dict[workloadsums.Key, list]:
    """The sums with every minute read from the holder rows, as if written before 0011."""
    with as_if_all_before_0011(db, CLUSTER):
        return _summed(db, span, uid)


def _same_as_joined(db: peewee.Database, span: TimeRange, uid: str = "w1") -> None:
    rolled, joined = _summed(db, span, uid), _joined(db, span, uid)
    assert rolled.keys() == joined.keys(), span
    for key, sums in joined.items():
        # Only the order of the additions differs.
        assert rolled[key] == pytest.approx(sums, rel=1e-12, abs=1e-12), (span, key)


def test_the_rollup_answers_as_the_holder_rows_do(db: peewee.Database) -> None:
    _workloads(db)
    for m in range(MINUTES):
        write_minutes(db, "gpu-a", _node_a(m))
        write_minutes(db, "gpu-b", _node_b(m))
    for span in SPANS:
        for uid in ("w1", "w2"):
            _same_as_joined(db, span, uid)
    found = _summed(db, SPANS[-1])
    # w1's one bucket on gpu-a: p1's, p2's and p4's held seconds in it, each minute known.
    held = sum(60.0 if m % 3 else 30.0 for m in range(MINUTES)) + 2 * 60.0 * MINUTES + 60.0 * 10
    assert set(found) == {("gpu-a", 0), ("gpu-b", 0)}
    utilization_known = sum(
        (60.0 if m % 3 else 30.0) * (_figure(m, 0, 1.0) is not None)
        + 120.0 * (_figure(m, 1, 1.0) is not None)
        + 60.0 * (_figure(m, 3, 1.0) is not None)
        for m in range(MINUTES)
    )
    assert held > utilization_known == found[("gpu-a", 0)][1]
    with database.session(db):
        models.GpuMinuteHolder.delete().execute()
    assert _summed(db, SPANS[-1]) == found, "read from gpu_minute_pods, not the holder rows"


def test_minutes_written_before_0011_are_read_from_the_holder_rows(
    empty_database_url: str, tmp_path: Path
) -> None:
    before = {"gpu-a": [g for m in range(4) for g in _node_a(m)], "gpu-b": _node_b(0)}
    with migrated_with_minutes_before_0011(
        empty_database_url, tmp_path, cluster=CLUSTER, minutes=before, before=_workloads
    ) as db:
        with database.session(db):
            (start,) = models.RollupStart.select()
            assert models.GpuMinutePod.select().count() == 0
        assert (start.cluster, start.since) == ("", at(S + 4 * 60))
        for m in range(4, MINUTES):
            write_minutes(db, "gpu-a", _node_a(m))
            write_minutes(db, "gpu-b", _node_b(m))
        for span in SPANS:
            _same_as_joined(db, span)
        days = {table: [p.day for p in partitions.list_partitions(db, table)] for table in PARTS}
        assert days["gpu_minute_pods"] == days["gpu_minutes"], "0011 made partitions alike"
        # The straddling bucket [S + 3 min, S + 5 min) adds the holder rows' minute to the
        # rollup's; every minute is in the answer.
        found = _summed(db, TimeRange(start=S - 60, end=S + 60 * MINUTES, step=120))
        assert sorted(number for node, number in found if node == "gpu-a") == list(range(6))


def test_a_nodes_gpus_of_another_vram_size_now_are_read_from_the_holder_rows(
    db: peewee.Database,
) -> None:
    _workloads(db)
    write_minutes(db, "gpu-c", _node_b(0))  # no devices yet: its sums took no VRAM size
    for m in range(MINUTES):
        write_minutes(db, "gpu-a", _node_a(m))
        write_minutes(db, "gpu-b", _node_b(m))
    write_gpus(db, "gpu-c", (gpu(0),))
    write_gpus(db, "gpu-a", (gpu(0), gpu(1, vram_bytes=96 * GIB), gpu(2), gpu(3)))
    span = TimeRange(start=S, end=S + 60 * MINUTES, step=60)
    with database.session(db):
        rows = models.GpuMinutePod.select().where(models.GpuMinutePod.node_name == "gpu-a")
        assert {row.vram_bytes for row in rows if row.vram_known_seconds} == {192 * GIB}
    for each in (span, SPANS[2]):
        _same_as_joined(db, each)
    metrics = seriesworkloads.workload_metrics(db, cluster=CLUSTER, uid="w1", span=span)
    assert metrics is not None
    assert [line.node_name for line in metrics.memory] == ["gpu-a", "gpu-b", "gpu-c"]
    # gpu-a's minute 1, GPU 1 (held by p1 and p2, 60 s each) at 96 GiB now.
    held = {0: 60.0, 1: 120.0, 3: 60.0}
    sizes = {0: 192 * GIB, 1: 96 * GIB, 3: 192 * GIB}
    used = {g: v for g in held if (v := _figure(2, g, 150.0 * GIB)) is not None}
    ratio = sum(v / sizes[g] * held[g] for g, v in used.items()) / sum(held[g] for g in used)
    assert metrics.memory[0].points[1] == Point(timestamp=S + 60, value=pytest.approx(100 * ratio))


def test_vram_sizes_are_those_of_nodes_with_one_size(db: peewee.Database) -> None:
    write_gpus(db, "one", (gpu(0), gpu(1)))
    write_gpus(db, "two", (gpu(0), gpu(1, vram_bytes=64 * GIB)))
    write_gpus(db, "unknown", (gpu(0, vram_bytes=None),))
    write_gpus(db, "zero", (gpu(0, vram_bytes=0),))
    with database.session(db):
        names = {"one", "two", "unknown", "zero", "absent"}
        assert workloadsums.vram_sizes(CLUSTER, names) == {"one": 192 * GIB}
        assert workloadsums.vram_sizes(CLUSTER, set()) == {}
        assert workloadsums.vram_sizes("c2", names) == {}


def test_the_rollup_starts_at_the_latest_start_of_the_cluster_or_all(db: peewee.Database) -> None:
    start = models.RollupStart
    with database.session(db):
        assert workloadsums.rollup_start(CLUSTER) is None
        start.insert(cluster="", rollup=workloadsums.ROLLUP, since=at(S)).execute()
        start.insert(cluster="c2", rollup=workloadsums.ROLLUP, since=at(S + 60)).execute()
        start.insert(cluster=CLUSTER, rollup="another", since=at(S + 120)).execute()
        assert workloadsums.rollup_start(CLUSTER) == at(S)
        assert workloadsums.rollup_start("c2") == at(S + 60)
