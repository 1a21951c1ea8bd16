"""A payload's `measured`: from a loop's recorded freshness or the latest complete minute;
never measured is no time and stale."""

from __future__ import annotations

import datetime

from lens.roles.api.routers import measured
from lens.roles.api.schemas.measured import Measured
from lens.store import freshness

T = datetime.datetime(2026, 12, 7, 12, tzinfo=datetime.UTC)


def test_from_a_loops_freshness() -> None:
    found = freshness.Freshness(figure=freshness.NODES, as_of=T, stale_after_seconds=60.0)
    unix = int(T.timestamp())
    assert measured.of_freshness(found, T + datetime.timedelta(seconds=60)) == Measured(
        as_of=unix, stale=False
    )
    assert measured.of_freshness(found, T + datetime.timedelta(seconds=61)) == Measured(
        as_of=unix, stale=True
    )
    assert measured.of_freshness(None, T) == Measured(as_of=None, stale=True)


def test_from_the_latest_complete_minute() -> None:
    unix = int(T.timestamp())
    assert measured.of_minute(T, T + datetime.timedelta(minutes=3)) == Measured(
        as_of=unix, stale=False
    )
    assert measured.of_minute(T, T + datetime.timedelta(minutes=6)) == Measured(
        as_of=unix, stale=True
    )
    assert measured.of_minute(None, T) == Measured(as_of=None, stale=True)
