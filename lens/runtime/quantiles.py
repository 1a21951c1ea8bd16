"""A summary with quantiles over a sliding window, as client_golang's summaries report them (the
original's `log_consume_latency_seconds`): prometheus_client's Summary has only a count and a sum.

Each label set keeps its latest observations of the last `max_age_seconds` (at most
`max_samples` of them, the newest); a scrape reports each objective's nearest-rank quantile of
that window, and the count and sum of every observation since the start.
"""

from __future__ import annotations

import collections
import math
import threading
import time
from collections.abc import Callable, Iterator, Sequence

from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector


class _Window:
    def __init__(self, owner: SlidingQuantiles) -> None:
        self._owner = owner
        self.recent: collections.deque[tuple[float, float]] = collections.deque(
            maxlen=owner.max_samples
        )
        self.count = 0
        self.total = 0.0

    def observe(self, value: float) -> None:
        with self._owner.lock:
            self.recent.append((self._owner.clock(), value))
            self.count += 1
            self.total += value


class SlidingQuantiles(Collector):
    """A summary family: `labels(...).observe(v)` from any thread, quantiles when collected."""

    def __init__(
        self,
        name: str,
        help: str,
        labels: Sequence[str],
        *,
        objectives: Sequence[float] = (0.5, 0.9, 0.95, 0.99),
        max_age_seconds: float = 600.0,
        max_samples: int = 10_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not all(0 < q < 1 for q in objectives) or max_age_seconds <= 0 or max_samples < 1:
            raise ValueError(f"{name}: objectives in (0, 1), a positive age and sample bound")
        self.name = name
        self.help = help
        self.label_names = tuple(labels)
        self.objectives = tuple(sorted(objectives))
        self.max_age = max_age_seconds
        self.max_samples = max_samples
        self.clock = clock
        self.lock = threading.Lock()
        self._windows: dict[tuple[str, ...], _Window] = {}

    def labels(self, *values: str) -> _Window:
        if len(values) != len(self.label_names):
            raise ValueError(f"{self.name}: expected labels {self.label_names}")
        with self.lock:
            window = self._windows.get(values)
            if window is None:
                window = self._windows[values] = _Window(self)
            return window

    def quantiles(self, *values: str) -> dict[float, float]:
        """Each objective's quantile of the window of `values` now (NaN when it is empty)."""
        with self.lock:
            window = self._windows.get(tuple(values))
            recent = self._recent(window) if window is not None else []
        return _nearest_ranks(recent, self.objectives)

    def _recent(self, window: _Window) -> list[float]:
        cutoff = self.clock() - self.max_age
        while window.recent and window.recent[0][0] < cutoff:
            window.recent.popleft()
        return sorted(value for _, value in window.recent)

    def collect(self) -> Iterator[Metric]:
        family = Metric(self.name, self.help, "summary")
        with self.lock:
            found = [
                (values, self._recent(w), w.count, w.total) for values, w in self._windows.items()
            ]
        for values, recent, count, total in found:
            labels = dict(zip(self.label_names, values, strict=True))
            for objective, value in _nearest_ranks(recent, self.objectives).items():
                family.add_sample(self.name, {**labels, "quantile": str(objective)}, value)
            family.add_sample(f"{self.name}_sum", labels, total)
            family.add_sample(f"{self.name}_count", labels, float(count))
        yield family


def _nearest_ranks(ordered: list[float], objectives: Sequence[float]) -> dict[float, float]:
    if not ordered:
        return {q: math.nan for q in objectives}
    return {q: ordered[max(0, math.ceil(q * len(ordered)) - 1)] for q in objectives}
