"""When figures were measured, on every engine: one row per cluster and figure, the latest
recorded wins, and stale past twice the interval beyond the designed delay."""

from __future__ import annotations

import datetime

import peewee

from lens.store import freshness

T = datetime.datetime(2026, 12, 7, 12, tzinfo=datetime.UTC)


def test_the_latest_record_of_each_figure_is_read_back(db: peewee.Database) -> None:
    assert freshness.read(db, cluster="c1", figures=[freshness.NODES]) == {}
    freshness.record(db, cluster="c1", figure=freshness.NODES, as_of=T, interval_seconds=30)
    later = T + datetime.timedelta(seconds=30)
    freshness.record(db, cluster="c1", figure=freshness.NODES, as_of=later, interval_seconds=30)
    freshness.record(
        db,
        cluster="c1",
        figure=freshness.IDLE,
        as_of=T,
        interval_seconds=60,
        lag_seconds=180,
    )
    freshness.record(db, cluster="c2", figure=freshness.NODES, as_of=T, interval_seconds=30)
    found = freshness.read(db, cluster="c1", figures=[freshness.NODES, freshness.IDLE, "other"])
    assert found == {
        freshness.NODES: freshness.Freshness(
            figure=freshness.NODES, as_of=later, stale_after_seconds=60.0
        ),
        freshness.IDLE: freshness.Freshness(
            figure=freshness.IDLE, as_of=T, stale_after_seconds=300.0
        ),
    }
    assert freshness.read(db, cluster="c2", figures=[freshness.NODES])[freshness.NODES].as_of == T


def test_stale_once_two_intervals_past_the_designed_delay() -> None:
    idle = freshness.Freshness(figure=freshness.IDLE, as_of=T, stale_after_seconds=300.0)
    assert not idle.stale(T + datetime.timedelta(seconds=300))
    assert idle.stale(T + datetime.timedelta(seconds=301))
    assert freshness.stale_after(interval_seconds=30) == 60.0
    assert freshness.stale_after(interval_seconds=60, lag_seconds=180) == 300.0
