from __future__ import annotations

import threading
from collections.abc import Callable, Iterator

import pytest

from lens.containers.model import ContainerEvent, EventType, Inventory, Record, Source
from lens.containers.node.records import ContainerRecord, RuntimeEvent, TaskRecord
from lens.containers.node.tracking import ContainerTracker
from lens.containers.node.watching import (
    MALFORMED,
    RECORD,
    ContainerWatcher,
    MalformedError,
    Skipped,
    WatcherMetrics,
)
from lens.runtime import errors
from lens.runtime.backoff import Backoff
from lens.runtime.selfmetrics import SelfMetrics


class Stream:
    def __init__(self, fail: bool) -> None:
        self._fail = fail
        self._cancelled = threading.Event()

    def __iter__(self) -> Iterator[RuntimeEvent | Skipped]:
        if self._fail:
            raise errors.SourceError("containerd closed the event stream")
        self._cancelled.wait(10)
        return iter(())

    def cancel(self) -> None:
        self._cancelled.set()


class FlakyRuntime:
    """Its first two streams break at once; the third stays open."""

    address = "/run/flaky.sock"

    def __init__(self) -> None:
        self.subscribed = 0
        self.records: dict[str, ContainerRecord] = {}

    def close(self) -> None:
        """Nothing held."""

    def subscribe(self) -> Stream:
        self.subscribed += 1
        return Stream(fail=self.subscribed <= 2)

    def get_container(self, container_id: str) -> ContainerRecord | None:
        return self.records.get(container_id)

    def list_containers(self) -> list[ContainerRecord]:
        return list(self.records.values())

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


class CrashingRuntime(FlakyRuntime):
    """Its first stream fails as a bug would (no Lens error); the second subscription waits for
    `resume`, then stays open with `items` (events, skipped messages) to follow."""

    def __init__(self, items: list[RuntimeEvent | Skipped]) -> None:
        super().__init__()
        self.resume = threading.Event()
        self.items = items
        self.records = {
            "c1": ContainerRecord(id="c1", labels={}, image="i", spec=b"", created_at=1.0)
        }

    def subscribe(self) -> Stream:
        self.subscribed += 1
        if self.subscribed == 1:
            return BuggyStream()
        self.resume.wait(10)
        return ScriptedStream(self.items)

    def get_container(self, container_id: str) -> ContainerRecord | None:
        if container_id == "odd":
            raise MalformedError("docker Config is no JSON object", reason=RECORD)
        return self.records.get(container_id)


class BuggyStream(Stream):
    def __init__(self) -> None:
        super().__init__(fail=False)

    def __iter__(self) -> Iterator[RuntimeEvent | Skipped]:
        raise AttributeError("'list' object has no attribute 'get'")


class ScriptedStream(Stream):
    def __init__(self, items: list[RuntimeEvent | Skipped]) -> None:
        super().__init__(fail=False)
        self._items = items

    def __iter__(self) -> Iterator[RuntimeEvent | Skipped]:
        yield from self._items
        self._cancelled.wait(10)


def _value(metrics: SelfMetrics, name: str, **labels: str) -> float:
    return metrics.registry.get_sample_value(name, labels) or 0.0


def test_a_watcher_that_fails_restarts_and_is_not_connected_meanwhile(
    eventually: Callable[..., None],
) -> None:
    """Before the fix, the AttributeError ended the thread with `connected` still true."""
    out: list[Record] = []
    tracker = ContainerTracker(
        source=Source.DOCKER, lookup=lambda a, b: None, emit=out.append, all_containers=True
    )
    runtime = CrashingRuntime([RuntimeEvent(topic="/tasks/start", container_id="c1", time=2.0)])
    metrics = SelfMetrics(process=False)
    watcher = ContainerWatcher(
        client=runtime,
        tracker=tracker,
        wall_time=lambda: 1.0,
        backoff=Backoff(initial=0.01, maximum=0.02),
        metrics=WatcherMetrics(metrics),
    )
    watcher.start()
    try:
        eventually(lambda: runtime.subscribed == 2)
        assert not watcher.connected and watcher.crashes == 1
        assert watcher.failure == "AttributeError: 'list' object has no attribute 'get'"
        assert (
            _value(
                metrics,
                "lens_container_runtime_watch_restarts_total",
                runtime="docker",
                reason="crash",
            )
            == 1
        )
        runtime.resume.set()
        eventually(lambda: watcher.connected and watcher.events == 1)
        assert watcher.failure is None and watcher.subscriptions == 2
        started = [r for r in out if isinstance(r, ContainerEvent) and r.type is EventType.STARTED]
        assert [e.container.id for e in started] == ["c1"]
    finally:
        watcher.stop()


def test_odd_events_are_counted_and_skipped_and_the_stream_goes_on(
    eventually: Callable[..., None],
) -> None:
    out: list[Record] = []
    tracker = ContainerTracker(
        source=Source.DOCKER, lookup=lambda a, b: None, emit=out.append, all_containers=True
    )
    items: list[RuntimeEvent | Skipped] = [
        Skipped(reason=MALFORMED, detail="docker event Actor is no JSON object"),
        RuntimeEvent(topic="/containers/create", container_id="odd", time=2.0),
        Skipped(reason=MALFORMED, detail="docker event time 'x' is no number"),
        RuntimeEvent(topic="/tasks/start", container_id="c1", time=3.0),
    ]
    runtime = CrashingRuntime(items)
    runtime.subscribed = 1  # no crash first
    runtime.resume.set()
    metrics = SelfMetrics(process=False)
    watcher = ContainerWatcher(
        client=runtime, tracker=tracker, wall_time=lambda: 1.0, metrics=WatcherMetrics(metrics)
    )
    watcher.start()
    try:
        eventually(lambda: watcher.events == 2 and sum(watcher.skipped.values()) == 3)
        assert watcher.connected and (watcher.subscriptions, watcher.errors, watcher.crashes) == (
            1,
            0,
            0,
        )
        assert watcher.skipped == {MALFORMED: 2, RECORD: 1}
        assert (
            _value(
                metrics,
                "lens_container_runtime_events_skipped_total",
                runtime="docker",
                reason=MALFORMED,
            )
            == 2
        )
        assert (
            _value(
                metrics,
                "lens_container_runtime_events_skipped_total",
                runtime="docker",
                reason=RECORD,
            )
            == 1
        )
        started = [r for r in out if isinstance(r, ContainerEvent) and r.type is EventType.STARTED]
        assert [(e.container.id, e.time) for e in started] == [("c1", 3.0)]
    finally:
        watcher.stop()
    assert not watcher.connected
