"""A workload's series on every engine: its pods' held GPU rows per node at both resolutions,
training rows thinned to one a bucket, unknown workloads."""

from __future__ import annotations

import peewee
import pytest

from lens.store.queries import seriesworkloads
from lens.store.queries.series import Point
from lens.store.queries.timerange import TimeRange
from tests.roles.api.seriesrows import (
    S,
    gpu_minute,
    roll_up,
    write_minutes,
    write_training,
    write_workload,
)


def test_hours_weigh_the_seconds_held(db: peewee.Database) -> None:
    write_workload(db, "w1", ["p1"])
    write_minutes(
        db,
        "gpu-a",
        [
            gpu_minute(S, 0, held=[("p1", 60)], utilization_mean_ratio=0.2, power_mean_watts=100.0),
            gpu_minute(S + 60, 0, held=[("p1", 30)], utilization_mean_ratio=0.8),
            gpu_minute(S, 1, held=[("p1", 60)], utilization_mean_ratio=0.6, power_mean_watts=300.0),
        ],
    )
    roll_up(db)
    span = TimeRange(start=S, end=S + 7200, step=3600)
    found = seriesworkloads.workload_metrics(db, cluster="c1", uid="w1", span=span)
    assert found is not None
    # GPU 0's hour: mean 50 % over its 2 minutes, held 90 s; GPU 1's 60 %, held 60 s:
    # (50 x 90 + 60 x 60) / 150. Power: GPU 0's hour 100 W (one minute knew it), GPU 1 300 W.
    utilization = pytest.approx((50 * 90 + 60 * 60) / 150)
    assert found.utilization == (
        seriesworkloads.NodeSeries(node_name="gpu-a", timestamps=(S,), values=(utilization,)),
    )
    power = pytest.approx((100 * 90 + 300 * 60) / 150)
    assert found.power == (
        seriesworkloads.NodeSeries(node_name="gpu-a", timestamps=(S,), values=(power,)),
    )
    assert found.power[0].points == (Point(timestamp=S, value=power),)
    assert found.memory == ()


def test_a_large_workloads_long_range_reads_hours(db: peewee.Database) -> None:
    """70 hours of minutes of 120 GPUs would be 504,000 rows: too many, hours are read."""
    write_workload(db, "big", [f"p{i}" for i in range(120)])
    write_minutes(db, "gpu-a", [gpu_minute(S, 0, held=[("p7", 60)], power_mean_watts=500.0)])
    span = TimeRange(start=S - 248_400, end=S + 3600, step=60)
    found = seriesworkloads.workload_metrics(db, cluster="c1", uid="big", span=span)
    assert found is not None and found.power == ()
    roll_up(db)
    found = seriesworkloads.workload_metrics(db, cluster="c1", uid="big", span=span)
    assert found is not None
    assert found.power == (
        seriesworkloads.NodeSeries(node_name="gpu-a", timestamps=(S,), values=(500.0,)),
    )


def test_training_rows_one_a_bucket(db: peewee.Database) -> None:
    write_workload(db, "w1", [])
    write_training(
        db,
        "w1",
        [
            *((S + i * 10, i, {"tflops": float(i)}) for i in range(12)),
            (S + 120, 12, {"tflops": True}),
            (S + 125, 13, {"tflops": None}),
        ],
    )
    span = TimeRange(start=S, end=S + 180, step=60)
    found = seriesworkloads.workload_metrics(db, cluster="c1", uid="w1", span=span)
    assert found is not None
    assert found.training == (
        seriesworkloads.TrainingPoint(timestamp=S + 50, iteration=5, tflops=5.0),
        seriesworkloads.TrainingPoint(timestamp=S + 110, iteration=11, tflops=11.0),
        seriesworkloads.TrainingPoint(timestamp=S + 125, iteration=13, tflops=None),
    )


def test_an_unknown_workload(db: peewee.Database) -> None:
    span = TimeRange(start=S, end=S + 60, step=60)
    assert seriesworkloads.workload_metrics(db, cluster="c1", uid="nope", span=span) is None
