"""The noise around a framework's line, and numbers as frameworks print them."""

from __future__ import annotations

import calendar
import datetime
import math

from hypothesis import given
from hypothesis import strategies as st

from lens.telemetry.trainlogs import text


def test_rank_prefixes_and_colours_come_off() -> None:
    assert text.clean("[default3]: iteration 5/ 10 |") == (" iteration 5/ 10 |", 3)
    assert text.clean("[trainer12]:[rank44]:step: 1") == ("step: 1", 44)
    assert text.clean("7: steps: 100 loss: 1") == ("steps: 100 loss: 1", 7)
    assert text.clean("\x1b[31mstep: 1\x1b[39m") == ("step: 1", None)
    assert text.clean("[20260822 12:00:01][rank-7/8]<INFO> iteration") == (
        "[20260822 12:00:01][rank-7/8]<INFO> iteration",
        7,
    )
    assert text.clean(" 10%|#  | 1/10\r 20%|## | 2/10\r{'loss': 1.0}") == ("{'loss': 1.0}", None)


def test_numbers_as_printed() -> None:
    assert text.number("7,842") == 7842.0
    assert text.number(" 1.499250E-05 ") == 1.49925e-05
    assert text.number("61.22GiB(32.01%)") == 61.22
    assert text.numbers("151.27GB/ 40.71GB/191.98GB/78.79%") == [151.27, 40.71, 191.98, 78.79]
    assert text.number("N/A") is None and text.number("nan") is None
    assert text.number("1e999") is None  # not finite
    assert text.number(" 7.214836E+00 ") == 7.214836 and text.number("1_0") == 1.0
    assert text.number("2.046", scale=1000) == 2046.0


def test_timestamps_keep_their_fraction_exactly() -> None:
    assert text.utc_seconds("2026-08-22 12:00:01.482113", "%Y-%m-%d %H:%M:%S") == (
        1787400001 + 0.482113
    )
    assert text.utc_seconds("2026-08-22 12:00:01,482", "%Y-%m-%d %H:%M:%S") == 1787400001.482
    assert text.utc_seconds("2026-02-30 12:00:01", "%Y-%m-%d %H:%M:%S") is None


def test_impossible_stamps_are_no_time() -> None:
    for stamp in (
        "2026-02-29 12:00:00",
        "2026-13-01 12:00:00",
        "2026-00-10 12:00:00",
        "0000-01-01 00:00:00",
        "2026-08-22 24:00:00",
        "2026-08-22 12:60:00",
        "2026-08-22 12:00:60",
        "2026-08-22 12:00:01.48x",
    ):
        assert text.utc_seconds(stamp, text.ISO_LAYOUT) is None, stamp
    assert text.utc_seconds("2024-02-29 23:59:59", text.ISO_LAYOUT) == 1709251199.0
    assert text.utc_seconds("22/08/2026 12:00:01", "%d/%m/%Y %H:%M:%S") == 1787400001.0


@given(st.datetimes(min_value=datetime.datetime(1000, 1, 1)), st.integers(0, 999_999))
def test_any_valid_stamp_is_its_unix_time(moment: datetime.datetime, micros: int) -> None:
    whole = moment.replace(microsecond=0)
    truth = calendar.timegm(whole.timetuple()) + micros / 10**6
    stamp = f"{whole:%Y-%m-%d %H:%M:%S}.{micros:06d}"
    assert text.utc_seconds(stamp, text.ISO_LAYOUT) == truth


@given(st.text(max_size=300))
def test_any_text_is_cleaned_and_read_without_an_exception(line: str) -> None:
    cleaned, rank = text.clean(line)
    assert isinstance(cleaned, str) and (rank is None or rank >= 0)
    for value in text.numbers(line):
        assert math.isfinite(value)
