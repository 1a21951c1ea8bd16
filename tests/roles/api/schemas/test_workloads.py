"""The workload payloads: a hierarchy nests as deep as its tree, and /openapi.json describes the
recursion and the figures that may be null."""

from __future__ import annotations

from lens.roles.api.schemas import workloads


def test_a_hierarchy_nests() -> None:
    leaf = workloads.WorkloadHierarchy(kind="Job", name="j", namespace="ml", uid="j1", children=[])
    tree = workloads.WorkloadHierarchy(
        kind="CronJob", name="c", namespace="ml", uid="c1", children=[leaf]
    )
    assert tree.model_dump()["children"][0] == {
        "kind": "Job",
        "name": "j",
        "namespace": "ml",
        "uid": "j1",
        "children": [],
    }


def test_unknown_figures_are_nullable_in_the_schema() -> None:
    schema = workloads.WorkloadListItem.model_json_schema()
    allocation = schema["properties"]["gpu_allocation"]["anyOf"]
    assert {"type": "null"} in allocation
    assert {"type": "null"} in schema["properties"]["end_at"]["anyOf"]
    stat = workloads.StorageStat.model_json_schema()["properties"]
    assert all({"type": "null"} in figure["anyOf"] for figure in stat.values())
