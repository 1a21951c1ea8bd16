from __future__ import annotations

import threading
from collections.abc import Callable, Iterator

import pytest

from lens.containers.model import Inventory, Record, Source
from lens.containers.node.records import ContainerRecord, RuntimeEvent, TaskRecord
from lens.containers.node.tracking import ContainerTracker
from lens.containers.node.watching import ContainerWatcher
from lens.runtime import errors
from lens.runtime.backoff import Backoff


class Stream:
    def __init__(self, fail: bool) -> None:
        self._fail = fail
        self._cancelled = threading.Event()

    def __iter__(self) -> Iterator[RuntimeEvent]:
        if self._fail:
            raise errors.SourceError("containerd closed the event stream")
        self._cancelled.wait(10)
        return iter(())

    def cancel(self) -> None:
        self._cancelled.set()


class FlakyRuntime:
    """Its first two streams break at once; the third stays open."""

    def __init__(self) -> None:
        self.subscribed = 0

    def subscribe(self) -> Stream:
        self.subscribed += 1
        return Stream(fail=self.subscribed <= 2)

    def get_container(self, container_id: str) -> ContainerRecord | None:
        return None

    def list_containers(self) -> list[ContainerRecord]:
        return []

    def list_tasks(self) -> dict[str, TaskRecord]:
        return {}


def test_a_broken_stream_is_resubscribed_with_a_resync_each_time(
    eventually: Callable[..., None],
) -> None:
    out: list[Record] = []
    tracker = ContainerTracker(source=Source.CONTAINERD, lookup=lambda a, b: None, emit=out.append)
    runtime = FlakyRuntime()
    watcher = ContainerWatcher(
        client=runtime,
        tracker=tracker,
        wall_time=lambda: 1.0,
        backoff=Backoff(initial=0.01, maximum=0.02),
    )
    with pytest.raises(errors.NoDataError):
        watcher.reconcile()
    watcher.start()
    try:
        eventually(lambda: watcher.connected and runtime.subscribed == 3)
        assert (watcher.errors, watcher.subscriptions) == (2, 3)
        watcher.reconcile()
        assert sum(isinstance(r, Inventory) for r in out) == 4
    finally:
        watcher.stop()
    assert not watcher.connected
