"""Stragglers of multi-node training: a source (a rank or a pod) of one run whose iteration time
stays more than a share above the median of the run's sources for N intervals in a row.

Fed iteration times as log lines arrive (`observe`), the tracker averages each source's over
intervals of a set length. `evaluate(now)` judges every interval that closed (its end `lag`
before now, so that lines shipped late still count): a source above the median by more than the
share for N judged intervals in a row is flagged from the first of them; a flagged one under it
for N in a row has recovered. An interval is judged only when at least three sources of the run
report in it: with two, the median is their midpoint and a slow source drags it up as far as it
lies above it, so neither is ever "more above the median" than the other by the share's worth
alone; from three, the median is a source's own time, which one slow source cannot move. An
interval without enough sources, or without a figure from some source, leaves streaks as they
were: only intervals with evidence count.

Bounded: runs, sources per run and open intervals per run are capped (figures past a cap are
dropped and counted), and a source or run not heard from for `forget_after_seconds` is
forgotten, its flag closed. stragglerstore.py stores the flags; StragglerGauge shows them.
"""

from __future__ import annotations

import dataclasses
import datetime
import math
import statistics
from collections.abc import Iterable

from lens.runtime.selfmetrics import SelfMetrics


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class StragglerSettings:
    """How stragglers are found; every bound of the tracker's memory."""

    interval_seconds: float = 60.0
    lag_seconds: float = 30.0  # an interval is judged this long after its end
    share_above_median: float = 0.10  # 0.10: more than 10 % above the run's median
    intervals: int = 3  # judged intervals in a row to flag, and to recover
    min_sources: int = 3
    forget_after_seconds: float = 1800.0
    max_runs: int = 2000
    max_sources_per_run: int = 4096
    max_open_intervals: int = 16  # per run: intervals with figures not judged yet

    def __post_init__(self) -> None:
        if not self.interval_seconds > 0 or not self.lag_seconds >= 0:
            raise ValueError("interval_seconds must be positive and lag_seconds not negative")
        if not self.share_above_median > 0 or self.intervals < 1:
            raise ValueError("share_above_median must be positive and intervals at least 1")
        if self.min_sources < 3:
            raise ValueError("min_sources must be at least 3: with two the median moves with both")
        if min(self.max_runs, self.max_sources_per_run, self.max_open_intervals) < 1:
            raise ValueError("the bounds must be at least 1")
        if self.forget_after_seconds <= self.interval_seconds + self.lag_seconds:
            # else a source could be forgotten with figures in an interval not judged yet
            raise ValueError("forget_after_seconds must exceed interval_seconds + lag_seconds")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Straggle:
    """A source's stretch flagged as a straggler: [started_at, ended_at) covers the intervals
    from the first of those that flagged it to the last it was above the median in; `open`
    while still flagged. The shares are of the intervals above the median (0.2: 20 %)."""

    workload_uid: str
    run: int
    source: str
    node: str
    started_at: datetime.datetime
    ended_at: datetime.datetime
    intervals: int
    mean_share_above_median: float
    peak_share_above_median: float
    open: bool


@dataclasses.dataclass(slots=True)
class _Flag:
    node: str
    started: float
    ended: float
    intervals: int
    share_sum: float
    peak: float


@dataclasses.dataclass(slots=True)
class _Source:
    node: str
    last_seen: float
    above: int = 0  # judged intervals above the median in a row
    below: int = 0
    streak: _Flag | None = None  # the stretch above under way, flagged or not yet
    flag: _Flag | None = None


@dataclasses.dataclass(slots=True)
class _Run:
    last_seen: float
    sources: dict[str, _Source] = dataclasses.field(default_factory=dict)
    # interval index -> source -> [sum of iteration ms, figures]
    open: dict[int, dict[str, list[float]]] = dataclasses.field(default_factory=dict)


RunKey = tuple[str, int]  # workload uid, run serial
Changed = dict[tuple[RunKey, str, float], Straggle]


class StragglerTracker:
    """Iteration times by run and source in; the flags that began, went on or ended out."""

    def __init__(self, settings: StragglerSettings | None = None) -> None:
        self._settings = settings or StragglerSettings()
        self._runs: dict[RunKey, _Run] = {}
        self._judged_through: int | None = None  # intervals before this index are judged
        self.dropped = 0  # figures past a bound or for an interval already judged
        self.rejected = 0  # figures that are no iteration time (not positive, not finite)

    @property
    def runs(self) -> int:
        return len(self._runs)

    def observe(
        self, *, workload_uid: str, run: int, source: str, node: str, at: float, iteration_ms: float
    ) -> bool:
        """Take one iteration time of `source` (a rank or a pod of the run) at `at`, Unix
        seconds on the clock `evaluate` is given; False when it is rejected or dropped (late,
        or past a bound), and counted."""
        if not (math.isfinite(at) and math.isfinite(iteration_ms) and iteration_ms > 0):
            self.rejected += 1
            return False
        index = math.floor(at / self._settings.interval_seconds)
        late = self._judged_through is not None and index < self._judged_through
        figures = (
            None
            if late
            else self._slot(
                workload_uid=workload_uid, run=run, source=source, node=node, at=at, index=index
            )
        )
        if figures is None:
            self.dropped += 1
            return False
        total = figures.setdefault(source, [0.0, 0])
        total[0] += iteration_ms
        total[1] += 1
        return True

    def _slot(
        self, *, workload_uid: str, run: int, source: str, node: str, at: float, index: int
    ) -> dict[str, list[float]] | None:
        """The figures of the run's interval `index`, the run and source known; None past a
        bound."""
        tracked = self._run(workload_uid=workload_uid, run=run, at=at)
        if tracked is None:
            return None
        figures = self._interval(tracked, index)
        if figures is None or self._source(tracked, source=source, node=node, at=at) is None:
            return None
        tracked.last_seen = max(tracked.last_seen, at)
        return figures

    def resume(self, straggle: Straggle) -> None:
        """Carry on a flag stored as open (after a restart or a change of leader)."""
        seen = straggle.ended_at.timestamp()
        tracked = self._run(workload_uid=straggle.workload_uid, run=straggle.run, at=seen)
        state = None
        if tracked is not None:
            state = self._source(tracked, source=straggle.source, node=straggle.node, at=seen)
        if state is None:
            self.dropped += 1
            return
        state.above = self._settings.intervals
        state.flag = state.streak = _Flag(
            node=straggle.node,
            started=straggle.started_at.timestamp(),
            ended=seen,
            intervals=straggle.intervals,
            share_sum=straggle.mean_share_above_median * straggle.intervals,
            peak=straggle.peak_share_above_median,
        )

    def evaluate(self, now: float) -> list[Straggle]:
        """Judge every interval closed by `now` (Unix seconds), forget what went quiet, and
        return each flag that began, went on or ended, in its latest state."""
        length = self._settings.interval_seconds
        through = math.floor((now - self._settings.lag_seconds) / length)
        changed: Changed = {}
        for key, tracked in self._runs.items():
            for index in sorted(i for i in tracked.open if i < through):
                self._judge(key, tracked, index=index, changed=changed)
        if self._judged_through is None or through > self._judged_through:
            self._judged_through = through
        self._forget(now - self._settings.forget_after_seconds, changed)
        return list(changed.values())

    def flagged(self) -> list[Straggle]:
        """Every flag open now."""
        return [
            _straggle(key, source, flag=state.flag, open=True)
            for key, tracked in self._runs.items()
            for source, state in tracked.sources.items()
            if state.flag is not None
        ]

    def _run(self, *, workload_uid: str, run: int, at: float) -> _Run | None:
        key = (workload_uid, run)
        tracked = self._runs.get(key)
        if tracked is None and len(self._runs) < self._settings.max_runs:
            tracked = self._runs[key] = _Run(last_seen=at)
        return tracked

    def _interval(self, tracked: _Run, index: int) -> dict[str, list[float]] | None:
        figures = tracked.open.get(index)
        if figures is None and len(tracked.open) < self._settings.max_open_intervals:
            figures = tracked.open[index] = {}
        return figures

    def _source(self, tracked: _Run, *, source: str, node: str, at: float) -> _Source | None:
        state = tracked.sources.get(source)
        if state is None and len(tracked.sources) < self._settings.max_sources_per_run:
            state = tracked.sources[source] = _Source(node=node, last_seen=at)
        if state is not None:
            state.node = node or state.node
            state.last_seen = max(state.last_seen, at)
        return state

    def _judge(self, key: RunKey, tracked: _Run, *, index: int, changed: Changed) -> None:
        figures = tracked.open.pop(index)
        if len(figures) < self._settings.min_sources:
            return
        means = {source: total / count for source, (total, count) in figures.items()}
        median = statistics.median(means.values())
        length = self._settings.interval_seconds
        start, end = index * length, (index + 1) * length
        for source, mean in means.items():
            state = tracked.sources.get(source)
            if state is None:
                continue
            # "More than 10 % above" by the product, so that 1100 ms over 1000 ms is not
            # (1100 / 1000 - 1 is 0.10000000000000009 in floating point).
            if mean > median * (1.0 + self._settings.share_above_median):
                share = mean / median - 1.0
                flag = self._above(state, start=start, end=end, share=share)
                if flag is not None:
                    changed[key, source, flag.started] = _straggle(
                        key, source, flag=flag, open=True
                    )
            else:
                flag = self._under(state)
                if flag is not None:
                    changed[key, source, flag.started] = _straggle(
                        key, source, flag=flag, open=False
                    )

    def _above(self, state: _Source, *, start: float, end: float, share: float) -> _Flag | None:
        """An interval above the median: the streak grows; the flag it makes or carries on."""
        state.above, state.below = state.above + 1, 0
        streak = state.streak
        if streak is None:
            streak = state.streak = _Flag(
                node=state.node, started=start, ended=end, intervals=0, share_sum=0.0, peak=0.0
            )
        streak.ended = end
        streak.intervals += 1
        streak.share_sum += share
        streak.peak = max(streak.peak, share)
        if state.flag is None and state.above >= self._settings.intervals:
            state.flag = streak
        elif state.flag is not None and state.flag is not streak:
            # Above again after fewer than N intervals under: the same flag goes on.
            flag = state.flag
            flag.ended, flag.intervals = end, flag.intervals + 1
            flag.share_sum += share
            flag.peak = max(flag.peak, share)
            state.streak = flag
        return state.flag

    def _under(self, state: _Source) -> _Flag | None:
        """An interval not above it: the streak ends; the flag that ends with it, if any."""
        state.above, state.below, state.streak = 0, state.below + 1, None
        if state.flag is None or state.below < self._settings.intervals:
            return None
        ended, state.flag = state.flag, None
        return ended

    def _forget(self, before: float, changed: Changed) -> None:
        for key in list(self._runs):
            tracked = self._runs[key]
            quiet = [s for s, state in tracked.sources.items() if state.last_seen < before]
            if tracked.last_seen < before:
                quiet = list(tracked.sources)
            for source in quiet:
                flag = tracked.sources.pop(source).flag
                if flag is not None:
                    changed[key, source, flag.started] = _straggle(
                        key, source, flag=flag, open=False
                    )
            if tracked.last_seen < before:
                del self._runs[key]


def _straggle(key: RunKey, source: str, *, flag: _Flag, open: bool) -> Straggle:
    return Straggle(
        workload_uid=key[0],
        run=key[1],
        source=source,
        node=flag.node,
        started_at=datetime.datetime.fromtimestamp(flag.started, datetime.UTC),
        ended_at=datetime.datetime.fromtimestamp(flag.ended, datetime.UTC),
        intervals=flag.intervals,
        mean_share_above_median=flag.share_sum / flag.intervals if flag.intervals else 0.0,
        peak_share_above_median=flag.peak,
        open=open,
    )


class StragglerGauge:
    """`lens_training_straggler` = 1 for each source flagged now; the series goes when the
    flag ends (recovered or forgotten)."""

    def __init__(self, metrics: SelfMetrics) -> None:
        self._gauge = metrics.gauge(
            "lens_training_straggler",
            "1 for each rank or pod of a training run whose iteration time stays above the "
            "run's median by more than the configured share for the configured intervals.",
            ("workload_uid", "run", "source", "node"),
        )
        self._shown: set[tuple[str, str, str, str]] = set()

    def show(self, changes: Iterable[Straggle]) -> None:
        for straggle in changes:
            labels = (straggle.workload_uid, str(straggle.run), straggle.source, straggle.node)
            if straggle.open:
                self._gauge.labels(*labels).set(1)
                self._shown.add(labels)
            elif labels in self._shown:
                self._gauge.remove(*labels)
                self._shown.discard(labels)
