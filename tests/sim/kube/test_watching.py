"""Watches through the official client's Watch and SharedInformer."""

from __future__ import annotations

import threading
from collections.abc import Callable

import kubernetes
import pytest
from kubernetes import watch
from kubernetes.client.exceptions import ApiException
from kubernetes.informer import ADDED, DELETED, SharedInformer

from lens.sim.kube.server import KubeApiServer

from .conftest import pod

Eventually = Callable[..., None]


def _collect(stream: object, count: int) -> list[tuple[str, str]]:
    seen = []
    for event in stream:  # type: ignore[attr-defined]
        seen.append((event["type"], event["raw_object"]["metadata"].get("name", "")))
        if len(seen) == count:
            break
    return seen


def test_watch_from_a_list_sees_every_change_in_order(core: kubernetes.client.CoreV1Api) -> None:
    core.create_namespaced_pod("default", pod("before"))
    rv = core.list_namespaced_pod("default").metadata.resource_version
    core.create_namespaced_pod("default", pod("a"))
    core.patch_namespaced_pod("a", "default", {"metadata": {"labels": {"x": "1"}}})
    core.delete_namespaced_pod("a", "default")
    events = _collect(
        watch.Watch().stream(
            core.list_namespaced_pod, "default", resource_version=rv, timeout_seconds=2
        ),
        3,
    )
    assert events == [("ADDED", "a"), ("MODIFIED", "a"), ("DELETED", "a")]


def test_watch_without_a_version_starts_with_the_current_objects(
    core: kubernetes.client.CoreV1Api,
) -> None:
    core.create_namespaced_pod("default", pod("x"))
    core.create_namespaced_pod("default", pod("y"))
    stream = watch.Watch().stream(core.list_namespaced_pod, "default", timeout_seconds=2)
    assert _collect(stream, 2) == [("ADDED", "x"), ("ADDED", "y")]


def test_bookmarks_advance_the_resource_version(core: kubernetes.client.CoreV1Api) -> None:
    rv = core.list_namespaced_pod("default").metadata.resource_version
    core.create_namespaced_config_map("default", {"metadata": {"name": "elsewhere"}})
    watcher = watch.Watch()
    kinds = []
    for event in watcher.stream(
        core.list_namespaced_pod,
        "default",
        resource_version=rv,
        allow_watch_bookmarks=True,
        timeout_seconds=5,
    ):
        kinds.append(event["type"])
        if event["type"] == "BOOKMARK":
            break
    assert kinds == ["BOOKMARK"]
    assert int(watcher.resource_version) > int(rv)


def test_timeout_seconds_ends_the_stream(core: kubernetes.client.CoreV1Api) -> None:
    rv = core.list_namespaced_pod("default").metadata.resource_version
    events = list(
        watch.Watch().stream(
            core.list_namespaced_pod, "default", resource_version=rv, timeout_seconds=1
        )
    )
    assert events == []


def test_a_selector_watch_sees_objects_enter_and_leave(core: kubernetes.client.CoreV1Api) -> None:
    rv = core.list_namespaced_pod("default").metadata.resource_version
    core.create_namespaced_pod("default", pod("m", labels={"team": "a"}))
    core.patch_namespaced_pod("m", "default", {"metadata": {"labels": {"team": "b"}}})
    core.patch_namespaced_pod("m", "default", {"metadata": {"labels": {"team": "a"}}})
    stream = watch.Watch().stream(
        core.list_namespaced_pod,
        "default",
        label_selector="team=b",
        resource_version=rv,
        timeout_seconds=2,
    )
    assert _collect(stream, 2) == [("ADDED", "m"), ("DELETED", "m")]


def test_a_version_older_than_the_history_is_gone(api: kubernetes.client.ApiClient) -> None:
    with KubeApiServer(history_size=3) as small:
        configuration = kubernetes.client.Configuration()
        configuration.host = small.url
        with kubernetes.client.ApiClient(configuration) as client:
            core = kubernetes.client.CoreV1Api(client)
            rv = core.list_namespaced_pod("default").metadata.resource_version
            for i in range(5):
                core.create_namespaced_pod("default", pod(f"p{i}"))
            with pytest.raises(ApiException) as caught:
                list(
                    watch.Watch().stream(
                        core.list_namespaced_pod, "default", resource_version=rv, timeout_seconds=2
                    )
                )
            assert caught.value.status == 410
            recent = core.list_namespaced_pod("default").metadata.resource_version
            assert (
                list(
                    watch.Watch().stream(
                        core.list_namespaced_pod,
                        "default",
                        resource_version=recent,
                        timeout_seconds=1,
                    )
                )
                == []
            )


def test_a_forced_gone_and_a_restart_answer_410(
    kube: KubeApiServer, core: kubernetes.client.CoreV1Api
) -> None:
    rv = core.list_namespaced_pod("default").metadata.resource_version
    kube.faults.force_gone()
    with pytest.raises(ApiException) as forced:
        list(
            watch.Watch().stream(
                core.list_namespaced_pod, "default", resource_version=rv, timeout_seconds=1
            )
        )
    assert forced.value.status == 410
    core.create_namespaced_pod("default", pod("after"))
    kube.restart()
    with pytest.raises(ApiException) as restarted:
        list(
            watch.Watch().stream(
                core.list_namespaced_pod, "default", resource_version=rv, timeout_seconds=1
            )
        )
    assert restarted.value.status == 410


def test_a_closed_watch_resumes_without_losing_events(
    kube: KubeApiServer, core: kubernetes.client.CoreV1Api, eventually: Eventually
) -> None:
    rv = core.list_namespaced_pod("default").metadata.resource_version
    seen: list[str] = []
    watcher = watch.Watch()

    def follow() -> None:
        for event in watcher.stream(core.list_namespaced_pod, "default", resource_version=rv):
            seen.append(event["raw_object"]["metadata"]["name"])
            if len(seen) == 6:
                watcher.stop()

    thread = threading.Thread(target=follow, daemon=True)
    thread.start()
    for i in range(3):
        core.create_namespaced_pod("default", pod(f"a{i}"))
    eventually(lambda: len(seen) == 3)
    kube.faults.close_watches()
    for i in range(3):
        core.create_namespaced_pod("default", pod(f"b{i}"))
    thread.join(5)
    assert seen == ["a0", "a1", "a2", "b0", "b1", "b2"]


def test_a_stalled_watch_delivers_nothing_until_resumed(
    kube: KubeApiServer, core: kubernetes.client.CoreV1Api
) -> None:
    rv = core.list_namespaced_pod("default").metadata.resource_version
    core.create_namespaced_pod("default", pod("quiet"))
    kube.faults.stall_watches()
    with pytest.raises(Exception, match="timed out"):
        list(
            watch.Watch().stream(
                core.list_namespaced_pod, "default", resource_version=rv, _request_timeout=0.5
            )
        )
    kube.faults.resume_watches()
    events = _collect(
        watch.Watch().stream(
            core.list_namespaced_pod, "default", resource_version=rv, timeout_seconds=2
        ),
        1,
    )
    assert events == [("ADDED", "quiet")]


def test_a_shared_informer_relists_after_410_and_sees_what_it_missed(
    kube: KubeApiServer, core: kubernetes.client.CoreV1Api, eventually: Eventually
) -> None:
    core.create_namespaced_pod("default", pod("keep"))
    core.create_namespaced_pod("default", pod("gone"))
    informer = SharedInformer(list_func=core.list_namespaced_pod, namespace="default")
    added: list[str] = []
    deleted: list[str] = []
    informer.add_event_handler(ADDED, lambda o: added.append(o.metadata.name))
    informer.add_event_handler(DELETED, lambda o: deleted.append(o.metadata.name))
    informer.start()
    try:
        eventually(lambda: sorted(added) == ["gone", "keep"])
        kube.faults.stall_watches()
        core.delete_namespaced_pod("gone", "default")
        core.create_namespaced_pod("default", pod("new"))
        kube.faults.force_gone(2)  # the stream and the client's own one retry
        kube.faults.close_watches()
        kube.faults.resume_watches()
        eventually(lambda: deleted == ["gone"] and "new" in added, timeout=10)
        assert sorted(o.metadata.name for o in informer.cache.list()) == ["keep", "new"]
    finally:
        _stop(informer, kube)


def _stop(informer: SharedInformer, kube: KubeApiServer) -> None:
    """Stop an informer for sure.

    Its stop() shuts the watch socket only when a response is open; a stop that lands while
    it reconnects leaves the new stream reading forever (it watches without bookmarks or a
    timeout). Ending streams server-side until the stop returns covers that window.
    """
    stopper = threading.Thread(target=informer.stop, daemon=True)
    stopper.start()
    while stopper.is_alive():
        kube.faults.close_watches()
        stopper.join(0.05)
