from __future__ import annotations

from lens.kube.machinery.cache import ChangeType, JsonObject, ObjectCache


def _pod(uid: str, rv: str, *, node: str = "n1", ns: str = "a", owner: str = "") -> JsonObject:
    metadata: JsonObject = {"uid": uid, "resourceVersion": rv, "namespace": ns, "name": uid}
    if owner:
        metadata["ownerReferences"] = [{"uid": owner, "kind": "Job", "name": owner}]
    return {"metadata": metadata, "spec": {"nodeName": node}}


def test_events_keep_the_indexes_current_and_repeats_change_nothing() -> None:
    cache = ObjectCache()
    added = cache.apply(ChangeType.ADDED, _pod("p1", "1", owner="job-1"))
    assert added is not None and added.type is ChangeType.ADDED and added.old is None
    assert cache.apply(ChangeType.MODIFIED, _pod("p1", "1", owner="job-1")) is None
    moved = cache.apply(ChangeType.MODIFIED, _pod("p1", "2", node="n2", owner="job-1"))
    assert moved is not None and moved.type is ChangeType.MODIFIED
    assert moved.old is not None and moved.old["spec"]["nodeName"] == "n1"
    assert cache.on_node("n1") == [] and [p["metadata"]["uid"] for p in cache.on_node("n2")] == [
        "p1"
    ]
    assert len(cache.owned_by("job-1")) == 1 and len(cache.in_namespace("a")) == 1
    deleted = cache.apply(ChangeType.DELETED, _pod("p1", "3", node="n2"))
    assert deleted is not None and deleted.type is ChangeType.DELETED
    assert cache.apply(ChangeType.DELETED, _pod("p1", "3")) is None, "already gone"
    assert (len(cache), cache.on_node("n2"), cache.owned_by("job-1")) == (0, [], [])
    assert cache.apply(ChangeType.ADDED, {"metadata": {}}) is None, "no uid: not cached"


def test_a_listing_yields_the_difference_including_deletions() -> None:
    cache = ObjectCache()
    cache.replace([_pod("p1", "1"), _pod("p2", "1"), _pod("p3", "1")])
    changes = cache.replace([_pod("p1", "1"), _pod("p2", "5"), _pod("p4", "6")])
    assert sorted((c.type.value, c.object["metadata"]["uid"]) for c in changes) == [
        ("ADDED", "p4"),
        ("DELETED", "p3"),
        ("MODIFIED", "p2"),
    ]
    assert sorted(p["metadata"]["uid"] for p in cache.objects()) == ["p1", "p2", "p4"]
    assert cache.get("p3") is None and cache.get("p2") is not None
