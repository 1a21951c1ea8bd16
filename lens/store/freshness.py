"""When each figure the API serves was measured: the loops that measure a figure record the time
their latest value is of (`record`), and the API reads it back beside the figure (`read`) to
say "as of" and to mark a figure stale.

A figure is stale once it is older than twice its loop's interval, plus the delay it is measured
with by design (idle GPUs read each minute two minutes after it ended): one run missed is
ordinary (a loop skipped while the previous one ran long), two in a row mean the loop is not
keeping up or not running at all.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Iterable

import peewee

from lens.store import database, models, upserting
from lens.store.queries.reading import reading

# The figures, by the loop that measures them.
NODES = "nodes"  # lens jobs' node info: the nodes table (status, allocation, facts)
PODS = "pods"  # lens controller: gpu_pods and gpu_workloads, watched
CONSUMERS = "consumers"  # lens jobs' consumers
IDLE = "idle"  # lens jobs' idle GPUs: the latest minute looked at
ROLLUP = "rollup"  # lens jobs' hourly rollup: every minute before as_of is rolled up
GPU_HOURS = "gpu_hours"  # lens jobs' GPU-hours per day: summed through as_of
STORAGE = "storage"  # lens jobs' storage scan

STALE_INTERVALS = 2


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Freshness:
    figure: str
    as_of: datetime.datetime  # the time the figure's latest value is of
    stale_after_seconds: float  # an age past which it is stale

    def stale(self, now: datetime.datetime) -> bool:
        return (now - self.as_of).total_seconds() > self.stale_after_seconds


def stale_after(*, interval_seconds: float, lag_seconds: float = 0.0) -> float:
    """The age past which a figure measured every `interval_seconds`, `lag_seconds` behind the
    time it is measured at, is stale."""
    return lag_seconds + STALE_INTERVALS * interval_seconds


def record(
    db: peewee.Database,
    *,
    cluster: str,
    figure: str,
    as_of: datetime.datetime,
    interval_seconds: float,
    lag_seconds: float = 0.0,
) -> None:
    """Say that `figure` of `cluster` is now as of `as_of`, measured every `interval_seconds`
    and `lag_seconds` behind (one row per figure, overwritten)."""
    row = {
        "cluster": cluster,
        "figure": figure,
        "as_of": as_of,
        "stale_after_seconds": stale_after(
            interval_seconds=interval_seconds, lag_seconds=lag_seconds
        ),
        "updated_at": datetime.datetime.now(datetime.UTC),
    }
    database.idempotent_transaction(
        db, lambda: upserting.upsert(models.FigureFreshness, [row], keep=())
    )


def read(db: peewee.Database, *, cluster: str, figures: Iterable[str]) -> dict[str, Freshness]:
    """The freshness of each of `figures` that was ever recorded for `cluster`, by figure."""
    wanted = sorted(set(figures))
    table = models.FigureFreshness
    query = (
        table.select(table.figure, table.as_of, table.stale_after_seconds)
        .where((table.cluster == cluster) & table.figure.in_(wanted))
        .tuples()
    )
    with reading(db):
        rows = list(database.tuple_rows(query))
    found = {}
    for figure, as_of, stale_after_seconds in rows:
        found[str(figure)] = Freshness(
            figure=str(figure),
            as_of=table.as_of.python_value(as_of),
            stale_after_seconds=float(stale_after_seconds),
        )
    return found
