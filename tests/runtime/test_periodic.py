from __future__ import annotations

import asyncio
import itertools
import logging
import random
import threading
from collections.abc import Callable, Iterator

import pytest

from lens.runtime import errors
from lens.runtime.clock import FakeClock
from lens.runtime.periodic import START_SPREAD_MAX_SECONDS, Loop, LoopMetrics, PeriodicRunner
from lens.runtime.selfmetrics import SelfMetrics

Eventually = Callable[..., None]


class Harness:
    def __init__(self) -> None:
        self.clock = FakeClock(start_monotonic=1000.0, start_time=2_000_000.0)
        self.metrics = SelfMetrics(process=False)
        self.loop_metrics = LoopMetrics(self.metrics)
        self.fatal: list[BaseException] = []
        self.runners: list[PeriodicRunner] = []

    def runner(self, *loops: Loop, jitter: float = 0.0, seed: int = 0) -> PeriodicRunner:
        runner = PeriodicRunner(
            loops,
            clock=self.clock,
            metrics=self.loop_metrics,
            jitter_ratio=jitter,
            rng=random.Random(seed),
            on_fatal=lambda _loop, exc: self.fatal.append(exc),
        )
        asyncio.run(runner.start())
        self.runners.append(runner)
        return runner

    def sample(self, name: str, **labels: str) -> float | None:
        return self.metrics.registry.get_sample_value(name, labels)

    def stop(self) -> None:
        for runner in self.runners:
            asyncio.run(runner.stop())


@pytest.fixture
def harness() -> Iterator[Harness]:
    h = Harness()
    yield h
    h.stop()


def test_runs_at_start_and_then_every_interval(harness: Harness, eventually: Eventually) -> None:
    calls: list[float] = []
    runner = harness.runner(
        Loop(name="tick", interval_seconds=10, run=lambda: calls.append(harness.clock.monotonic()))
    )
    eventually(lambda: runner.runs("tick") == 1)
    eventually(lambda: harness.clock.waiters == 1)
    harness.clock.advance(5)
    eventually(lambda: harness.clock.waiters == 1)
    assert runner.runs("tick") == 1
    harness.clock.advance(5)
    eventually(lambda: runner.runs("tick") == 2)
    harness.clock.advance(10)
    eventually(lambda: runner.runs("tick") == 3)
    assert calls == [1000.0, 1010.0, 1020.0]
    assert harness.sample("lens_loop_runs_total", loop="tick", result="success") == 3
    assert harness.sample("lens_loop_last_success_timestamp_seconds", loop="tick") == 2_000_020.0
    assert harness.sample("lens_loop_duration_seconds_count", loop="tick") == 3


def test_a_loop_that_does_not_run_at_start_waits_one_interval(
    harness: Harness, eventually: Eventually
) -> None:
    runner = harness.runner(
        Loop(name="late", interval_seconds=30, run=lambda: None, run_at_start=False)
    )
    eventually(lambda: harness.clock.waiters == 1)
    harness.clock.advance(29)
    eventually(lambda: harness.clock.waiters == 1)
    assert runner.runs("late") == 0
    harness.clock.advance(1)
    eventually(lambda: runner.runs("late") == 1)


def test_a_gated_loop_runs_only_in_the_slots_where_its_condition_holds(
    harness: Harness, eventually: Eventually
) -> None:
    leading = False
    asked: list[float] = []
    calls: list[float] = []

    def when() -> bool:
        asked.append(harness.clock.monotonic())
        return leading

    runner = harness.runner(
        Loop(
            name="leader-only",
            interval_seconds=10,
            run=lambda: calls.append(harness.clock.monotonic()),
            when=when,
        )
    )
    eventually(lambda: len(asked) == 1)  # at start: not leading
    harness.clock.advance(10)
    eventually(lambda: len(asked) == 2)
    leading = True
    harness.clock.advance(10)
    eventually(lambda: runner.runs("leader-only") == 1)
    leading = False
    harness.clock.advance(10)
    eventually(lambda: len(asked) == 4)
    assert calls == [1020.0] and runner.runs("leader-only") == 1
    assert harness.sample("lens_loop_skipped_total", loop="leader-only") is None


def test_an_overrunning_run_never_overlaps_and_skips_its_missed_slots(
    harness: Harness, eventually: Eventually
) -> None:
    release = threading.Event()
    active: list[int] = []
    running = [0]

    def body() -> None:
        running[0] += 1
        active.append(running[0])
        release.wait(5)
        running[0] -= 1

    runner = harness.runner(Loop(name="slow", interval_seconds=10, run=body))
    eventually(lambda: len(active) == 1)
    harness.clock.advance(35)  # three and a half intervals pass during the first run
    release.set()
    eventually(lambda: runner.runs("slow") == 1)
    eventually(lambda: harness.clock.waiters == 1)
    assert harness.sample("lens_loop_skipped_total", loop="slow") == 3
    harness.clock.advance(4)
    eventually(lambda: harness.clock.waiters == 1)
    assert runner.runs("slow") == 1
    harness.clock.advance(1)  # the next slot on the original grid: 1040
    eventually(lambda: runner.runs("slow") == 2)
    assert max(active) == 1


def test_busiest_names_the_loop_whose_runs_took_most_of_their_interval_since_last_asked(
    harness: Harness, eventually: Eventually
) -> None:
    release = threading.Event()
    entered = threading.Event()

    def slow() -> None:
        entered.set()
        release.wait(5)
        release.clear()

    runner = harness.runner(
        Loop(name="slow", interval_seconds=20, run=slow),
        Loop(name="quick", interval_seconds=10, run=lambda: None),
    )
    assert entered.wait(2)
    eventually(lambda: runner.runs("quick") == 1)
    harness.clock.advance(5)  # the run going on: a quarter of its interval so far
    assert runner.busiest() == ("slow", 0.25)
    harness.clock.advance(25)  # it ends at 1030: one and a half intervals, two slots skipped
    release.set()
    eventually(lambda: runner.runs("slow") == 1)
    assert runner.busiest() == ("slow", 1.5)
    assert runner.busiest() == ("", 0.0), "asked again at once: nothing ran since"
    entered.clear()
    eventually(lambda: harness.clock.waiters == 2)
    harness.clock.advance(10)  # 1040: the next slot; quick runs too, in no time
    assert entered.wait(2)
    eventually(lambda: runner.runs("quick") == 3)
    harness.clock.advance(2)
    release.set()
    eventually(lambda: runner.runs("slow") == 2)
    assert runner.busiest() == ("slow", 0.1)


def test_stopping_is_set_once_the_runner_is_asked_to_stop(harness: Harness) -> None:
    runner = harness.runner(Loop(name="tick", interval_seconds=10, run=lambda: None))
    assert not runner.stopping.is_set()
    asyncio.run(runner.stop())
    assert runner.stopping.is_set()


def test_a_stuck_loop_does_not_starve_the_others(harness: Harness, eventually: Eventually) -> None:
    stuck = threading.Event()
    release = threading.Event()

    def hang() -> None:
        stuck.set()
        release.wait(10)

    try:
        runner = harness.runner(
            Loop(name="stuck", interval_seconds=1, run=hang, stall_seconds=5),
            Loop(name="fast", interval_seconds=1, run=lambda: None),
        )
        assert stuck.wait(2)
        for expected in range(1, 8):
            eventually(lambda e=expected: runner.runs("fast") == e)
            eventually(lambda: harness.clock.waiters == 1)
            harness.clock.advance(1)
        assert runner.runs("stuck") == 0
        assert runner.stalled() == "loops stalled: stuck"
    finally:
        release.set()
    eventually(lambda: runner.runs("stuck") == 1)
    assert runner.stalled() is None


def test_errors_are_contained_counted_and_logged_on_change(
    harness: Harness, eventually: Eventually, caplog: pytest.LogCaptureFixture
) -> None:
    outcomes = iter([ValueError("bad"), ValueError("bad again"), None])

    def flaky() -> None:
        outcome = next(outcomes)
        if outcome is not None:
            raise outcome

    caplog.set_level(logging.DEBUG, logger="lens.runtime.periodic")
    runner = harness.runner(Loop(name="flaky", interval_seconds=1, run=flaky))
    for expected in (1, 2, 3):
        eventually(lambda e=expected: runner.runs("flaky") == e)
        eventually(lambda: harness.clock.waiters == 1)
        harness.clock.advance(1)
    assert harness.sample("lens_loop_runs_total", loop="flaky", result="error") == 2
    assert harness.sample("lens_loop_runs_total", loop="flaky", result="success") == 1
    messages = [(r.levelname, r.getMessage()) for r in caplog.records]
    assert messages == [
        ("ERROR", "loop run failed"),
        ("DEBUG", "loop run failed again"),
        ("INFO", "loop recovered"),
    ]
    assert harness.fatal == []


def test_a_fatal_error_ends_the_loop_and_is_reported(
    harness: Harness, eventually: Eventually
) -> None:
    def fatal() -> None:
        raise errors.FatalError("cannot go on")

    runner = harness.runner(Loop(name="doomed", interval_seconds=1, run=fatal))
    eventually(lambda: len(harness.fatal) == 1)
    assert isinstance(harness.fatal[0], errors.FatalError)
    eventually(lambda: harness.clock.waiters == 0)
    harness.clock.advance(5)
    assert runner.runs("doomed") == 1
    assert harness.sample("lens_loop_runs_total", loop="doomed", result="error") == 1


def test_jitter_spreads_runs_within_the_ratio(harness: Harness, eventually: Eventually) -> None:
    times: list[float] = []
    runner = harness.runner(
        Loop(
            name="spread", interval_seconds=100, run=lambda: times.append(harness.clock.monotonic())
        ),
        jitter=0.1,
        seed=7,
    )
    while len(times) < 4:
        eventually(lambda: harness.clock.waiters == 1)
        seen = runner.runs("spread")
        harness.clock.advance(1)
        eventually(lambda s=seen: runner.runs("spread") in (s, s + 1))
    assert 1000 <= times[0] <= 1011
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert all(89 <= gap <= 111 for gap in gaps), gaps
    assert len(set(gaps)) > 1, "jitter should vary the gaps"


def test_a_long_loop_that_runs_at_start_runs_within_seconds_of_it(
    harness: Harness, eventually: Eventually
) -> None:
    runner = harness.runner(
        Loop(name="hourly", interval_seconds=3600, run=lambda: None), jitter=0.1, seed=3
    )
    eventually(lambda: harness.clock.waiters == 1)
    harness.clock.advance(START_SPREAD_MAX_SECONDS)
    eventually(lambda: runner.runs("hourly") == 1)


@pytest.mark.parametrize(
    ("loops", "jitter", "problem"),
    [
        ((Loop(name="a", interval_seconds=1, run=lambda: None),) * 2, 0.1, "unique"),
        ((Loop(name="a", interval_seconds=0, run=lambda: None),), 0.1, "positive"),
        ((), 0.6, "jitter_ratio"),
    ],
)
def test_bad_definitions_fail_at_construction(
    loops: tuple[Loop, ...], jitter: float, problem: str
) -> None:
    with pytest.raises(ValueError, match=problem):
        PeriodicRunner(
            loops,
            clock=FakeClock(),
            metrics=LoopMetrics(SelfMetrics(process=False)),
            jitter_ratio=jitter,
        )


def test_stall_threshold_defaults_to_ten_intervals_and_at_least_a_minute() -> None:
    assert Loop(name="a", interval_seconds=1, run=lambda: None).stall_after == 60
    assert Loop(name="a", interval_seconds=30, run=lambda: None).stall_after == 300
    assert Loop(name="a", interval_seconds=1, run=lambda: None, stall_seconds=5).stall_after == 5


def test_loops_can_be_added_before_the_start_only(eventually: Eventually) -> None:
    runner = PeriodicRunner(
        (Loop(name="a", interval_seconds=1, run=lambda: None),),
        clock=FakeClock(),
        metrics=LoopMetrics(SelfMetrics(process=False)),
        jitter_ratio=0,
    )
    ran = threading.Event()
    runner.add(Loop(name="b", interval_seconds=1, run=ran.set))
    with pytest.raises(ValueError, match="b is taken"):
        runner.add(Loop(name="b", interval_seconds=1, run=lambda: None))
    with pytest.raises(ValueError, match="positive"):
        runner.add(Loop(name="c", interval_seconds=0, run=lambda: None))
    asyncio.run(runner.start())
    try:
        assert ran.wait(5)
        eventually(lambda: runner.runs("b") == 1)
        with pytest.raises(RuntimeError, match="fixed once the runner has started"):
            runner.add(Loop(name="d", interval_seconds=1, run=lambda: None))
    finally:
        asyncio.run(runner.stop())
