"""The reflector against the API emulator, with its faults: 410 Gone, stalled, dropped and
failing watches, and an API server restart that loses the history."""

from __future__ import annotations

import errno
import os
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import kubernetes
import pytest
import urllib3

from lens.kube.machinery.cache import Change, ObjectCache
from lens.kube.machinery.reflector import Keep, Reflector, WatchSettings
from lens.runtime.backoff import Backoff
from lens.sim.kube.server import KubeApiServer

pytestmark = pytest.mark.slow_timeout


class Seen:
    """Every change the reflector hands on, by (type, pod name)."""

    def __init__(self) -> None:
        self.changes: list[Change] = []
        self._lock = threading.Lock()

    def __call__(self, changes: list[Change]) -> None:
        with self._lock:
            self.changes.extend(changes)

    def count(self) -> Counter[tuple[str, str]]:
        with self._lock:
            return Counter((c.type.value, c.object["metadata"]["name"]) for c in self.changes)


def _pod(name: str) -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"containers": [{"name": "main", "image": "busybox"}]},
    }


@pytest.fixture
def start(core: kubernetes.client.CoreV1Api) -> Iterator[Callable[..., tuple[Reflector, Seen]]]:
    started: list[Reflector] = []

    def make(keep: Keep | None = None, **settings: object) -> tuple[Reflector, Seen]:
        seen = Seen()
        reflector = Reflector(
            name="pods",
            list_func=core.list_pod_for_all_namespaces,
            cache=ObjectCache(),
            handle=seen,
            settings=WatchSettings(**{"stall_seconds": 10.0, **settings}),  # type: ignore[arg-type]
            backoff=Backoff(initial=0.05, maximum=0.2),
            keep=keep,
        )
        reflector.start()
        started.append(reflector)
        assert reflector.wait_synced(10)
        return reflector, seen

    yield make
    for reflector in started:
        reflector.stop()


def test_a_listing_then_every_change_in_order(
    core: kubernetes.client.CoreV1Api,
    start: Callable[..., tuple[Reflector, Seen]],
    eventually: Callable[..., None],
) -> None:
    for i in range(5):
        core.create_namespaced_pod("default", _pod(f"old-{i}"))
    reflector, seen = start(page_size=2)  # three pages
    assert seen.count() == Counter({("ADDED", f"old-{i}"): 1 for i in range(5)})
    core.create_namespaced_pod("default", _pod("new"))
    core.patch_namespaced_pod("new", "default", {"metadata": {"labels": {"a": "b"}}})
    core.delete_namespaced_pod("old-0", "default")
    eventually(lambda: seen.count()[("DELETED", "old-0")] == 1, timeout=10)
    names = [(c.type.value, c.object["metadata"]["name"]) for c in seen.changes[5:]]
    assert names == [("ADDED", "new"), ("MODIFIED", "new"), ("DELETED", "old-0")]
    assert len(reflector.cache) == 5 and reflector.stats.lists == 1
    eventually(lambda: reflector.stats.bookmarks > 0, timeout=5)


def test_after_410_a_relist_reports_what_happened_meanwhile_as_deletions(
    apiserver: KubeApiServer,
    core: kubernetes.client.CoreV1Api,
    start: Callable[..., tuple[Reflector, Seen]],
    eventually: Callable[..., None],
) -> None:
    for name in ("keep", "gone"):
        core.create_namespaced_pod("default", _pod(name))
    reflector, seen = start()
    apiserver.faults.stall_watches()  # the deletion is not sent on the open stream...
    core.delete_namespaced_pod("gone", "default")
    apiserver.restart()  # ...and the API server forgets its history: 410 on reconnect
    apiserver.faults.resume_watches()
    eventually(lambda: seen.count()[("DELETED", "gone")] == 1, timeout=10)
    assert reflector.stats.relists_after_gone >= 1
    core.create_namespaced_pod("default", _pod("after"))
    eventually(lambda: seen.count()[("ADDED", "after")] == 1, timeout=10)
    assert seen.count()[("ADDED", "keep")] == 1, "the relist adds nothing it had"


def test_a_forced_410_relists_without_repeating_anything(
    apiserver: KubeApiServer,
    core: kubernetes.client.CoreV1Api,
    start: Callable[..., tuple[Reflector, Seen]],
    eventually: Callable[..., None],
) -> None:
    core.create_namespaced_pod("default", _pod("p1"))
    reflector, seen = start()
    apiserver.faults.force_gone(1)
    apiserver.faults.close_watches()
    eventually(lambda: reflector.stats.relists_after_gone == 1, timeout=10)
    core.create_namespaced_pod("default", _pod("p2"))
    eventually(lambda: seen.count()[("ADDED", "p2")] == 1, timeout=10)
    assert seen.count() == Counter({("ADDED", "p1"): 1, ("ADDED", "p2"): 1})


def test_a_stalled_stream_is_dropped_and_reopened(
    apiserver: KubeApiServer,
    core: kubernetes.client.CoreV1Api,
    start: Callable[..., tuple[Reflector, Seen]],
    eventually: Callable[..., None],
) -> None:
    reflector, seen = start(stall_seconds=0.5)
    apiserver.faults.stall_watches()
    core.create_namespaced_pod("default", _pod("during"))
    eventually(lambda: reflector.stats.stalls >= 1, timeout=10)
    apiserver.faults.resume_watches()
    eventually(lambda: seen.count()[("ADDED", "during")] == 1, timeout=10)
    watches = reflector.stats.watches
    assert watches >= 2, "reopened after the stall"


def test_dropped_watches_and_failing_requests_lose_and_repeat_nothing(
    apiserver: KubeApiServer,
    core: kubernetes.client.CoreV1Api,
    start: Callable[..., tuple[Reflector, Seen]],
    eventually: Callable[..., None],
) -> None:
    reflector, seen = start()
    closed = 0

    def close_the_open_watch() -> None:
        # Each close meets a watch: under load the reflector may not have reopened one yet,
        # and a close with none open would test nothing.
        nonlocal closed
        eventually(lambda: reflector.stats.watches > closed, timeout=15)
        apiserver.faults.close_watches()
        closed += 1

    for i in range(30):
        core.create_namespaced_pod("default", _pod(f"p{i}"))
        if i % 5 == 0:
            close_the_open_watch()
        if i == 12:
            apiserver.faults.fail_requests(500, count=2, method="GET")
            close_the_open_watch()
    eventually(lambda: len(seen.count()) == 30, timeout=15)
    assert seen.count() == Counter({("ADDED", f"p{i}"): 1 for i in range(30)})
    assert reflector.stats.errors >= 1 and reflector.stats.watches >= 3


def test_stop_is_prompt_even_on_a_quiet_stream(
    start: Callable[..., tuple[Reflector, Seen]],
) -> None:
    reflector, _ = start(stall_seconds=60.0)
    time.sleep(0.3)  # in the watch, waiting for the next line
    began = time.monotonic()
    reflector.stop()
    assert time.monotonic() - began < 3.0


def test_stop_copes_with_a_stream_whose_socket_just_closed(
    start: Callable[..., tuple[Reflector, Seen]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A watch that times out has its socket closed by urllib3 just before the reflector lets
    go of the response (seen in CI): a stop() at that moment meets EBADF, and must still stop
    the reflector rather than raise."""
    reflector, _ = start(stall_seconds=60.0)
    time.sleep(0.3)  # in the watch, waiting for the next line

    def closed(response: urllib3.response.HTTPResponse) -> None:
        raise OSError(errno.EBADF, os.strerror(errno.EBADF))

    monkeypatch.setattr(urllib3.response.HTTPResponse, "shutdown", closed)
    reflector.stop(timeout=0.5)  # raised OSError: [Errno 9] Bad file descriptor
    monkeypatch.undo()


def test_after_each_listing_the_hook_sees_the_cache_as_listed(
    apiserver: KubeApiServer,
    core: kubernetes.client.CoreV1Api,
    eventually: Callable[..., None],
) -> None:
    for name in ("a", "b"):
        core.create_namespaced_pod("default", _pod(name))
    cache = ObjectCache()
    listed: list[set[str]] = []
    reflector = Reflector(
        name="pods",
        list_func=core.list_pod_for_all_namespaces,
        cache=cache,
        handle=Seen(),
        settings=WatchSettings(stall_seconds=10.0),
        backoff=Backoff(initial=0.05, maximum=0.2),
        on_listed=lambda: listed.append({o["metadata"]["name"] for o in cache.objects()}),
    )
    reflector.start()
    try:
        assert reflector.wait_synced(10)
        assert listed == [{"a", "b"}]
        core.delete_namespaced_pod("a", "default")
        apiserver.faults.force_gone(1)
        apiserver.faults.close_watches()
        eventually(lambda: len(listed) == 2, timeout=10)
        assert listed[1] == {"b"}
    finally:
        reflector.stop()


def test_managed_fields_are_not_kept(
    core: kubernetes.client.CoreV1Api,
    start: Callable[..., tuple[Reflector, Seen]],
    eventually: Callable[..., None],
) -> None:
    body = _pod("listed")
    managed = [{"manager": "kubectl", "operation": "Update", "fieldsV1": {"f:spec": {}}}]
    body["metadata"] = {"name": "listed", "namespace": "default", "managedFields": managed}
    core.create_namespaced_pod("default", body)
    reflector, _ = start()
    watched = _pod("watched")
    watched["metadata"] = {"name": "watched", "namespace": "default", "managedFields": managed}
    core.create_namespaced_pod("default", watched)
    eventually(lambda: len(reflector.cache) == 2, timeout=10)
    for obj in reflector.cache.objects():
        assert "managedFields" not in obj["metadata"]
        assert obj["metadata"]["name"] in {"listed", "watched"}


def test_keep_cuts_listed_and_watched_objects_before_they_are_cached(
    core: kubernetes.client.CoreV1Api,
    start: Callable[..., tuple[Reflector, Seen]],
    eventually: Callable[..., None],
) -> None:
    def metadata_only(obj: dict[str, Any]) -> dict[str, Any]:
        return {"metadata": obj["metadata"]}

    core.create_namespaced_pod("default", _pod("listed"))
    reflector, seen = start(keep=metadata_only)
    core.create_namespaced_pod("default", _pod("watched"))
    eventually(lambda: seen.count()[("ADDED", "watched")] == 1)
    cached = reflector.cache.objects()
    assert sorted(obj["metadata"]["name"] for obj in cached) == ["listed", "watched"]
    assert all(set(obj) == {"metadata"} for obj in cached)
    assert all(set(change.object) == {"metadata"} for change in seen.changes)
