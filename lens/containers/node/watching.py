"""Follow a container runtime: subscribe, resync, hand events to the tracker, resubscribe.

One thread per source. After every (re)subscription the tracker resyncs from a full listing, so
what happened while the stream was down is reported; errors back off and resubscribe, logged on
the first failure and on recovery. An event the runtime's client cannot read (a `Skipped` item
of the stream, or a `MalformedError` while the tracker reads its container) is counted and
skipped; any other failure, a bug included, restarts the watcher with backoff instead of ending
its thread, and `connected` is false (readiness says why) until it is subscribed again. The node
agent also calls `reconcile()` periodically.
"""

from __future__ import annotations

import collections
import dataclasses
import logging
import threading
from collections.abc import Callable, Iterator
from typing import Protocol

from lens.containers.model import Source
from lens.containers.node.records import RuntimeEvent
from lens.containers.node.tracking import ContainerReader, ContainerTracker
from lens.runtime import errors
from lens.runtime.backoff import Backoff
from lens.runtime.selfmetrics import SelfMetrics
from lens.runtime.throttle import LogThrottle

log = logging.getLogger(__name__)

RUNTIME_NAMES = {Source.CONTAINERD: "containerd", Source.DOCKER: "docker"}

# The reasons an event is skipped (a bounded label set): a message of the stream that is no JSON,
# one of the wrong shape or with impossible values, one over the size limit, and an event whose
# container's record (Docker's inspect body) could not be read.
NOT_JSON = "not_json"
MALFORMED = "malformed"
TOO_LARGE = "too_large"
RECORD = "record"
SKIP_WARNING_SECONDS = 60.0


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Skipped:
    """A message of the event stream that is no readable event: counted, then skipped."""

    reason: str  # one of the reasons above
    detail: str  # for the log


class MalformedError(errors.SourceError):
    """The runtime answered an event or record Lens cannot read: that one item is skipped and
    counted, and the stream goes on (any other SourceError means the runtime itself failed)."""

    def __init__(self, message: str, *, reason: str = MALFORMED) -> None:
        super().__init__(message)
        self.reason = reason


class EventStream(Protocol):
    def __iter__(self) -> Iterator[RuntimeEvent | Skipped]: ...

    def cancel(self) -> None: ...


class RuntimeClient(ContainerReader, Protocol):
    @property
    def address(self) -> str: ...

    def subscribe(self) -> EventStream: ...

    def close(self) -> None: ...


class WatcherMetrics:
    """What the watchers of a node agent count, by runtime."""

    def __init__(self, metrics: SelfMetrics) -> None:
        self.skipped = metrics.counter(
            "lens_container_runtime_events_skipped_total",
            "Runtime events skipped because they, or their container's record, could not be "
            "read, by runtime and reason.",
            ("runtime", "reason"),
        )
        self.restarts = metrics.counter(
            "lens_container_runtime_watch_restarts_total",
            "Times a runtime's watcher subscribed again after its stream or runtime failed "
            "(stream) or it failed itself (crash), by runtime and reason.",
            ("runtime", "reason"),
        )


class ContainerWatcher:
    """Keeps `tracker` current from `client`, until `stop()`."""

    def __init__(
        self,
        *,
        client: RuntimeClient,
        tracker: ContainerTracker,
        wall_time: Callable[[], float],
        backoff: Backoff | None = None,
        metrics: WatcherMetrics | None = None,
    ) -> None:
        self.client = client
        self.tracker = tracker
        self._time = wall_time
        self._backoff = backoff or Backoff(initial=0.2, maximum=30.0)
        self._metrics = metrics
        self._runtime = RUNTIME_NAMES.get(tracker.source, tracker.source.value)
        self._stop = threading.Event()
        self._stream: EventStream | None = None
        self._thread: threading.Thread | None = None
        self._connected = threading.Event()
        self.subscriptions = 0  # successful (re)subscriptions, for tests and metrics
        self.errors = 0
        self.crashes = 0
        self.events = 0
        self.skipped: collections.Counter[str] = collections.Counter()  # by reason
        self.failure: str | None = None  # why the last subscription ended, until the next
        # A warning at most once a minute per reason: the counter tells of every one.
        self._skip_warnings = LogThrottle(every_seconds=SKIP_WARNING_SECONDS, clock=wall_time)

    @property
    def connected(self) -> bool:
        """Subscribed and resynced, with the thread following the stream alive."""
        thread = self._thread
        return self._connected.is_set() and thread is not None and thread.is_alive()

    def start(self) -> None:
        name = f"watch-{self.tracker.source.value}"
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        stream = self._stream
        if stream is not None:
            stream.cancel()
        if self._thread is not None:
            self._thread.join(timeout)

    def reconcile(self) -> None:
        """Resync now (a periodic loop calls this); NoDataError while not subscribed."""
        if not self.connected:
            raise errors.NoDataError("container runtime not connected")
        self.tracker.resync(self.client, now=self._time())

    def _run(self) -> None:
        logged: str | None = None  # the failure last logged, while failing
        while not self._stop.is_set():
            try:
                self._follow()
            except errors.SourceError as exc:
                logged = self._failed(exc, reason="stream", logged=logged)
            except Exception as exc:  # a bug or a shape no parser foresaw: start over, never die
                logged = self._failed(exc, reason="crash", logged=logged)
            else:
                logged = None
        self._connected.clear()

    def _failed(self, exc: Exception, *, reason: str, logged: str | None) -> str:
        """Count, log (once while the failure stays the same) and back off; the failure."""
        self._connected.clear()
        failure = errors.first_line(exc)
        if reason == "crash":
            self.crashes += 1
            failure = f"{type(exc).__name__}: {failure}"
        else:
            self.errors += 1
        self.failure = failure
        if self._metrics is not None:
            self._metrics.restarts.labels(self._runtime, reason).inc()
        if failure != logged and reason == "crash":
            log.error("container watcher failed; restarting", exc_info=exc)
        elif failure != logged:
            log.warning("container events lost; resubscribing", extra={"reason": failure})
        self._stop.wait(self._backoff.next_delay(exc))
        return failure

    def _follow(self) -> None:
        stream = self.client.subscribe()
        self._stream = stream
        try:
            if self._stop.is_set():
                return
            self.tracker.resync(self.client, now=self._time())
            self._connected.set()
            self.failure = None
            self.subscriptions += 1
            self._backoff.reset()
            if self.subscriptions > 1:
                log.info("container events resubscribed", extra={"runtime": self._runtime})
            self._handle(stream)
        finally:
            stream.cancel()  # a stream left by an error must not hold its connection open

    def _handle(self, stream: EventStream) -> None:
        for item in stream:
            if isinstance(item, Skipped):
                self._skip(item.reason, item.detail)
                continue
            self.events += 1
            try:
                self.tracker.handle(item, self.client)
            except MalformedError as exc:
                self._skip(exc.reason, str(exc))

    def _skip(self, reason: str, detail: str) -> None:
        self.skipped[reason] += 1
        if self._metrics is not None:
            self._metrics.skipped.labels(self._runtime, reason).inc()
        warn = self._skip_warnings.due(reason) is not None
        log.log(
            logging.WARNING if warn else logging.DEBUG,
            "container event skipped",
            extra={"runtime": self._runtime, "reason": reason, "detail": detail},
        )
