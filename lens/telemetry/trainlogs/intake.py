"""Training-log records from the HTTP handler of /v1/logs to training_performance rows, off the
request path: a bounded queue (`offer` refuses a body when full: answer 503 with Retry-After and
the collector sends it again, so nothing is lost) and one writer thread, which takes a batch
every `batch_seconds` or `batch_records` records, finds the iteration and banner lines
(batching.py), waits for unknown pods' workloads (waiting.py), gives runs (runs.py), writes one
transaction (storing.py) — retried with backoff while the database fails, the queue filling
meanwhile — and then tells each observer of every iteration stored. A Part of `lens jobs`:
`start()` and `stop()` (which drains the queue) are async, `start_thread()`/`stop_thread()` the
same for plain callers."""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections import deque
from collections.abc import Callable, Sequence
from typing import TypeVar

import peewee

from lens.runtime import errors, lifecycle
from lens.runtime.backoff import Backoff
from lens.runtime.clock import Clock, SystemClock
from lens.runtime.selfmetrics import SelfMetrics
from lens.telemetry.trainlogs import batching
from lens.telemetry.trainlogs.batching import Candidate, Prepared, StoredIteration
from lens.telemetry.trainlogs.intakemetrics import IntakeMetrics
from lens.telemetry.trainlogs.records import LogRecord, ParsedBody
from lens.telemetry.trainlogs.runs import RunTracker
from lens.telemetry.trainlogs.storing import PodChain, TrainingStore, Written
from lens.telemetry.trainlogs.waiting import PodWorkloads

log = logging.getLogger(__name__)

T = TypeVar("T")
Observer = Callable[[StoredIteration], None]
_ANNOUNCED_MAX = 100_000  # lines remembered so that one sent again is not announced again


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class IntakeSettings:
    """How the intake queues, batches and waits."""

    cluster: str
    queue_records: int = 100_000  # beyond, offer() refuses (503)
    queue_characters: int = 64 * 1024 * 1024  # of lines queued; beyond, offer() refuses too
    batch_records: int = 5_000
    batch_seconds: float = 0.5  # a record waits at most this long for its batch
    unknown_workload_wait_seconds: float = 30.0
    unknown_workload_retry_seconds: float = 1.0
    max_waiting_lines: int = 20_000
    stop_timeout_seconds: float = 10.0


@dataclasses.dataclass(frozen=True, slots=True)
class _Item:
    records: tuple[LogRecord, ...]
    received: float  # monotonic
    characters: int


class LogIntake:
    """The queue and writer of training-log records for one cluster's database."""

    def __init__(
        self,
        db: peewee.Database,
        settings: IntakeSettings,
        *,
        metrics: SelfMetrics,
        clock: Clock | None = None,
        observers: Sequence[Observer] = (),
        on_failure: Callable[[BaseException], None] | None = None,
        backoff: Backoff | None = None,
    ) -> None:
        """`observers` are called on the writer thread after each commit, once per iteration
        line and workload (quickly: the writer waits); `on_failure` gets an unexpected error
        that ended the writer (the role stops then)."""
        self._settings = settings
        self._store = TrainingStore(db, cluster=settings.cluster)
        self._tracker = RunTracker(history=self._store.history, spans=self._store.spans)
        self._workloads: PodWorkloads[Candidate] = PodWorkloads(
            self._store.chains,
            wait_seconds=settings.unknown_workload_wait_seconds,
            retry_seconds=settings.unknown_workload_retry_seconds,
            max_waiting=settings.max_waiting_lines,
        )
        self._metrics = IntakeMetrics(metrics)
        self._clock = clock or SystemClock()
        self._observers = tuple(observers)
        self._on_failure = on_failure
        self._backoff = backoff or Backoff(initial=0.2, maximum=10.0)
        self._lock = threading.Condition()
        self._items: deque[_Item] = deque()
        self._queued = 0
        self._characters = 0
        self._busy = False
        self._stopping = False
        self._thread: threading.Thread | None = None
        self._announced: dict[int, None] = {}

    @property
    def name(self) -> str:
        return "training-logs"

    # -- from the HTTP handler -----------------------------------------------------------

    def offer(self, body: ParsedBody) -> bool:
        """Queue a body's records; False when the queue is full or stopping (answer 503)."""
        count = len(body.records)
        characters = sum(len(record.line) for record in body.records)
        with self._lock:
            full = self._queued > 0 and (
                self._queued + count > self._settings.queue_records
                or self._characters + characters > self._settings.queue_characters
            )
            if self._stopping or full:
                self._metrics.refused.inc(count)
                return False
            if count:
                self._items.append(_Item(body.records, self._clock.monotonic(), characters))
                self._queued += count
                self._characters += characters
                self._metrics.queued.set(self._queued)
                if self._queued >= self._settings.batch_records:
                    self._lock.notify_all()
        self._metrics.received.inc(count)
        self._metrics.count_skipped(body.skipped)
        return True

    def wait_idle(self, timeout: float) -> bool:
        """Wait until every queued record was processed (lines waiting for their workloads
        aside); whether it was in time."""
        with self._lock:
            return self._lock.wait_for(lambda: not self._items and not self._busy, timeout)

    @property
    def waiting_lines(self) -> int:
        return self._workloads.waiting

    # -- lifecycle -----------------------------------------------------------------------

    async def start(self) -> None:
        self.start_thread()

    async def stop(self) -> None:
        await lifecycle.in_thread(self.stop_thread, name="training-logs-stop")

    def start_thread(self) -> None:
        self._thread = threading.Thread(target=self._run, name="training-logs", daemon=True)
        self._thread.start()

    def stop_thread(self) -> bool:
        """Stop taking records, write those queued, and end the writer; whether it ended within
        the stop timeout."""
        with self._lock:
            self._stopping = True
            self._lock.notify_all()
        if self._thread is None:
            return True
        self._thread.join(self._settings.stop_timeout_seconds)
        return not self._thread.is_alive()

    # -- the writer ----------------------------------------------------------------------

    def _run(self) -> None:
        try:
            while True:
                items, final = self._take()
                try:
                    self._handle(items, final=final)
                finally:
                    self._done(items)
                if final:
                    return
        except Exception as exc:  # a bug: the role must stop rather than drop logs unseen
            log.exception("training-log writer failed")
            if self._on_failure is not None:
                self._on_failure(exc)

    def _take(self) -> tuple[list[_Item], bool]:
        """The next batch (possibly empty, to look up waiting lines again), and whether it is
        the last."""
        poll = max(0.01, min(self._settings.batch_seconds, 0.4) / 4)
        with self._lock:
            if not self._stopping and not self._ready():
                self._lock.wait(poll)
            final = self._stopping
            if not (final or self._ready()):
                return [], False
            items: list[_Item] = []
            count = 0
            while self._items and (final or not items or count < self._settings.batch_records):
                item = self._items.popleft()
                items.append(item)
                count += len(item.records)
            self._busy = True
            return items, final

    def _ready(self) -> bool:
        if not self._items:
            return False
        if self._queued >= self._settings.batch_records:
            return True
        return self._clock.monotonic() - self._items[0].received >= self._settings.batch_seconds

    def _done(self, items: list[_Item]) -> None:
        with self._lock:
            self._queued -= sum(len(item.records) for item in items)
            self._characters -= sum(item.characters for item in items)
            self._busy = False
            self._metrics.queued.set(self._queued)
            self._lock.notify_all()

    def _handle(self, items: list[_Item], *, final: bool) -> None:
        pairs = [(record, item.received) for item in items for record in item.records]
        self._observe_latency([record for record, _ in pairs])
        found = batching.candidates(pairs)
        if not found and not self._workloads.waiting:
            return
        routed = self._retrying(lambda: self._workloads.route(found, self._clock.monotonic()))
        if routed is None:
            self._metrics.count_dropped({"stopped": len(found)})
            return
        self._metrics.count_dropped(routed.dropped)
        if final:
            self._metrics.count_dropped({"stopped": self._workloads.drop_waiting()})
        self._metrics.waiting.set(self._workloads.waiting)
        if routed.ready:
            self._commit(routed.ready)

    def _commit(self, ready: list[tuple[Candidate, PodChain]]) -> None:
        outcome = self._retrying(lambda: self._write(ready))
        if outcome is None:
            self._metrics.count_dropped({"stopped": len(ready)})
            return
        prepared, written = outcome
        self._metrics.rows.inc(written.rows)
        self._metrics.runs.inc(written.starts)
        now = self._clock.monotonic()
        for candidate, _ in ready:
            self._metrics.lag.observe(max(0.0, now - candidate.received))
        self._announce(prepared)

    def _write(self, ready: list[tuple[Candidate, PodChain]]) -> tuple[Prepared, Written]:
        prepared = batching.prepare(ready, self._tracker)
        starts = self._tracker.unsaved()
        written = self._store.write(starts, prepared.rows)
        self._tracker.saved(starts)
        return prepared, written

    def _retrying(self, work: Callable[[], T]) -> T | None:
        """`work` once it succeeds, tried again after a backoff while the store fails; None
        when the intake stops meanwhile."""
        while True:
            try:
                result = work()
            except errors.StoreError as exc:
                self._metrics.write_failures.inc()
                delay = self._backoff.next_delay(exc)
                if self._backoff.failures == 1:
                    log.warning("storing training logs failed; retrying", extra={"error": str(exc)})
                with self._lock:
                    if self._stopping or self._lock.wait_for(lambda: self._stopping, delay):
                        log.error("training logs not stored: stopping", extra={"error": str(exc)})
                        return None
                continue
            if self._backoff.failures:
                log.info("storing training logs again")
            self._backoff.reset()
            return result

    def _observe_latency(self, records: list[LogRecord]) -> None:
        if not records:
            return
        now = self._clock.time()
        by_node: dict[str, list[float]] = {}
        for record in records:
            by_node.setdefault(record.node, []).append(now - record.at)
        self._metrics.observe_latency(by_node)

    def _announce(self, prepared: Prepared) -> None:
        """Count each line recognised and tell the observers of its iterations, once per line
        (a line sent again is neither counted nor told again, while remembered)."""
        for candidate, stored in prepared.observed:
            if candidate.fingerprint in self._announced:
                continue
            self._announced[candidate.fingerprint] = None
            kind = "StartTrain" if candidate.figures is None else "Performance"
            self._metrics.consumed.labels(kind).inc()
            for iteration in stored:
                self._tell(iteration)
        while len(self._announced) > _ANNOUNCED_MAX:
            del self._announced[next(iter(self._announced))]

    def _tell(self, iteration: StoredIteration) -> None:
        for observer in self._observers:
            try:
                observer(iteration)
            except Exception:  # an observer's bug must not stop the intake: counted, logged
                self._metrics.observer_errors.inc()
                log.exception("observer of training iterations failed")
