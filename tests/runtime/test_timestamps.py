from __future__ import annotations

import datetime

from hypothesis import given
from hypothesis import strategies as st

from lens.runtime.timestamps import parse_rfc3339

UTC = datetime.UTC


def test_kubernetes_and_docker_timestamps() -> None:
    assert parse_rfc3339("2026-11-21T03:03:04Z") == datetime.datetime(
        2026, 11, 21, 3, 3, 4, tzinfo=UTC
    )
    assert parse_rfc3339("2026-11-21T03:03:04.799359262Z") == datetime.datetime(
        2026, 11, 21, 3, 3, 4, 799359, tzinfo=UTC
    )
    assert parse_rfc3339("2026-11-21T04:03:04+01:00") == datetime.datetime(
        2026, 11, 21, 3, 3, 4, tzinfo=UTC
    )
    assert parse_rfc3339("2026-11-21T03:03:04") == datetime.datetime(
        2026, 11, 21, 3, 3, 4, tzinfo=UTC
    )
    for bad in ("not a time", "", None, 17):
        assert parse_rfc3339(bad) is None


def test_a_time_whose_utc_year_is_out_of_range_is_none() -> None:
    assert parse_rfc3339("9999-12-31T23:00:00-05:00") is None
    assert parse_rfc3339("0001-01-01T00:00:00+01:00") is None
    assert parse_rfc3339("9999-12-31T23:59:59.999999Z") == datetime.datetime.max.replace(tzinfo=UTC)


@given(st.text() | st.datetimes().map(datetime.datetime.isoformat))
def test_any_text_is_an_aware_utc_time_or_none(text: str) -> None:
    moment = parse_rfc3339(text)
    assert moment is None or moment.tzinfo is UTC
