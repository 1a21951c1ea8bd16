"""The store's Python side, which scenarios and simulated controllers use."""

from __future__ import annotations

import pytest

from lens.runtime.clock import FakeClock
from lens.sim.kube.resources import Registry
from lens.sim.kube.selectors import FieldSelector, LabelSelector
from lens.sim.kube.status import ApiError
from lens.sim.kube.store import Store


def _store(history: int = 100) -> tuple[Store, Registry]:
    registry = Registry()
    return Store(
        registry, clock=FakeClock(start_time=1_800_000_000), history_size=history
    ), registry


def _pod(name: str) -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {},
        "status": {"phase": "Running"},
    }


def test_controllers_may_keep_status_and_set_it() -> None:
    store, registry = _store()
    pods = registry.find("", "v1", "pods")
    assert pods is not None
    created = store.create(pods, "default", _pod("a"), keep_status=True)
    assert created["status"]["phase"] == "Running"
    assert created["metadata"]["creationTimestamp"] == "2027-01-15T08:00:00Z"
    updated = store.put_status(pods, "default", "a", {"phase": "Succeeded"})
    assert updated["status"] == {"phase": "Succeeded"}
    assert int(updated["metadata"]["resourceVersion"]) == store.resource_version


def test_a_no_op_write_changes_nothing() -> None:
    store, registry = _store()
    pods = registry.find("", "v1", "pods")
    assert pods is not None
    created = store.create(pods, "default", _pod("a"))
    before = store.resource_version
    assert store.patch(pods, "default", "a", "merge", {"metadata": {"labels": None}}) == created
    assert store.resource_version == before


def test_history_is_bounded_and_older_versions_are_gone() -> None:
    store, registry = _store(history=3)
    pods = registry.find("", "v1", "pods")
    assert pods is not None
    start = store.resource_version
    for i in range(5):
        store.create(pods, "default", _pod(f"p{i}"))
    with pytest.raises(ApiError) as caught:
        store.events_since(pods, start)
    assert caught.value.code == 410
    events, reached = store.events_since(pods, start + 2)
    assert [e.obj["metadata"]["name"] for e in events] == ["p2", "p3", "p4"]
    assert reached == store.resource_version
    store.forget_history()
    with pytest.raises(ApiError):
        store.events_since(pods, start + 2)
    assert store.events_since(pods, store.resource_version) == ([], store.resource_version)


def test_generation_follows_spec_changes_only() -> None:
    store, registry = _store()
    deployments = registry.find("apps", "v1", "deployments")
    assert deployments is not None
    created = store.create(
        deployments,
        "default",
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "d"},
            "spec": {"replicas": 1},
        },
    )
    assert created["metadata"]["generation"] == 1
    relabelled = store.patch(
        deployments, "default", "d", "merge", {"metadata": {"labels": {"a": "b"}}}
    )
    assert relabelled["metadata"]["generation"] == 1
    scaled = store.patch(deployments, "default", "d", "merge", {"spec": {"replicas": 3}})
    assert scaled["metadata"]["generation"] == 2
    status = store.put_status(deployments, "default", "d", {"replicas": 3})
    assert status["metadata"]["generation"] == 2


def test_selecting_sorts_by_namespace_and_name() -> None:
    store, registry = _store()
    pods = registry.find("", "v1", "pods")
    assert pods is not None
    for namespace, name in [("kube-system", "b"), ("default", "z"), ("default", "a")]:
        store.create(pods, namespace, _pod(name))
    items, _ = store.select(pods, None, LabelSelector(), FieldSelector())
    assert [(i["metadata"]["namespace"], i["metadata"]["name"]) for i in items] == [
        ("default", "a"),
        ("default", "z"),
        ("kube-system", "b"),
    ]
