"""Changes from the reflectors, queued in order and handed to one writer thread in batches.

Reflector threads append; once `max_pending` changes wait, they wait for room, so a burst or
a database outage holds at most that many changes in memory and the rest stays in the watch
streams (the API server's buffers, then a resumed watch or a relist). The writer takes what
has gathered, up to `max_changes`, and hands it to the sink as one Batch; when the sink fails
(the database is down) the same batch is offered again after a backoff, with what arrived
meanwhile appended: nothing is dropped and the order is kept.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator

from lens.kube.machinery.cache import Change
from lens.kube.machinery.resources import Kind
from lens.runtime.backoff import Backoff

log = logging.getLogger(__name__)


@dataclasses.dataclass(slots=True)
class Batch:
    pods: list[Change] = dataclasses.field(default_factory=list)
    pods_listed: bool = False  # a full pod listing happened: settle pods deleted unseen
    workloads: list[tuple[Kind, Change]] = dataclasses.field(default_factory=list)
    kinds_listed: list[Kind] = dataclasses.field(default_factory=list)
    enqueued: list[float] = dataclasses.field(default_factory=list)  # monotonic, per change

    def __len__(self) -> int:
        return len(self.pods) + len(self.workloads)


@dataclasses.dataclass(frozen=True, slots=True)
class _Item:
    at: float
    pods: tuple[Change, ...] = ()
    workload_kind: Kind | None = None
    workloads: tuple[Change, ...] = ()
    pods_listed: bool = False
    kind_listed: Kind | None = None

    @property
    def size(self) -> int:
        return len(self.pods) + len(self.workloads)


Sink = Callable[[Batch], None]
Failed = Callable[[BaseException], None]


class ChangeBatcher:
    def __init__(
        self,
        sink: Sink,
        *,
        max_changes: int,
        max_pending: int,
        backoff: Backoff | None = None,
        on_failure: Failed | None = None,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._sink = sink
        self._max = max_changes
        self._max_pending = max(max_pending, max_changes)
        self._backoff = backoff or Backoff(initial=0.2, maximum=10.0)
        self._on_failure = on_failure
        self._monotonic = monotonic
        self._items: deque[_Item] = deque()
        self._changes = 0
        lock = threading.Lock()
        self._wake = threading.Condition(lock)  # the writer waits for changes
        self._room = threading.Condition(lock)  # reflectors wait for room
        self._drained = threading.Condition(lock)  # wait_idle() waits for the writer
        self._stop = False
        self._busy = False
        self._thread: threading.Thread | None = None

    # -- from the reflectors ----------------------------------------------------------

    def add_pods(self, changes: list[Change]) -> None:
        for part in self._parts(changes):
            self._put(_Item(at=self._monotonic(), pods=part))

    def pods_listed(self) -> None:
        self._put(_Item(at=self._monotonic(), pods_listed=True))

    def add_workloads(self, kind: Kind, changes: list[Change]) -> None:
        for part in self._parts(changes):
            self._put(_Item(at=self._monotonic(), workload_kind=kind, workloads=part))

    def _parts(self, changes: list[Change]) -> Iterator[tuple[Change, ...]]:
        """A listing arrives as one list: queued in batch-sized parts, so that it too waits for
        room and the writer never holds more than a batch of it."""
        for start in range(0, len(changes), self._max):
            yield tuple(changes[start : start + self._max])

    def kind_listed(self, kind: Kind) -> None:
        self._put(_Item(at=self._monotonic(), kind_listed=kind))

    def _put(self, item: _Item) -> None:
        with self._wake:
            # Markers (listed) never wait: they carry no object, and the writer may add them.
            while item.size and self._changes >= self._max_pending and not self._stop:
                self._room.wait()
            self._items.append(item)
            self._changes += item.size
            self._wake.notify()

    # -- the writer -------------------------------------------------------------------

    @property
    def pending(self) -> int:
        """Changes queued or being written."""
        with self._wake:
            return self._changes

    def idle(self) -> bool:
        with self._wake:
            return not self._items and not self._busy

    def wait_idle(self, timeout: float) -> bool:
        """Wait until nothing is queued or being written (or the writer stopped); idle?"""
        with self._wake:
            return (
                self._drained.wait_for(
                    lambda: self._stop or (not self._items and not self._busy), timeout=timeout
                )
                and not self._stop
            )

    def start(self) -> None:
        self._thread = threading.Thread(target=self.run, name="change-writer", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        with self._wake:
            self._stop = True
            self._wake.notify()
            self._room.notify_all()
            self._drained.notify_all()
        if self._thread is not None:
            self._thread.join(timeout)

    def run(self) -> None:
        while True:
            with self._wake:
                while not self._items and not self._stop:
                    self._wake.wait()
                if self._stop:
                    return
                taken = self._take()
                self._busy = True
            try:
                self._sink(_batch(taken))
            except Exception as exc:  # the sink's failure must not end the writer: retried
                self._retry_later(taken, exc)
                continue
            finally:
                with self._wake:
                    self._busy = False
            with self._wake:
                self._changes -= sum(item.size for item in taken)
                self._room.notify_all()
                self._drained.notify_all()
            self._backoff.reset()

    def _take(self) -> list[_Item]:
        taken: list[_Item] = []
        size = 0
        while self._items and (not taken or size + self._items[0].size <= self._max):
            item = self._items.popleft()
            taken.append(item)
            size += item.size
        return taken

    def _retry_later(self, taken: list[_Item], exc: BaseException) -> None:
        if self._on_failure is not None:
            self._on_failure(exc)
        delay = self._backoff.next_delay(exc)
        log.warning(
            "writing changes failed; retrying",
            extra={"reason": str(exc) or type(exc).__name__, "retry_in_seconds": round(delay, 2)},
        )
        with self._wake:
            self._items.extendleft(reversed(taken))
            self._wake.wait_for(lambda: self._stop, timeout=delay)


def _batch(items: list[_Item]) -> Batch:
    batch = Batch()
    for item in items:
        batch.pods.extend(item.pods)
        batch.enqueued.extend([item.at] * item.size)
        if item.workload_kind is not None:
            batch.workloads.extend((item.workload_kind, c) for c in item.workloads)
        batch.pods_listed = batch.pods_listed or item.pods_listed
        if item.kind_listed is not None:
            batch.kinds_listed.append(item.kind_listed)
    return batch
