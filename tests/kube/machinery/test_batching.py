"""The writer hands changes on in order, in batches, and retries a failed batch whole."""

from __future__ import annotations

import threading
from collections.abc import Callable

from lens.kube.machinery.batching import Batch, ChangeBatcher
from lens.kube.machinery.cache import Change, ChangeType
from lens.kube.machinery.resources import Kind
from lens.runtime.backoff import Backoff

JOBS = Kind(api_version="batch/v1", kind="Job", plural="jobs", namespaced=True)


def _change(name: str) -> Change:
    return Change(type=ChangeType.ADDED, object={"metadata": {"name": name}}, old=None)


def _names(batch: Batch) -> list[str]:
    return [c.object["metadata"]["name"] for c in batch.pods]


def test_batches_keep_the_order_and_their_size_limit() -> None:
    seen: list[Batch] = []
    batcher = ChangeBatcher(seen.append, max_changes=3, max_pending=100)
    for i in range(7):
        batcher.add_pods([_change(f"p{i}")])
    batcher.pods_listed()
    batcher.add_workloads(JOBS, [_change("j0")])
    batcher.kind_listed(JOBS)
    assert batcher.pending == 8
    batcher.start()
    try:
        while not batcher.idle():
            threading.Event().wait(0.01)
    finally:
        batcher.stop()
    assert [_names(b) for b in seen] == [["p0", "p1", "p2"], ["p3", "p4", "p5"], ["p6"]]
    assert seen[2].pods_listed and [k.kind for k in seen[2].kinds_listed] == ["Job"]
    assert [(k.kind, c.object["metadata"]["name"]) for k, c in seen[2].workloads] == [("Job", "j0")]
    assert all(len(b.enqueued) == len(b) for b in seen)
    assert batcher.pending == 0


def test_a_failed_batch_is_offered_again_with_what_came_meanwhile(
    eventually: Callable[..., None],
) -> None:
    seen: list[list[str]] = []
    failures: list[BaseException] = []
    outage = threading.Event()
    outage.set()

    def sink(batch: Batch) -> None:
        if outage.is_set():
            raise ConnectionError("database down")
        seen.append(_names(batch))

    batcher = ChangeBatcher(
        sink,
        max_changes=100,
        max_pending=100,
        backoff=Backoff(initial=0.01, maximum=0.05),
        on_failure=failures.append,
    )
    batcher.start()
    try:
        batcher.add_pods([_change("a"), _change("b")])
        eventually(lambda: len(failures) >= 2)
        batcher.add_pods([_change("c")])
        eventually(lambda: len(failures) >= 3)
        assert batcher.pending == 3 and not batcher.idle()
        outage.clear()
        eventually(batcher.idle)
    finally:
        batcher.stop()
    assert [name for names in seen for name in names] == ["a", "b", "c"]


def test_stop_ends_a_writer_waiting_for_work() -> None:
    batcher = ChangeBatcher(lambda batch: None, max_changes=10, max_pending=10)
    batcher.start()
    batcher.stop(timeout=2)
    assert batcher.idle()


def test_reflectors_wait_for_room_once_max_pending_changes_wait(
    eventually: Callable[..., None],
) -> None:
    seen: list[list[str]] = []
    writing = threading.Event()

    def sink(batch: Batch) -> None:
        writing.wait()
        seen.append(_names(batch))

    batcher = ChangeBatcher(sink, max_changes=2, max_pending=4)
    batcher.start()
    adding = threading.Thread(
        target=lambda: [batcher.add_pods([_change(f"p{i}")]) for i in range(8)]
    )
    try:
        adding.start()
        eventually(lambda: batcher.pending == 4)
        batcher.pods_listed()  # a marker never waits
        assert adding.is_alive() and batcher.pending == 4
        writing.set()
        adding.join(timeout=10)
        eventually(batcher.idle)
    finally:
        writing.set()
        batcher.stop()
    assert [name for names in seen for name in names] == [f"p{i}" for i in range(8)]


def test_stop_releases_a_reflector_waiting_for_room() -> None:
    batcher = ChangeBatcher(lambda batch: None, max_changes=1, max_pending=1)
    batcher.add_pods([_change("a")])  # no writer running: the queue stays full
    adding = threading.Thread(target=batcher.add_pods, args=([_change("b")],))
    adding.start()
    batcher.stop()
    adding.join(timeout=10)
    assert not adding.is_alive()


def test_a_listing_is_queued_and_written_in_batch_sized_parts() -> None:
    seen: list[list[str]] = []
    batcher = ChangeBatcher(lambda batch: seen.append(_names(batch)), max_changes=3, max_pending=3)
    batcher.start()
    try:
        batcher.add_pods([_change(f"p{i}") for i in range(7)])  # waits for room twice
        batcher.pods_listed()
        while not batcher.idle():
            threading.Event().wait(0.01)
    finally:
        batcher.stop()
    assert seen == [["p0", "p1", "p2"], ["p3", "p4", "p5"], ["p6"]]
