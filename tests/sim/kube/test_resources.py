from __future__ import annotations

import pytest

from lens.sim.kube import resources
from lens.sim.kube.resources import Registry


def test_builtin_groups_and_resource_lists() -> None:
    registry = Registry()
    groups = registry.api_groups()["groups"]
    assert groups[0]["name"] == "apps"
    core = registry.resource_list("", "v1")
    assert core is not None and core["groupVersion"] == "v1"
    names = {r["name"] for r in core["resources"]}
    assert {"pods", "pods/status", "nodes", "namespaces", "configmaps"} <= names
    assert "configmaps/status" not in names
    assert registry.resource_list("nope", "v1") is None
    assert registry.by_kind("batch/v1", "Job") is not None


def test_crds_declare_one_type_per_served_version() -> None:
    crd = {
        "metadata": {"name": "things.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Cluster",
            "names": {"plural": "things", "kind": "Thing", "shortNames": ["th"]},
            "versions": [
                {"name": "v1", "served": True},
                {"name": "v2", "served": True, "subresources": {"status": {}}},
                {"name": "v0", "served": False},
            ],
        },
    }
    types = resources.from_crd(crd)
    assert [(t.version, t.namespaced, t.status) for t in types] == [
        ("v1", False, False),
        ("v2", False, True),
    ]
    with pytest.raises(ValueError, match=r"metadata\.name"):
        resources.from_crd({**crd, "metadata": {"name": "x"}})
    with pytest.raises(ValueError, match=r"spec\.group"):
        resources.from_crd({"spec": {}})
