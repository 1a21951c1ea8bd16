"""A workload's training figures over a time range (training_performance: one row per iteration
parsed from its logs), for the API's /v1/workloads/{uid}/trainingPerformance.

Each row gives one point per figure of its `performance` document whose value is a number
(booleans, texts and nested documents are not figures); the original's shape, Grafana Infinity
friendly (REFERENCE.md 2.1). A range holds at most MAX_ROWS iterations.
"""

from __future__ import annotations

import dataclasses
import datetime
import math
from collections.abc import Iterable
from typing import Any

import peewee

from lens.store import database, models
from lens.store.queries.reading import reading

MAX_ROWS = 20_000  # iterations per answer; a narrower range reads more


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class TrainingPoint:
    metric: str
    value: float
    at: datetime.datetime  # when the iteration was logged


class TooManyRows(Exception):
    """The range holds more iterations than one answer carries."""


def points(row_time: datetime.datetime, performance: Any) -> list[TrainingPoint]:
    """The figures of one iteration's document, by name (pure)."""
    if not isinstance(performance, dict):
        return []
    found = []
    for metric, value in sorted(performance.items()):
        if isinstance(value, bool) or not isinstance(value, int | float):
            continue
        try:
            number = float(value)
        except OverflowError:  # an integer past what a double holds is no figure to plot
            continue
        if math.isfinite(number):
            found.append(TrainingPoint(metric=str(metric), value=number, at=row_time))
    return found


def _rows(cluster: str, uid: str, start: datetime.datetime, end: datetime.datetime) -> list[Any]:
    table = models.TrainingPerformance
    query = (
        table.select(table.created_at, table.performance)
        .where(
            (table.cluster == cluster)
            & (table.workload_uid == uid)
            & (table.created_at >= start)
            & (table.created_at <= end)
        )
        .order_by(table.created_at, table.serial, table.iteration)
        .limit(MAX_ROWS + 1)
        .tuples()
    )
    return list(database.tuple_rows(query))


def _exists(cluster: str, uid: str) -> bool:
    table = models.GpuWorkload
    return bool(table.select().where((table.cluster == cluster) & (table.uid == uid)).exists())


def training_points(
    db: peewee.Database,
    *,
    cluster: str,
    uid: str,
    start: datetime.datetime,
    end: datetime.datetime,
) -> list[TrainingPoint] | None:
    """The points of workload `uid` logged from `start` to `end` (both included), oldest first;
    None when the cluster has no such workload. TooManyRows past MAX_ROWS iterations."""
    with reading(db):
        if not _exists(cluster, uid):
            return None
        rows = _rows(cluster, uid, start, end)
    if len(rows) > MAX_ROWS:
        raise TooManyRows(f"more than {MAX_ROWS} iterations")
    return _flatten(rows)


def _flatten(rows: Iterable[tuple[datetime.datetime, Any]]) -> list[TrainingPoint]:
    return [point for at, performance in rows for point in points(at, performance)]
