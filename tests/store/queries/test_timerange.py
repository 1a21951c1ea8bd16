"""Time ranges: validation naming the parameter, buckets, the resolution chosen, and the bucket
expression agreeing with Python's floor on every engine (fractions of a second included)."""

from __future__ import annotations

import peewee
import pytest

from lens.store import models
from lens.store.queries.reading import reading
from lens.store.queries.timerange import (
    LATEST_EPOCH,
    RangeError,
    Resolution,
    TimeRange,
    bucket,
    time_range,
)
from tests.roles.api.seriesrows import S, at, write_training

DAY = 86_400


@pytest.mark.parametrize(
    ("start", "end", "step", "parameter"),
    [
        (-1, 10, 1, "start"),
        (0, LATEST_EPOCH + 1, 1, "end"),
        (0, 10, 0, "step"),
        (0, 10, -5, "step"),
        (10, 10, 1, "end"),
        (10, 5, 1, "end"),
        (0, 11_001, 1, "step"),
    ],
)
def test_ranges_refused_name_their_parameter(
    start: int, end: int, step: int, parameter: str
) -> None:
    with pytest.raises(RangeError) as refused:
        time_range(start=start, end=end, step=step)
    assert refused.value.parameter == parameter
    assert str(refused.value).startswith(f"{parameter}: ")


def test_buckets_and_their_stamps() -> None:
    span = time_range(start=100, end=400, step=120)
    assert span.points == 3  # [100, 220), [220, 340), [340, 400)
    assert [span.stamp(b) for b in range(3)] == [100, 220, 340]
    assert time_range(start=0, end=11_000, step=1).points == 11_000
    assert time_range(start=0, end=10, step=1, max_points=10).points == 10
    assert span.first == at(100) and span.last == at(400)


def test_the_resolution_follows_range_and_step() -> None:
    assert TimeRange(start=0, end=DAY, step=60).resolution() is Resolution.MINUTES
    assert TimeRange(start=0, end=3 * DAY, step=3599).resolution() is Resolution.MINUTES
    assert TimeRange(start=0, end=3 * DAY + 1, step=60).resolution() is Resolution.HOURS
    assert TimeRange(start=0, end=7200, step=3600).resolution() is Resolution.HOURS
    # An hour of minutes of 8,000 GPUs is 480,000 rows; of 8,400, too many.
    hour = TimeRange(start=0, end=3600, step=60)
    assert hour.resolution(gpus=8000) is Resolution.MINUTES
    assert hour.resolution(gpus=8400) is Resolution.HOURS


def test_the_bucket_expression_is_floor_on_every_engine(db: peewee.Database) -> None:
    offsets = [0, 0.5, 59.999999, 60, 119.999999, 120, 179, 3599.999999]
    write_training(db, "w", [(S + o, i, {}) for i, o in enumerate(offsets)])
    table = models.TrainingPerformance
    for step in (60, 120, 7):
        span = TimeRange(start=S, end=S + 3600, step=step)
        number = bucket(db, table.created_at, span)
        with reading(db):
            found = [int(b) for (b,) in table.select(number).order_by(table.iteration).tuples()]
        assert found == [int(o // step) for o in offsets], step


def test_a_whole_clusters_range_of_hours_is_bounded() -> None:
    week = TimeRange(start=0, end=7 * DAY, step=3600)
    week.check_cluster_rows(gpus=8000, resolution=Resolution.HOURS)  # 1,344,000 rows
    year = TimeRange(start=0, end=365 * DAY, step=86400)
    with pytest.raises(RangeError) as refused:
        year.check_cluster_rows(gpus=8000, resolution=Resolution.HOURS)
    assert refused.value.parameter == "start"
    assert str(refused.value) == (
        "start: the whole cluster's 8000 GPUs are read over at most 7 days a request"
    )
    year.check_cluster_rows(gpus=8, resolution=Resolution.HOURS)  # a small cluster's year
