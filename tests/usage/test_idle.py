"""Idle intervals from held GPU-minutes: a window of minutes under the floor opens one, it grows
while they stay under, and anything else — a busy minute, an unknown one, a gap — ends it."""

from __future__ import annotations

import datetime

import pytest

from lens.usage.idle import MINUTE, HeldMinute, Holding, IdleInterval, IdleTracker

T0 = datetime.datetime(2026, 11, 24, 10, 0, tzinfo=datetime.UTC)
POD = Holding(node="n1", gpu_uuid="GPU-0", pod_uid="u1", namespace="ml", pod_name="train-0")
OTHER = Holding(node="n1", gpu_uuid="GPU-1", pod_uid="u2", namespace="ml", pod_name="train-1")


def _minutes(holding: Holding, start: int, loads: list[float | None]) -> list[HeldMinute]:
    return [
        HeldMinute(holding=holding, minute=T0 + (start + i) * MINUTE, utilization=load)
        for i, load in enumerate(loads)
    ]


def _through(minute: int) -> datetime.datetime:
    return T0 + minute * MINUTE


def test_a_window_under_the_floor_opens_an_interval_that_grows_and_ends_when_busy() -> None:
    tracker = IdleTracker(floor=0.05, window_minutes=3)
    assert tracker.feed(_minutes(POD, 0, [0.01, 0.02]), through=_through(2)) == []
    (opened,) = tracker.feed(_minutes(POD, 2, [0.03]), through=_through(3))
    assert (opened.start, opened.end, opened.minutes, opened.open) == (T0, _through(3), 3, True)
    assert opened.utilization_mean == pytest.approx(0.02)
    (grown,) = tracker.feed(_minutes(POD, 3, [0.0]), through=_through(4))
    assert (grown.end, grown.minutes, grown.open) == (_through(4), 4, True)
    assert tracker.open_intervals() == [grown]
    (ended,) = tracker.feed(_minutes(POD, 4, [0.5]), through=_through(5))
    assert (ended.end, ended.minutes, ended.open) == (_through(4), 4, False)
    assert tracker.open_intervals() == []


@pytest.mark.parametrize(
    "interruption",
    [[0.2], [None]],  # busy, or unknown: never counted as idle
)
def test_a_stretch_short_of_the_window_never_becomes_an_interval(
    interruption: list[float | None],
) -> None:
    tracker = IdleTracker(floor=0.05, window_minutes=3)
    loads: list[float | None] = [0.0, 0.0, *interruption, 0.0, 0.0]
    assert tracker.feed(_minutes(POD, 0, loads), through=_through(5)) == []


def test_a_missing_minute_ends_the_interval_and_another_one_may_begin() -> None:
    tracker = IdleTracker(floor=0.05, window_minutes=2)
    first = _minutes(POD, 0, [0.0, 0.0, 0.0])
    second = _minutes(POD, 4, [0.0, 0.0])  # minute 3 missing: not held, or not reported
    changed = tracker.feed(first + second, through=_through(6))
    assert [(i.start, i.end, i.open) for i in changed] == [
        (T0, _through(3), False),
        (T0 + 4 * MINUTE, _through(6), True),
    ]


def test_each_call_reports_an_interval_that_ended_by_its_gap() -> None:
    tracker = IdleTracker(floor=0.05, window_minutes=2)
    tracker.feed(_minutes(POD, 0, [0.0, 0.0]), through=_through(2))
    (ended,) = tracker.feed([], through=_through(3))  # no minute held since
    assert (ended.start, ended.end, ended.open) == (T0, _through(2), False)


def test_holdings_are_followed_apart_and_an_open_interval_resumes_after_a_restart() -> None:
    tracker = IdleTracker(floor=0.05, window_minutes=2)
    minutes = sorted(
        _minutes(POD, 0, [0.0, 0.0]) + _minutes(OTHER, 0, [0.9, 0.9]), key=lambda m: m.minute
    )
    (opened,) = tracker.feed(minutes, through=_through(2))
    assert opened.holding == POD
    restarted = IdleTracker(floor=0.05, window_minutes=2)
    restarted.resume(opened)
    (grown,) = restarted.feed(_minutes(POD, 2, [0.01]), through=_through(3))
    assert (grown.start, grown.minutes, grown.open) == (T0, 3, True)
    assert isinstance(grown, IdleInterval)


def test_a_window_of_none_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        IdleTracker(floor=0.05, window_minutes=0)
