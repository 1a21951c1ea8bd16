"""Nodes read from `nodes`: sorted on the allow-list with unknown values last either way and
ties broken by name, so a page boundary falls in the same place on every engine; utilization
from the cluster's latest complete minute, not the job's column."""

from __future__ import annotations

import datetime

import peewee
import pytest

from lens.store.queries import nodes
from lens.store.queries.reading import Page
from tests.roles.api.conftest import CLUSTER, NOW, T0, node, write_nodes
from tests.roles.api.usagerows import at, gpu_minute, write_minutes

FIRST_TEN = Page(limit=10)
# The latest complete minute at NOW (a minute is read once it ended a minute before).
SETTLED = T0 - 2 * 60


def _listed(
    db: peewee.Database,
    sort: nodes.NodeSort | None = None,
    page: Page = FIRST_TEN,
    now: datetime.datetime = NOW,
) -> nodes.NodePage:
    return nodes.list_nodes(
        db,
        cluster=CLUSTER,
        wanted=nodes.NodeFilter(),
        sort=sort or nodes.NodeSort(),
        page=page,
        now=now,
    )


def _names(db: peewee.Database, sort: nodes.NodeSort, page: Page = FIRST_TEN) -> list[str]:
    return [row.name for row in _listed(db, sort, page).rows]


def _busy(db: peewee.Database, node_name: str, *ratios: float | None, minute: float) -> None:
    """The node's GPUs' utilization in `minute`."""
    gpus = [gpu_minute(minute, f"GPU-{i}", utilization_mean_ratio=r) for i, r in enumerate(ratios)]
    write_minutes(db, node_name, gpus, now=T0)


def test_unknown_utilization_sorts_last_both_ways(db: peewee.Database) -> None:
    # The job's column says otherwise: the minutes are what is read.
    write_nodes(
        db,
        node("a", gpu_utilization=1.0),
        node("b", gpu_utilization=90.0),
        node("c"),
        node("d"),
    )
    _busy(db, "a", 0.5, minute=SETTLED)
    _busy(db, "b", None, minute=SETTLED)
    _busy(db, "c", 0.05, 0.15, None, minute=SETTLED)
    _busy(db, "d", 0.5, minute=SETTLED)
    up = nodes.NodeSort(column="gpu_utilization")
    down = nodes.NodeSort(column="gpu_utilization", descending=True)
    assert _names(db, up) == ["c", "a", "d", "b"]
    assert _names(db, down) == ["a", "d", "c", "b"]  # ties by name, ascending
    assert _names(db, down, Page(offset=1, limit=2)) == ["d", "c"]


def test_utilization_is_each_nodes_mean_in_the_latest_complete_minute(
    db: peewee.Database,
) -> None:
    write_nodes(db, node("a"), node("b"), node("c"))
    _busy(db, "a", 0.2, 0.4, minute=SETTLED - 60)
    _busy(db, "a", 0.6, 1.0, None, minute=SETTLED)
    _busy(db, "b", 0.9, minute=SETTLED - 60)  # silent since: unknown now, not its old figure
    _busy(db, "c", 0.3, minute=SETTLED + 60)  # not settled yet: not read before the others
    found = _listed(db)
    busy = {r.name: r.gpu_utilization for r in found.rows}
    assert busy["a"] == pytest.approx(80.0) and busy["b"] is None and busy["c"] is None
    assert found.minute == at(SETTLED)
    # Nothing recent: no minute, every utilization unknown.
    later = _listed(db, now=at(T0 + 3600))
    assert later.minute is None and {r.gpu_utilization for r in later.rows} == {None}


def test_filters_and_total(db: peewee.Database) -> None:
    write_nodes(db, node("gpu-1"), node("gpu-2", status="NotReady"), node("cpu-1", gpu_name=""))
    wanted = nodes.NodeFilter(name="GPU", statuses=("Ready", "Unknown"))
    found = nodes.list_nodes(
        db, cluster=CLUSTER, wanted=wanted, sort=nodes.NodeSort(), page=Page(limit=1), now=NOW
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
