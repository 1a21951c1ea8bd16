"""The node agent's collection cycle: due collectors run concurrently, each with a timeout.

One tick per smallest interval (STYLE S5.6): collectors whose interval has come run on their
own threads; the cycle waits for each until its timeout; a collector still running from an
earlier tick is skipped and counted, never run twice at once. A failed or timed-out collector's
families are dropped from the output (S5.8) and its success gauge says 0; a collector that did
not run this tick keeps its last families. Then everything is rendered once (S5.9).
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent import futures
from typing import Any, Generic, TypeVar

from lens.runtime import errors
from lens.runtime.clock import Clock
from lens.runtime.selfmetrics import SelfMetrics
from lens.runtime.textformat import GroupSnapshots, TextRenderer

log = logging.getLogger(__name__)

T = TypeVar("T")

Rendered = GroupSnapshots | str
"""What a binding renders: a family group with snapshots, or families already in text."""


def _always() -> bool:
    return True


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Binding(Generic[T]):
    """A collector as the cycle runs it: how to collect, keep and render its result."""

    name: str
    interval_seconds: float
    timeout_seconds: float
    collect: Callable[[], T]
    render: Callable[[T], Iterable[Rendered]]
    keep: Callable[[T], None] = lambda _: None  # hands the result to the REST state
    lose: Callable[[str], None] = lambda _: None  # tells the REST state a run failed, and why
    # Adjusts a result in the cycle's thread, after the results of the collectors listed
    # before it were kept (NVIDIA GPUs numbered after the AMD ones).
    settle: Callable[[T], T] = lambda result: result
    problems: Callable[[T], Sequence[str]] = lambda _: ()  # what it could not read
    applicable: Callable[[], bool] = _always  # False: not on this node (no series at all)


class CollectorMetrics:
    """lens_collector_* self-metrics, one series per collector."""

    def __init__(self, metrics: SelfMetrics) -> None:
        self.duration = metrics.histogram(
            "lens_collector_duration_seconds",
            "Time one run of a node collector took, in seconds.",
            ("collector",),
        )
        self.success = metrics.gauge(
            "lens_collector_success",
            "Whether a node collector's last run succeeded (1) or failed or timed out (0).",
            ("collector",),
        )
        self.last_success = metrics.gauge(
            "lens_collector_last_success_timestamp_seconds",
            "Unix time in seconds when a node collector last succeeded.",
            ("collector",),
        )
        self.runs = metrics.counter(
            "lens_collector_runs_total",
            "Finished runs of a node collector by result (success, error, timeout).",
            ("collector", "result"),
        )
        self.skipped = metrics.counter(
            "lens_collector_skipped_total",
            "Runs of a node collector skipped because its previous run had not finished.",
            ("collector",),
        )
        self.problems = metrics.counter(
            "lens_collector_problems_total",
            "Attributes a node collector could not read in a run that otherwise succeeded.",
            ("collector",),
        )


@dataclasses.dataclass(slots=True)
class _Slot:
    binding: Binding[Any]
    due: float = 0.0
    running: futures.Future[Any] | None = None
    rendered: tuple[Rendered, ...] = ()
    failing: str | None = None
    started: float = 0.0


class CollectionCycle:
    """Runs bindings on a tick; a metric source for the publisher (its collect())."""

    def __init__(
        self,
        bindings: Sequence[Binding[Any]],
        *,
        clock: Clock,
        metrics: CollectorMetrics,
        publish: Callable[[], None],
    ) -> None:
        names = [b.name for b in bindings]
        if len(set(names)) != len(names):
            raise ValueError(f"collector names must be unique: {names}")
        self._slots = [_Slot(b) for b in bindings]
        self._clock = clock
        self._metrics = metrics
        self._publish = publish
        self._pool = futures.ThreadPoolExecutor(
            max_workers=max(1, len(bindings)), thread_name_prefix="lens-collector"
        )
        self._lock = threading.Lock()
        self._cycles = 0
        self._after_first: list[Callable[[], None]] = []
        self._after_each: list[Callable[[], None]] = []
        self._renderer = TextRenderer()
        self._parts: list[Rendered] = []
        self._text: str | None = ""

    @property
    def tick_seconds(self) -> float:
        return min((s.binding.interval_seconds for s in self._slots), default=1.0)

    @property
    def cycles(self) -> int:
        return self._cycles

    def after_first(self, callback: Callable[[], None]) -> None:
        """Call `callback` once the first cycle is published (at once if it was)."""
        with self._lock:
            if not self._cycles:
                self._after_first.append(callback)
                return
        callback()

    def after_each(self, callback: Callable[[], None]) -> None:
        """Call `callback` in the cycle's thread after every cycle, once the results are kept;
        an exception it raises is logged and the cycle goes on."""
        self._after_each.append(callback)

    def run(self) -> None:
        """One tick: run what is due, wait, keep results, publish once (which renders them)."""
        now = self._clock.monotonic()
        started = [slot for slot in self._slots if self._start_if_due(slot, now)]
        self._finish(started)
        parts = [part for slot in self._slots for part in slot.rendered]
        with self._lock:
            self._parts, self._text = parts, None
        self._publish()
        with self._lock:
            self._cycles += 1  # counted once published, so /metrics has the cycle's families
            waiting, self._after_first = self._after_first, []
        for callback in waiting:
            callback()
        for callback in self._after_each:
            try:
                callback()
            except Exception:  # a bug in what follows the cycle must not stop collection
                log.exception("after-cycle callback failed")

    def _start_if_due(self, slot: _Slot, now: float) -> bool:
        binding = slot.binding
        if not binding.applicable():
            slot.rendered = ()  # the hardware went away: so do its series
            return False
        if now < slot.due:
            return False
        slot.due = now + binding.interval_seconds
        if slot.running is not None and not slot.running.done():
            self._metrics.skipped.labels(binding.name).inc()
            return False
        slot.started = now
        slot.running = self._pool.submit(self._timed, binding)
        return True

    def _timed(self, binding: Binding[Any]) -> tuple[Any, float]:
        start = self._clock.monotonic()
        result = binding.collect()
        return result, self._clock.monotonic() - start

    def _finish(self, started: list[_Slot]) -> None:
        for slot in started:
            future = slot.running
            assert future is not None
            waited = max(
                0.0, slot.binding.timeout_seconds - (self._clock.monotonic() - slot.started)
            )
            try:
                result, took = future.result(timeout=waited)
            except futures.TimeoutError:
                self._failed(
                    slot, "timeout", f"took longer than {slot.binding.timeout_seconds:g} s"
                )
            except errors.NoDataError as exc:
                self._failed(slot, "error", str(exc), level=logging.DEBUG)
            except errors.LensError as exc:
                self._failed(slot, "error", str(exc))
            except Exception as exc:  # a bug in a collector: contained to it, logged in full
                if slot.failing is None:
                    log.error(
                        "collector crashed", extra={"collector": slot.binding.name}, exc_info=exc
                    )
                self._failed(slot, "error", f"{type(exc).__name__}: {exc}")
            else:
                self._succeeded(slot, result, took)

    def _succeeded(self, slot: _Slot, result: Any, took: float) -> None:
        binding, name = slot.binding, slot.binding.name
        result = binding.settle(result)
        binding.keep(result)
        problems = binding.problems(result)
        slot.rendered = tuple(binding.render(result))
        self._metrics.duration.labels(name).observe(took)
        self._metrics.success.labels(name).set(1)
        self._metrics.last_success.labels(name).set(self._clock.time())
        self._metrics.runs.labels(name, "success").inc()
        if problems:
            self._metrics.problems.labels(name).inc(len(problems))
            log.debug("collector problems", extra={"collector": name, "problems": problems})
        if slot.failing is not None:
            log.info("collector recovered", extra={"collector": name})
            slot.failing = None

    def _failed(self, slot: _Slot, result: str, reason: str, level: int = logging.ERROR) -> None:
        name = slot.binding.name
        slot.rendered = ()
        slot.binding.lose(reason)
        self._metrics.success.labels(name).set(0)
        self._metrics.runs.labels(name, result).inc()
        if result == "error":
            # A timed-out run is still going; its duration is observed by nobody.
            self._metrics.duration.labels(name).observe(self._clock.monotonic() - slot.started)
        if slot.failing != reason:
            log.log(level, "collector failed", extra={"collector": name, "reason": reason})
        slot.failing = reason

    def _render(self, parts: list[Rendered]) -> str:
        """Every collector's families in one text; AMD and NVIDIA GPUs share their families."""
        groups = [part for part in parts if isinstance(part, tuple)]
        texts = [part for part in parts if isinstance(part, str)]
        return self._renderer.render_groups(groups, opt_in=frozenset()) + "".join(texts)

    def render_text(self) -> str:
        """The families of the last cycle (a text source of the metrics publisher), rendered
        once per cycle when first asked: a cycle nobody publishes (lens demo's agents, whose
        /metrics no port serves) is never rendered."""
        with self._lock:
            if self._text is None:
                self._text = self._render(self._parts)
            return self._text

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
