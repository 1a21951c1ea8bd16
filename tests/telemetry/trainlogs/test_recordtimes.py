"""A record's time in every layout fluent-bit and Vector write it, its fraction as written
(#27: the original read ".482113" as 482,113 nanoseconds)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lens.telemetry.trainlogs import recordtimes

# 2026-08-22T12:00:01Z (`date -u -d @1787400001`).
NOON = 1787400001


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1787400001.482113, 1787400001.482113),  # fluent-bit json_date_format double
        (NOON, float(NOON)),  # epoch
        (1787400001482, 1787400001.482),  # epoch_ms
        ("2026-08-22T12:00:01.482113Z", 1787400001.482113),  # iso8601
        ("2026-08-22 12:00:01.482113", 1787400001.482113),  # java_sql_timestamp, no zone: UTC
        ("2026-08-22T12:00:01.482113456Z", 1787400001.482113456),  # Vector, nanoseconds
        ("2026-08-22T14:00:01.5+02:00", 1787400001.5),
        ("2026-08-22T07:00:01.25-0500", 1787400001.25),
        ("2026-08-22T12:00:01Z", float(NOON)),
        ("1787400001.482113", 1787400001.482113),
        (" 2026-08-22T12:00:01,5Z ", 1787400001.5),
    ],
)
def test_each_layout_gives_the_time_with_its_fraction(value: object, expected: float) -> None:
    assert recordtimes.seconds(value) == expected


def test_the_fraction_is_never_read_as_nanoseconds() -> None:
    at = recordtimes.seconds("2026-08-22T12:00:01.000001Z")
    assert at is not None and at - NOON == pytest.approx(1e-6, abs=1e-7)


@pytest.mark.parametrize(
    "value",
    [
        None,
        True,
        "",
        "yesterday",
        "2026-02-30T00:00:00Z",
        "2026-08-22T25:00:00Z",
        float("nan"),
        float("inf"),
        -5,
        0,
        10**30,
        "10000-01-01T00:00:00Z",
        [NOON],
        {"seconds": NOON},
        "1" * 70,
    ],
)
def test_what_is_no_time_gives_none(value: object) -> None:
    assert recordtimes.seconds(value) is None


@given(
    st.one_of(
        st.text(max_size=80),
        st.integers(),
        st.floats(allow_nan=True, allow_infinity=True),
        st.from_regex(
            r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d{1,12})?(Z|[+-]\d\d:\d\d)?", fullmatch=True
        ),
    )
)
def test_any_value_gives_a_time_in_range_or_none(value: object) -> None:
    at = recordtimes.seconds(value)
    assert at is None or 0 < at <= 253_402_300_799
