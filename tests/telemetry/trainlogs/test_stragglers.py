"""Stragglers: a source of a run above the run's median by more than the share for N judged
intervals in a row is flagged from the first of them, and recovers after N intervals under it;
nothing is judged with fewer than three sources; memory stays bounded."""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lens.runtime.selfmetrics import SelfMetrics
from lens.telemetry.trainlogs.stragglers import (
    Straggle,
    StragglerGauge,
    StragglerSettings,
    StragglerTracker,
)

T0 = 1_787_400_000.0  # 2026-08-22 11:20:00 UTC, a multiple of 60
LENGTH = 60.0
SETTINGS = StragglerSettings(interval_seconds=LENGTH, lag_seconds=10.0, intervals=3)


def _utc(seconds: float) -> datetime.datetime:
    return datetime.datetime.fromtimestamp(seconds, datetime.UTC)


def _feed(
    tracker: StragglerTracker, interval: int, times: dict[str, float], *, run: int = 1
) -> list[Straggle]:
    """Each source's iteration times in interval `interval` (two lines each), then the
    evaluation once that interval has closed."""
    for offset in (5.0, 35.0):
        for source, milliseconds in times.items():
            tracker.observe(
                workload_uid="w1",
                run=run,
                source=source,
                node=f"node-{source}",
                at=T0 + interval * LENGTH + offset,
                iteration_ms=milliseconds,
            )
    return tracker.evaluate(T0 + (interval + 1) * LENGTH + 10.0)


def _even(sources: int, milliseconds: float = 1000.0) -> dict[str, float]:
    return {f"rank-{r}": milliseconds for r in range(sources)}


@given(
    sources=st.integers(3, 16),
    milliseconds=st.floats(0.001, 1e7, allow_nan=False),
    intervals=st.integers(1, 12),
)
def test_sources_reporting_equal_times_are_never_flagged(
    sources: int, milliseconds: float, intervals: int
) -> None:
    tracker = StragglerTracker(SETTINGS)
    for interval in range(intervals):
        assert _feed(tracker, interval, _even(sources, milliseconds)) == []
    assert tracker.flagged() == []


@given(
    sources=st.integers(3, 16),
    slow=st.data(),
    share=st.floats(0.11, 3.0),
    needed=st.integers(1, 5),
)
def test_one_source_slower_for_n_intervals_is_flagged_and_only_it(
    sources: int, slow: st.DataObject, share: float, needed: int
) -> None:
    tracker = StragglerTracker(dataclasses.replace(SETTINGS, intervals=needed))
    laggard = f"rank-{slow.draw(st.integers(0, sources - 1))}"
    times = {**_even(sources), laggard: 1000.0 * (1 + share)}
    for interval in range(needed - 1):
        assert _feed(tracker, interval, times) == []
    (flag,) = _feed(tracker, needed - 1, times)
    assert (flag.source, flag.node, flag.open, flag.intervals) == (
        laggard,
        f"node-{laggard}",
        True,
        needed,
    )
    assert flag.started_at == _utc(T0)  # from the first interval above
    assert flag.ended_at == _utc(T0 + needed * LENGTH)
    assert flag.mean_share_above_median == pytest.approx(share)
    assert tracker.flagged() == [flag]


def test_a_flag_goes_on_while_above_and_ends_after_n_intervals_under() -> None:
    tracker = StragglerTracker(SETTINGS)
    slow = {**_even(4), "rank-2": 1200.0}
    for interval in range(2):
        assert _feed(tracker, interval, slow) == []
    (began,) = _feed(tracker, 2, slow)
    (went_on,) = _feed(tracker, 3, {**_even(4), "rank-2": 1500.0})
    assert went_on.started_at == began.started_at == _utc(T0)
    assert (went_on.intervals, went_on.ended_at) == (4, _utc(T0 + 4 * LENGTH))
    assert went_on.mean_share_above_median == pytest.approx((0.2 * 3 + 0.5) / 4)
    assert went_on.peak_share_above_median == pytest.approx(0.5)
    assert _feed(tracker, 4, _even(4)) == []  # under once: still flagged
    assert _feed(tracker, 5, slow)[0].intervals == 5  # above again: the same flag
    assert _feed(tracker, 6, _even(4)) == []
    assert _feed(tracker, 7, _even(4)) == []
    (ended,) = _feed(tracker, 8, _even(4))
    assert (ended.open, ended.started_at, ended.ended_at) == (
        False,
        _utc(T0),
        _utc(T0 + 6 * LENGTH),  # the end of the last interval above
    )
    assert tracker.flagged() == []


def test_ten_percent_above_is_not_more_than_ten_percent() -> None:
    tracker = StragglerTracker(SETTINGS)
    for interval in range(5):
        assert _feed(tracker, interval, {**_even(3, 1000.0), "rank-0": 1100.0}) == []


def test_with_fewer_than_three_sources_nothing_is_judged() -> None:
    tracker = StragglerTracker(SETTINGS)
    for interval in range(5):
        assert _feed(tracker, interval, {"rank-0": 1000.0, "rank-1": 3000.0}) == []
    with pytest.raises(ValueError, match="at least 3"):
        StragglerSettings(min_sources=2)


def test_intervals_without_the_source_or_without_enough_sources_keep_its_streak() -> None:
    tracker = StragglerTracker(SETTINGS)
    slow = {**_even(4), "rank-3": 1300.0}
    assert _feed(tracker, 0, slow) == []
    assert _feed(tracker, 1, _even(3)) == []  # rank-3 sent nothing
    assert _feed(tracker, 2, {"rank-0": 1000.0, "rank-3": 1300.0}) == []  # two: not judged
    assert _feed(tracker, 3, slow) == []
    (flag,) = _feed(tracker, 4, slow)
    assert (flag.source, flag.intervals, flag.started_at) == ("rank-3", 3, _utc(T0))


def test_each_run_is_judged_against_its_own_median() -> None:
    tracker = StragglerTracker(SETTINGS)
    for interval in range(3):
        for run, milliseconds in ((1, 1000.0), (2, 5000.0), (3, 1000.0)):
            for source in ("rank-0", "rank-1", "rank-2"):
                at = T0 + interval * LENGTH + 5.0
                slow = run == 3 and source == "rank-0"
                tracker.observe(
                    workload_uid="w1",
                    run=run,
                    source=source,
                    node="n",
                    at=at,
                    iteration_ms=1300.0 if slow else milliseconds,
                )
        changes = tracker.evaluate(T0 + (interval + 1) * LENGTH + 10.0)
    assert [(c.run, c.source) for c in changes] == [(3, "rank-0")] and tracker.runs == 3


def test_figures_late_or_not_times_are_counted_and_left_out() -> None:
    tracker = StragglerTracker(SETTINGS)
    _feed(tracker, 0, _even(3))
    late = tracker.observe(
        workload_uid="w1", run=1, source="rank-0", node="n", at=T0 + 30, iteration_ms=900.0
    )
    assert late is False and tracker.dropped == 1
    for bad in (0.0, -5.0, float("nan"), float("inf")):
        assert not tracker.observe(
            workload_uid="w1", run=1, source="rank-0", node="n", at=T0 + 90, iteration_ms=bad
        )
    assert tracker.rejected == 4


def test_runs_sources_and_intervals_are_bounded() -> None:
    settings = dataclasses.replace(
        SETTINGS, max_runs=2, max_sources_per_run=3, max_open_intervals=2
    )
    tracker = StragglerTracker(settings)
    for run in (1, 2, 3):
        tracker.observe(workload_uid="w", run=run, source="r0", node="n", at=T0, iteration_ms=1.0)
    for source in ("r1", "r2", "r3"):
        tracker.observe(workload_uid="w", run=1, source=source, node="n", at=T0, iteration_ms=1.0)
    for interval in (1, 2):
        tracker.observe(
            workload_uid="w",
            run=1,
            source="r0",
            node="n",
            at=T0 + interval * LENGTH,
            iteration_ms=1,
        )
    assert tracker.runs == 2 and tracker.dropped == 3  # run 3, source r3, a third interval


def test_quiet_sources_and_runs_are_forgotten_and_their_flags_closed() -> None:
    tracker = StragglerTracker(dataclasses.replace(SETTINGS, forget_after_seconds=600.0))
    slow = {**_even(4), "rank-1": 2000.0}
    for interval in range(3):
        _feed(tracker, interval, slow, run=1)
    _feed(tracker, 3, _even(3), run=2)
    assert [f.source for f in tracker.flagged()] == ["rank-1"]
    (closed,) = tracker.evaluate(T0 + 3 * LENGTH + 601.0)  # run 1 quiet since T0 + 155
    assert (closed.source, closed.open, closed.ended_at) == ("rank-1", False, _utc(T0 + 180))
    assert tracker.runs == 1 and tracker.flagged() == []
    assert tracker.evaluate(T0 + 4 * LENGTH + 700.0) == [] and tracker.runs == 0


def test_a_flag_stored_open_is_carried_on_and_recovers() -> None:
    stored = Straggle(
        workload_uid="w1",
        run=1,
        source="rank-2",
        node="node-rank-2",
        started_at=_utc(T0 - 600),
        ended_at=_utc(T0),
        intervals=5,
        mean_share_above_median=0.3,
        peak_share_above_median=0.4,
        open=True,
    )
    tracker = StragglerTracker(SETTINGS)
    tracker.resume(stored)
    assert tracker.flagged() == [stored]
    (went_on,) = _feed(tracker, 0, {**_even(3), "rank-2": 1500.0})
    assert (went_on.started_at, went_on.intervals) == (stored.started_at, 6)
    assert went_on.mean_share_above_median == pytest.approx((0.3 * 5 + 0.5) / 6)
    for interval in (1, 2):
        assert _feed(tracker, interval, _even(3)) == []
    (ended,) = _feed(tracker, 3, _even(3))
    assert (ended.open, ended.ended_at) == (False, _utc(T0 + LENGTH))


def test_the_gauge_shows_open_flags_and_drops_ended_ones() -> None:
    metrics = SelfMetrics(process=False)
    gauge = StragglerGauge(metrics)
    tracker = StragglerTracker(SETTINGS)
    slow = {**_even(3), "rank-0": 1500.0}
    labels = {"workload_uid": "w1", "run": "1", "source": "rank-0", "node": "node-rank-0"}
    for interval in range(3):
        gauge.show(_feed(tracker, interval, slow))
    assert metrics.registry.get_sample_value("lens_training_straggler", labels) == 1
    for interval in range(3, 6):
        gauge.show(_feed(tracker, interval, _even(3)))
    assert metrics.registry.get_sample_value("lens_training_straggler", labels) is None
    never_shown = dataclasses.replace(slow_flag(), workload_uid="w9", open=False)
    gauge.show([never_shown])  # a flag forgotten before it was shown: nothing to remove


def slow_flag() -> Straggle:
    return Straggle(
        workload_uid="w1",
        run=1,
        source="rank-0",
        node="n",
        started_at=_utc(T0),
        ended_at=_utc(T0 + LENGTH),
        intervals=1,
        mean_share_above_median=0.5,
        peak_share_above_median=0.5,
        open=True,
    )


@pytest.mark.parametrize(
    "bad",
    [
        lambda: StragglerSettings(interval_seconds=0.0),
        lambda: StragglerSettings(lag_seconds=-1.0),
        lambda: StragglerSettings(share_above_median=0.0),
        lambda: StragglerSettings(intervals=0),
        lambda: StragglerSettings(max_runs=0),
        lambda: StragglerSettings(forget_after_seconds=60.0),
    ],
)
def test_settings_that_cannot_work_are_refused(bad: Callable[[], StragglerSettings]) -> None:
    with pytest.raises(ValueError):
        bad()
