"""Periodic loops: jittered, never overlapping themselves, never starving each other.

Each loop has its own worker thread, so a slow or stuck body delays only itself; a run that
overruns its slot makes the next slots be skipped and counted, never queued. Time comes from an
injected Clock. Roles list their loops (collector cycles, jobs, housekeeping) and add the
PeriodicRunner to their Service (runtime/lifecycle.py). The `schedule` package is not used for
this: it reads the naive local wall clock with no seam for a test clock and draws jitter as whole
numbers of its unit, which a 1 s loop cannot use.
"""

from __future__ import annotations

import dataclasses
import logging
import random
import threading
from collections.abc import Callable, Sequence

from lens.runtime import errors, lifecycle
from lens.runtime.clock import Clock
from lens.runtime.selfmetrics import SelfMetrics

log = logging.getLogger(__name__)


START_SPREAD_MAX_SECONDS = 5.0


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Loop:
    """One unit of periodic work."""

    name: str
    interval_seconds: float
    run: Callable[[], None]
    run_at_start: bool = True
    # A run going on longer than this is reported as stalled to /healthz; None: 10 intervals,
    # at least 60 s.
    stall_seconds: float | None = None
    # Runs only while this says so (a job only the leader of a Lease runs); a slot passed by is
    # neither a run nor a skip. None: always.
    when: Callable[[], bool] | None = None

    @property
    def stall_after(self) -> float:
        if self.stall_seconds is not None:
            return self.stall_seconds
        return max(60.0, 10 * self.interval_seconds)


class LoopMetrics:
    """Duration, runs by result, last success and skipped slots, one series per loop."""

    def __init__(self, metrics: SelfMetrics, *, prefix: str = "lens_loop", label: str = "loop"):
        self.duration = metrics.histogram(
            f"{prefix}_duration_seconds",
            f"Time one run of a periodic {label} took, in seconds.",
            (label,),
        )
        self.runs = metrics.counter(
            f"{prefix}_runs_total",
            f"Finished runs of a periodic {label}, by result (success or error).",
            (label, "result"),
        )
        self.last_success = metrics.gauge(
            f"{prefix}_last_success_timestamp_seconds",
            f"Unix time in seconds when a periodic {label} last finished without error.",
            (label,),
        )
        self.skipped = metrics.counter(
            f"{prefix}_skipped_total",
            f"Scheduled runs of a periodic {label} skipped because the previous run overran.",
            (label,),
        )


@dataclasses.dataclass(slots=True)
class _State:
    running_since: float | None = None
    failing: bool = False
    runs: int = 0
    # The runs finished since busiest() last asked, and how long they took in all.
    lately_runs: int = 0
    lately_seconds: float = 0.0


class PeriodicRunner:
    """Runs loops on their own threads until stopped; a Service part."""

    def __init__(
        self,
        loops: Sequence[Loop],
        *,
        clock: Clock,
        metrics: LoopMetrics,
        jitter_ratio: float = 0.1,
        rng: random.Random | None = None,
        on_fatal: Callable[[str, BaseException], None] | None = None,
        name: str = "periodic",
    ) -> None:
        names = [loop.name for loop in loops]
        if len(set(names)) != len(names):
            raise ValueError(f"loop names must be unique: {names}")
        for loop in loops:
            if loop.interval_seconds <= 0:
                raise ValueError(f"loop {loop.name}: interval must be positive")
        if not 0 <= jitter_ratio <= 0.5:
            raise ValueError("jitter_ratio must be within [0, 0.5]")
        self.name = name
        self._loops = tuple(loops)
        self._clock = clock
        self._metrics = metrics
        self._jitter = jitter_ratio
        self._rng = rng or random.Random()
        self._rng_lock = threading.Lock()
        self._on_fatal = on_fatal
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._states = {loop.name: _State() for loop in self._loops}
        self._states_lock = threading.Lock()

    def add(self, loop: Loop) -> None:
        """Add a loop before the runner starts (a role's loop that needs the runtime's parts)."""
        if self._threads:
            raise RuntimeError("loops are fixed once the runner has started")
        if loop.name in self._states:
            raise ValueError(f"loop names must be unique: {loop.name} is taken")
        if loop.interval_seconds <= 0:
            raise ValueError(f"loop {loop.name}: interval must be positive")
        self._loops = (*self._loops, loop)
        with self._states_lock:
            self._states[loop.name] = _State()

    async def start(self) -> None:
        for loop in self._loops:
            thread = threading.Thread(
                target=self._run_loop, args=(loop,), name=f"lens-loop-{loop.name}", daemon=True
            )
            self._threads.append(thread)
            thread.start()

    async def stop(self) -> None:
        self._stop.set()
        await lifecycle.in_thread(self._join, name="lens-loop-join")

    def _join(self) -> None:
        for thread in self._threads:
            thread.join()

    @property
    def stopping(self) -> threading.Event:
        """Set once the runner is asked to stop: a body that works through many units (lens
        demo's hundred node agents) looks at it between them, so the stop waits for one."""
        return self._stop

    def busiest(self) -> tuple[str, float]:
        """The loop that was busiest since the last call, and how busy: the mean length of
        its runs since then (those finished, and the one going on for as long as it has gone)
        as a fraction of its interval, by the runner's clock; ('', 0.0) when none ran. Near 1
        a loop barely keeps pace with its clock, over 1 it skips slots (lens demo slows its
        clock on it)."""
        now = self._clock.monotonic()
        found, busiest = "", 0.0
        with self._states_lock:
            for loop in self._loops:
                state = self._states[loop.name]
                runs, seconds = state.lately_runs, state.lately_seconds
                state.lately_runs, state.lately_seconds = 0, 0.0
                if state.running_since is not None:
                    runs, seconds = runs + 1, seconds + now - state.running_since
                busy = seconds / (runs * loop.interval_seconds) if runs else 0.0
                if busy > busiest:
                    found, busiest = loop.name, busy
        return found, busiest

    def runs(self, name: str) -> int:
        """How many runs of loop `name` have finished (for tests and diagnostics)."""
        with self._states_lock:
            return self._states[name].runs

    def stalled(self) -> str | None:
        """Liveness probe: names the loops whose current run has gone on too long."""
        now = self._clock.monotonic()
        with self._states_lock:
            stuck = [
                loop.name
                for loop in self._loops
                if (since := self._states[loop.name].running_since) is not None
                and now - since > loop.stall_after
            ]
        return f"loops stalled: {', '.join(stuck)}" if stuck else None

    def _spread(self, interval: float) -> float:
        with self._rng_lock:
            return interval * self._rng.uniform(-self._jitter, self._jitter)

    def _run_loop(self, loop: Loop) -> None:
        interval = loop.interval_seconds
        # Spread, so that replicas started together do not run together, but "at start" stays
        # at start: an hourly loop would otherwise wait up to six minutes for its first run.
        start_delay = min(abs(self._spread(interval)), START_SPREAD_MAX_SECONDS)
        if not loop.run_at_start:
            start_delay = interval + abs(self._spread(interval))
        due = self._clock.monotonic() + start_delay
        while not self._clock.wait_until(due, self._stop):
            if (loop.when is None or loop.when()) and not self._run_once(loop):
                return
            due += interval + self._spread(interval)
            now = self._clock.monotonic()
            if due <= now:
                missed = int((now - due) // interval) + 1
                due += missed * interval
                self._metrics.skipped.labels(loop.name).inc(missed)
                log.debug("loop overran", extra={"loop": loop.name, "skipped": missed})

    def _run_once(self, loop: Loop) -> bool:
        """Run the body once, contain and count its error; False when the loop must end."""
        state = self._states[loop.name]
        started = self._clock.monotonic()
        with self._states_lock:
            state.running_since = started
        try:
            loop.run()
        except errors.FatalError as exc:
            log.error("loop failed fatally", extra={"loop": loop.name}, exc_info=True)
            self._finish(loop, state, started, ok=False)
            self._fatal(loop.name, exc)
            return False
        except Exception:
            if not state.failing:
                log.error("loop run failed", extra={"loop": loop.name}, exc_info=True)
            else:
                log.debug("loop run failed again", extra={"loop": loop.name}, exc_info=True)
            self._finish(loop, state, started, ok=False)
            return True
        except BaseException as exc:
            self._finish(loop, state, started, ok=False)
            self._fatal(loop.name, exc)
            raise
        if state.failing:
            log.info("loop recovered", extra={"loop": loop.name})
        self._finish(loop, state, started, ok=True)
        return True

    def _finish(self, loop: Loop, state: _State, started: float, *, ok: bool) -> None:
        took = self._clock.monotonic() - started
        self._metrics.duration.labels(loop.name).observe(took)
        self._metrics.runs.labels(loop.name, "success" if ok else "error").inc()
        if ok:
            self._metrics.last_success.labels(loop.name).set(self._clock.time())
        with self._states_lock:
            state.lately_runs += 1
            state.lately_seconds += took
            state.running_since = None
            state.failing = not ok
            state.runs += 1

    def _fatal(self, name: str, exc: BaseException) -> None:
        if self._on_fatal is not None:
            self._on_fatal(name, exc)
