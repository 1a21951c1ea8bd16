"""The noise around a framework's line, and numbers as frameworks print them."""

from __future__ import annotations

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


def test_timestamps_keep_their_fraction_exactly() -> None:
    assert text.utc_seconds("2026-08-22 12:00:01.482113", "%Y-%m-%d %H:%M:%S") == (
        1787400001 + 0.482113
    )
    assert text.utc_seconds("2026-08-22 12:00:01,482", "%Y-%m-%d %H:%M:%S") == 1787400001.482
    assert text.utc_seconds("2026-02-30 12:00:01", "%Y-%m-%d %H:%M:%S") is None


@given(st.text(max_size=300))
def test_any_text_is_cleaned_and_read_without_an_exception(line: str) -> None:
    cleaned, rank = text.clean(line)
    assert isinstance(cleaned, str) and (rank is None or rank >= 0)
    for value in text.numbers(line):
        assert math.isfinite(value)
