"""UTC minutes, collection cadences and counters split at minute boundaries."""

from __future__ import annotations

import datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lens.reports.timeline import Cadence, Tally, minute_of

T0 = 1_800_000_000  # 2027-01-15 08:00:00 UTC


def test_a_minute_starts_on_the_utc_clocks_whole_minute() -> None:
    for time in (T0, T0 + 0.001, T0 + 59.999, T0 + 30):
        assert minute_of(time) == T0
    assert minute_of(T0 + 60) == T0 + 60
    assert minute_of(T0 - 0.001) == T0 - 60
    start = datetime.datetime.fromtimestamp(minute_of(T0 + 1234.5), datetime.UTC)
    assert (start.hour, start.minute, start.second) == (8, 20, 0)


def test_a_cadence_expects_the_whole_cycles_a_minute_holds() -> None:
    assert Cadence.of(1.0).expected_samples == 60
    assert Cadence.of(15.0).expected_samples == 4
    assert Cadence.of(7.0).expected_samples == 8  # 8 or 9 fit; fewer than 8 means missed
    assert Cadence.of(0.1).expected_samples == 600
    assert Cadence.of(60.0).expected_samples == 1
    assert Cadence.of(2.0).bracket_seconds == 5.0


@pytest.mark.parametrize("interval", [0.0, -1.0, 61.0])
def test_a_cadence_outside_a_minute_is_refused(interval: float) -> None:
    with pytest.raises(ValueError, match="not in"):
        Cadence.of(interval)


Reading = tuple[float, int | None]  # (time, increase since the previous reading)


def feed(tally: Tally, readings: list[Reading], *, limit: float = 2.5) -> list[int | float | None]:
    """Readings in, in time order; the figures of the minutes they closed."""
    figures: list[int | float | None] = []
    open_minute = minute_of(readings[0][0])
    for time, step in readings:
        while minute_of(time) > open_minute:
            figures.append(tally.close(open_minute + 60, time=time, increase=step, limit=limit))
            open_minute += 60
        tally.advance(time, step)
    return figures


def test_a_steady_counter_gives_each_minute_its_own_count() -> None:
    # 1,000 a second, read every second half a second off the boundaries: 60,000 a minute.
    readings: list[Reading] = [(T0 - 10.5 + k, 1_000) for k in range(200)]
    assert feed(Tally(whole=True), readings) == [None, 60_000, 60_000, 60_000]


@pytest.mark.parametrize("whole", [True, False])
def test_an_increase_straddling_a_boundary_is_split_by_time(whole: bool) -> None:
    readings: list[Reading] = [
        (T0 - 1.0, None),
        (T0 + 1.0, 20),  # 10 before T0, 10 after
        (T0 + 59.0, 300),
        (T0 + 63.0, 400),  # a quarter before T0 + 60
        (T0 + 119.0, 700),
        (T0 + 121.0, 20),
    ]
    assert feed(Tally(whole=whole), readings, limit=5.0) == [None, 10 + 300 + 100, 300 + 700 + 10]


def test_a_reading_on_the_boundary_belongs_wholly_to_the_minute_before() -> None:
    readings: list[Reading] = [(T0 - 90.0 + k, 3) for k in range(90)]
    readings += [(T0 + 0.0, 7), *((T0 + k, 10) for k in range(1, 62))]
    # T0 - 60 holds the 59 readings after its first and the 7 read at T0; T0 the 60 after T0.
    assert feed(Tally(whole=True), readings) == [None, 59 * 3 + 7, 60 * 10]


def test_whole_numbers_are_split_by_rounding_down_and_still_add_up() -> None:
    readings: list[Reading] = [(T0 - 30.5 + k, 5) for k in range(160)]
    # Each boundary falls halfway between readings: 2 of the 5 before it, 3 after.
    assert feed(Tally(whole=True), readings) == [None, 300, 300]


def test_a_lost_increase_leaves_its_minute_unknown() -> None:
    readings: list[Reading] = [(T0 - 30.5 + k, 5) for k in range(160)]
    readings[60] = (readings[60][0], None)  # a reset in the minute from T0
    assert feed(Tally(whole=True), readings) == [None, None, 300]


def test_readings_too_far_apart_across_a_boundary_leave_both_minutes_unknown() -> None:
    readings: list[Reading] = [(T0 - 30.5 + k, 5) for k in range(88)]
    readings += [(T0 + 63.5 + k, 5) for k in range(120)]  # 7 s without a reading at T0 + 60
    assert feed(Tally(whole=True), readings) == [None, None, None, 300]


def test_forgetting_starts_afresh() -> None:
    tally = Tally(whole=True)
    tally.advance(T0 + 1, None)
    tally.advance(T0 + 2, 5)
    tally.forget()
    assert (tally.last, tally.amount, tally.known) == (None, 0, False)
    assert feed(tally, [(T0 + 50.0, 5), (T0 + 61.0, 5)]) == [None]


@given(
    st.lists(st.tuples(st.floats(0.01, 3.0), st.integers(0, 10**12)), min_size=1, max_size=400),
    st.floats(0, 59.99),
)
def test_a_minute_counts_its_readings_and_at_most_the_two_straddling_its_ends(
    readings: list[tuple[float, int]], offset: float
) -> None:
    time, timed = T0 + offset, []
    for gap, step in readings:
        time += gap
        timed.append((time, step))
    figures = feed(Tally(whole=True), list(timed), limit=10.0)
    start = minute_of(timed[0][0])
    for k, figure in enumerate(figures):
        a, b = start + 60 * k, start + 60 * (k + 1)
        inside = [i for i, (t, _) in enumerate(timed) if a <= t < b]
        if figure is None or not inside:
            continue
        first, after = inside[0], inside[-1] + 1  # the readings straddling a and b
        lower = sum(timed[i][1] for i in inside[1:])
        upper = lower + timed[first][1] + (timed[after][1] if after < len(timed) else 0)
        assert lower <= figure <= upper
    assert sum(f for f in figures if f is not None) <= sum(step for _, step in timed)
