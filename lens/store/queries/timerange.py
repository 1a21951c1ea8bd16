"""Time ranges of the API's series (`start`, `end`, `step` in unix seconds): their validation,
the resolution they are read at (gpu_minutes or the hourly rollup, gpu_hours) and the SQL
expression that puts a row in its step's bucket on SQLite, PostgreSQL and MariaDB alike.

store/queries/series.py and seriesworkloads.py read with them; routers/series.py validates.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
from typing import Any

import peewee

from lens.store import database

MAX_POINTS = 11_000  # buckets a range may hold: bounds the rows of any answer
LATEST_EPOCH = 253_402_300_799  # 9999-12-31 23:59:59 UTC, the last second every engine holds
HOUR_SECONDS = 3600
# Ranges longer than this read the hourly rollup (a node's three days of minutes are 35,000
# rows), and so do ranges whose minutes would be more GPU rows than MINUTE_ROWS_AT_MOST: a
# whole cluster's last hour is still read by minutes at 8,000 GPUs (480,000 rows; the hour in
# progress is in no rollup yet), its last day from hours (PERFORMANCE.md, `bench api`).
MINUTES_AT_MOST = 3 * 86_400
MINUTE_ROWS_AT_MOST = 500_000
# A whole cluster's range read from hours is bounded too: 8,000 GPUs' week is 1.3 million rows
# (about 2 s); a year would hold a database connection for minutes.
HOUR_ROWS_AT_MOST = 1_500_000
_EPOCH_TEXT = "1970-01-01 00:00:00"


class RangeError(ValueError):
    """A time range refused: `parameter` names which of start, end and step is wrong."""

    def __init__(self, parameter: str, problem: str) -> None:
        super().__init__(f"{parameter}: {problem}")
        self.parameter = parameter
        self.problem = problem


class Resolution(enum.Enum):
    MINUTES = "minutes"  # gpu_minutes, gpu_minute_holders
    HOURS = "hours"  # gpu_hours, gpu_hour_holders


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class TimeRange:
    """[start, end) cut into buckets of `step` seconds from `start`: bucket i is
    [start + i*step, start + (i+1)*step), the last one cut at `end`. A row belongs to the
    bucket its minute (or hour) starts in; a point is stamped with its bucket's start."""

    start: int
    end: int
    step: int

    @property
    def points(self) -> int:
        """The buckets in the range."""
        return -(-(self.end - self.start) // self.step)

    @property
    def first(self) -> datetime.datetime:
        return _utc(self.start)

    @property
    def last(self) -> datetime.datetime:
        """The end, excluded."""
        return _utc(self.end)

    def stamp(self, bucket: int) -> int:
        """The unix time of a bucket's start, from the number the bucket expression gave."""
        return self.start + bucket * self.step

    def resolution(self, *, gpus: int = 0) -> Resolution:
        """Hours for steps of an hour or more, for ranges over MINUTES_AT_MOST and for ranges
        whose minutes of `gpus` GPUs would be over MINUTE_ROWS_AT_MOST rows; else minutes. (A
        step under an hour read from hours has a point an hour: the cost of a bounded read.)"""
        seconds = self.end - self.start
        if self.step >= HOUR_SECONDS or seconds > MINUTES_AT_MOST:
            return Resolution.HOURS
        if gpus * (seconds / 60) > MINUTE_ROWS_AT_MOST:
            return Resolution.HOURS
        return Resolution.MINUTES

    def check_cluster_rows(self, *, gpus: int, resolution: Resolution) -> None:
        """RangeError on `start` when the whole cluster's rows of the range, `gpus` GPUs at
        `resolution`, are over what one request may read."""
        if resolution is not Resolution.HOURS or not gpus:
            return
        hours = -(-(self.end - self.start) // HOUR_SECONDS)
        if gpus * hours > HOUR_ROWS_AT_MOST:
            days = HOUR_ROWS_AT_MOST // (gpus * 24)
            raise RangeError(
                "start",
                f"the whole cluster's {gpus} GPUs are read over at most {days} days a request",
            )


def _utc(seconds: int) -> datetime.datetime:
    return datetime.datetime.fromtimestamp(seconds, datetime.UTC)


def time_range(*, start: int, end: int, step: int, max_points: int = MAX_POINTS) -> TimeRange:
    """The range asked for; RangeError naming the parameter when it cannot be served."""
    for name, value in (("start", start), ("end", end)):
        if not 0 <= value <= LATEST_EPOCH:
            raise RangeError(name, f"expected unix seconds from 0 to {LATEST_EPOCH}")
    if step < 1:
        raise RangeError("step", "expected a positive number of seconds")
    if end <= start:
        raise RangeError("end", "expected a time after start")
    found = TimeRange(start=start, end=end, step=step)
    if found.points > max_points:
        raise RangeError(
            "step",
            f"(end - start) / step is {found.points} points; at most {max_points}: "
            "raise step or narrow the range",
        )
    return found


def bucket(db: peewee.Database, column: peewee.Field[Any], span: TimeRange) -> peewee.ColumnBase:
    """The number of the bucket of `span` that `column` (a UTC time at or after its start)
    falls in: floor((epoch(column) - start) / step), spelled for `db`'s engine. The numbers are
    bound values (the drivers of PostgreSQL and MariaDB inline them, so the expression in
    SELECT and in GROUP BY is the same text)."""
    engine = database.engine_of(db)
    start, step = peewee.Value(span.start), peewee.Value(span.step)
    if engine == "sqlite":
        # Times are fixed-width text there ("YYYY-MM-DD HH:MM:SS.ffffff"): the fraction is cut
        # off, as strftime would round 59.9999995 s up into the next second. Integer division
        # truncates, which is floor here.
        whole = peewee.fn.substr(column, 1, 19)
        text_seconds = peewee.Cast(peewee.fn.strftime("%s", whole), "INTEGER")
        return (text_seconds - start) / step
    if engine == "postgresql":
        # A timestamp without time zone: its epoch is its UTC reading, whatever the session's.
        epoch = peewee.fn.date_part("epoch", column)
        return peewee.Cast(peewee.fn.floor((epoch - start) / step), "BIGINT")
    # MariaDB: TIMESTAMPDIFF does not depend on the session's time zone (UNIX_TIMESTAMP does);
    # DIV is integer division (`/` is decimal with 4 places, which rounds up near a boundary).
    elapsed = peewee.fn.TIMESTAMPDIFF(peewee.SQL("SECOND"), _EPOCH_TEXT, column)
    # Spelled out: peewee renders its own "DIV" operator as `/`.
    return peewee.NodeList((elapsed - start, peewee.SQL("DIV"), step), parens=True)
