"""Follow a container runtime: subscribe, resync, hand events to the tracker, resubscribe.

One thread per source. After every (re)subscription the tracker resyncs from a full listing, so
what happened while the stream was down is reported; errors back off and resubscribe, logged on
the first failure and on recovery. The node agent also calls `reconcile()` periodically.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from typing import Protocol

from lens.containers.node.records import RuntimeEvent
from lens.containers.node.tracking import ContainerReader, ContainerTracker
from lens.runtime import errors
from lens.runtime.backoff import Backoff

log = logging.getLogger(__name__)


class EventStream(Protocol):
    def __iter__(self) -> Iterator[RuntimeEvent]: ...

    def cancel(self) -> None: ...


class RuntimeClient(ContainerReader, Protocol):
    @property
    def address(self) -> str: ...

    def subscribe(self) -> EventStream: ...

    def close(self) -> None: ...


class ContainerWatcher:
    """Keeps `tracker` current from `client`, until `stop()`."""

    def __init__(
        self,
        *,
        client: RuntimeClient,
        tracker: ContainerTracker,
        wall_time: Callable[[], float],
        backoff: Backoff | None = None,
    ) -> None:
        self.client = client
        self.tracker = tracker
        self._time = wall_time
        self._backoff = backoff or Backoff(initial=0.2, maximum=30.0)
        self._stop = threading.Event()
        self._stream: EventStream | None = None
        self._thread: threading.Thread | None = None
        self._connected = threading.Event()
        self.subscriptions = 0  # successful (re)subscriptions, for tests and metrics
        self.errors = 0
        self.events = 0

    @property
    def connected(self) -> bool:
        return self._connected.is_set()

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
        failing = False
        while not self._stop.is_set():
            try:
                self._follow()
            except errors.SourceError as exc:
                self._connected.clear()
                self.errors += 1
                if not failing:
                    log.warning("container events lost; resubscribing", extra={"reason": str(exc)})
                failing = True
                self._stop.wait(self._backoff.next_delay(exc))
            else:
                failing = False
        self._connected.clear()

    def _follow(self) -> None:
        stream = self.client.subscribe()
        self._stream = stream
        if self._stop.is_set():
            stream.cancel()
            return
        self.tracker.resync(self.client, now=self._time())
        self._connected.set()
        self.subscriptions += 1
        self._backoff.reset()
        if self.subscriptions > 1:
            log.info("container events resubscribed", extra={"runtime": self.tracker.source.value})
        for event in stream:
            self.events += 1
            self.tracker.handle(event, self.client)
