from __future__ import annotations

import pytest

from lens.sim.kube.patching import PatchError, json_patch, merge_patch, strategic_merge_patch


def test_merge_patch_follows_rfc_7386() -> None:
    target = {"a": "b", "c": {"d": "e", "f": "g"}, "list": [1, 2]}
    patch = {"a": "z", "c": {"f": None}, "list": [3], "new": {"x": 1}}
    assert merge_patch(target, patch) == {"a": "z", "c": {"d": "e"}, "list": [3], "new": {"x": 1}}
    assert target == {"a": "b", "c": {"d": "e", "f": "g"}, "list": [1, 2]}, (
        "the target is not mutated"
    )
    assert merge_patch({"a": 1}, "x") == "x"


def test_strategic_merge_merges_lists_by_their_keys() -> None:
    target = {
        "metadata": {"finalizers": ["a"], "ownerReferences": [{"uid": "1", "name": "one"}]},
        "spec": {
            "containers": [{"name": "main", "image": "v1"}, {"name": "side", "image": "s"}],
            "tolerations": [{"key": "x"}],
        },
        "status": {"conditions": [{"type": "Ready", "status": "False"}]},
    }
    patch = {
        "metadata": {"finalizers": ["b", "a"], "ownerReferences": [{"uid": "2", "name": "two"}]},
        "spec": {
            "containers": [{"name": "main", "image": "v2"}, {"name": "side", "$patch": "delete"}],
            "tolerations": [{"key": "y"}],
        },
        "status": {
            "conditions": [
                {"type": "Ready", "status": "True"},
                {"type": "Scheduled", "status": "True"},
            ]
        },
    }
    result = strategic_merge_patch(target, patch)
    assert result["metadata"]["finalizers"] == ["a", "b"]
    assert [r["uid"] for r in result["metadata"]["ownerReferences"]] == ["1", "2"]
    assert result["spec"]["containers"] == [{"name": "main", "image": "v2"}]
    assert result["spec"]["tolerations"] == [{"key": "y"}], "lists without a strategy are replaced"
    assert result["status"]["conditions"] == [
        {"type": "Ready", "status": "True"},
        {"type": "Scheduled", "status": "True"},
    ]


def test_strategic_merge_directives() -> None:
    target = {
        "metadata": {"finalizers": ["a", "b", "c"], "labels": {"x": "1"}},
        "spec": {"a": 1, "b": 2},
    }
    patch = {
        "metadata": {
            "$deleteFromPrimitiveList/finalizers": ["b"],
            "$setElementOrder/finalizers": ["a", "c"],
        },
        "spec": {"$patch": "replace", "c": 3},
    }
    result = strategic_merge_patch(target, patch)
    assert result["metadata"] == {"finalizers": ["a", "c"], "labels": {"x": "1"}}
    assert result["spec"] == {"c": 3}
    with pytest.raises(PatchError, match="merge key"):
        strategic_merge_patch(
            {"spec": {"containers": []}}, {"spec": {"containers": [{"image": "x"}]}}
        )


def test_json_patch_follows_rfc_6902() -> None:
    document = {"a": {"b": [1, 2]}, "c": "d", "e~f": 1, "g/h": 2}
    operations = [
        {"op": "add", "path": "/a/b/1", "value": 9},
        {"op": "add", "path": "/a/b/-", "value": 3},
        {"op": "remove", "path": "/c"},
        {"op": "replace", "path": "/e~0f", "value": 5},
        {"op": "move", "from": "/g~1h", "path": "/moved"},
        {"op": "copy", "from": "/moved", "path": "/copied"},
        {"op": "test", "path": "/a/b/0", "value": 1},
    ]
    assert json_patch(document, operations) == {
        "a": {"b": [1, 9, 2, 3]},
        "e~f": 5,
        "moved": 2,
        "copied": 2,
    }
    assert document["c"] == "d", "the document is not mutated"


@pytest.mark.parametrize(
    "operations",
    [
        {"op": "add"},
        [{"op": "test", "path": "/a", "value": 2}],
        [{"op": "remove", "path": "/missing"}],
        [{"op": "replace", "path": "/missing", "value": 1}],
        [{"op": "add", "path": "/list/9", "value": 1}],
        [{"op": "add", "path": "no-slash", "value": 1}],
        [{"op": "frobnicate", "path": "/a"}],
        [{"op": "add", "path": "/a"}],
    ],
)
def test_bad_json_patches_are_errors(operations: object) -> None:
    with pytest.raises(PatchError):
        json_patch({"a": 1, "list": []}, operations)
