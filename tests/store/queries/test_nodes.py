"""Nodes read from `nodes`: sorted on the allow-list with unknown values last either way and
ties broken by name, so a page boundary falls in the same place on every engine."""

from __future__ import annotations

import peewee
import pytest

from lens.store.queries import nodes
from lens.store.queries.reading import Page
from tests.roles.api.conftest import CLUSTER, node, write_nodes

FIRST_TEN = Page(limit=10)


def _names(db: peewee.Database, sort: nodes.NodeSort, page: Page = FIRST_TEN) -> list[str]:
    found = nodes.list_nodes(db, cluster=CLUSTER, wanted=nodes.NodeFilter(), sort=sort, page=page)
    return [row.name for row in found.rows]


def test_unknown_utilization_sorts_last_both_ways(db: peewee.Database) -> None:
    write_nodes(
        db,
        node("a", gpu_utilization=50.0),
        node("b", gpu_utilization=None),
        node("c", gpu_utilization=10.0),
        node("d", gpu_utilization=50.0),
    )
    up = nodes.NodeSort(column="gpu_utilization")
    down = nodes.NodeSort(column="gpu_utilization", descending=True)
    assert _names(db, up) == ["c", "a", "d", "b"]
    assert _names(db, down) == ["a", "d", "c", "b"]  # ties by name, ascending
    assert _names(db, down, Page(offset=1, limit=2)) == ["d", "c"]


def test_filters_and_total(db: peewee.Database) -> None:
    write_nodes(db, node("gpu-1"), node("gpu-2", status="NotReady"), node("cpu-1", gpu_name=""))
    wanted = nodes.NodeFilter(name="GPU", statuses=("Ready", "Unknown"))
    found = nodes.list_nodes(
        db, cluster=CLUSTER, wanted=wanted, sort=nodes.NodeSort(), page=Page(limit=1)
    )
    assert [r.name for r in found.rows] == ["gpu-1"] and found.total == 1


def test_one_node_by_name(db: peewee.Database) -> None:
    write_nodes(db, node("gpu-1", cpu_count=96))
    found = nodes.get_node(db, cluster=CLUSTER, name="gpu-1")
    assert found is not None and found.cpu_count == 96 and found.status == "Ready"
    assert nodes.get_node(db, cluster=CLUSTER, name="gpu-2") is None
    assert nodes.get_node(db, cluster="other", name="gpu-1") is None


def test_only_allowed_columns_sort() -> None:
    with pytest.raises(ValueError):
        nodes.NodeSort(column="taints")
