"""The overview's figures: faulty and idle classes by the original's rules (15.1 #1: a pod once),
utilization of the GPUs in the latest complete minute (not the job's column), storage sums
with unknown left unknown; the nodes counted in SQL on every engine."""

from __future__ import annotations

import peewee
import pytest

from lens.store.queries import clusters
from lens.store.queries.clusters import Holding, NodeClass
from lens.store.queries.storage import StorageTotals
from tests.roles.api.conftest import CLUSTER, NOW, T0, node, pod, write_nodes, write_pods
from tests.roles.api.usagerows import at, gpu_minute, write_minutes

# The latest complete minute at NOW.
SETTLED = T0 - 120


def _class(holding: Holding, **values: object) -> NodeClass:
    fields: dict[str, object] = {
        "status": "Ready",
        "tainted": False,
        "holding": holding,
        "nodes": 1,
        "gpus": 8,
        "held": 0,
        **values,
    }
    return NodeClass(**fields)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("taints", "tainted"),
    [("[]", False), ('[{"key": "k", "effect": "NoSchedule"}]', True), ("{", True), ("{}", True)],
)
def test_taints(taints: str, tainted: bool) -> None:
    assert clusters.is_tainted(taints) is tainted


def test_summarize_by_the_originals_rules() -> None:
    figures = clusters.summarize(
        [
            _class(Holding.BUSY, nodes=2, gpus=12, held=12),
            _class(Holding.PARTIAL, held=4, tainted=True),
            _class(Holding.IDLE, status="NotReady"),
            _class(Holding.NO_GPUS, gpus=0),
            _class(Holding.NEITHER, gpus=8, held=-1),
        ]
    )
    assert figures.total_nodes == 6
    assert (figures.healthy_nodes, figures.faulty_nodes) == (4, 2)
    assert (figures.busy_nodes, figures.partially_idle_nodes, figures.fully_idle_nodes) == (
        2,
        1,
        1,
    )
    # A node without GPUs adds none of its figures; one holding fewer than none adds its GPUs.
    assert (figures.total_gpus, figures.allocated_gpus) == (36, 12 + 4 - 1)
    assert figures.allocation_percent == pytest.approx(100 * 15 / 36)


def test_nothing_known_is_none_not_zero(db: peewee.Database) -> None:
    empty = clusters.summarize([])
    assert empty.allocation_percent is None and empty.utilization_percent is None
    write_nodes(db, node("gpu-1"))
    write_minutes(db, "gpu-1", [gpu_minute(SETTLED, "GPU-0")], now=T0)  # utilization unknown
    figures = clusters.overview(db, cluster=CLUSTER, now=NOW)
    assert (figures.minute, figures.utilization_percent) == (at(SETTLED), None)


def test_overview_from_the_tables(db: peewee.Database) -> None:
    write_nodes(db, node("gpu-1"), node("gpu-2", status="Deleted"), node("gpu-3"))
    write_pods(db, pod("p1", node_name="gpu-1", gpus=2), pod("p2", node_name="gpu-1", gpus=1))
    write_pods(db, pod("p3", node_name="gpu-3", gpus=8, phase="Succeeded"))
    figures = clusters.overview(db, cluster=CLUSTER, now=NOW)
    assert figures.total_nodes == 2  # the Deleted node is gone from the cluster
    assert (figures.allocated_gpus, figures.total_gpus) == (3, 16)
    assert figures.storage == StorageTotals()  # no storage rows: unknown
    assert clusters.overview(db, cluster="other", now=NOW) == clusters.ClusterOverview()


def test_the_tables_counted_by_the_originals_rules(db: peewee.Database) -> None:
    """Every class of node and pod, counted in SQL: each figure worked out by hand."""
    write_nodes(
        db,
        node("busy"),
        node("half", taints='[{"key": "k", "effect": "NoSchedule"}]'),
        node("down", status="NotReady", k8s_status="NotReady"),
        node("cpu-only", gpu_count=0),
        node("over", gpu_count=4),
        node("odd", taints="{"),  # taints that cannot be read: not called healthy
        node("gone", status="Deleted"),
        node("spare", gpu_utilization=77.0),  # the job's column: not what is read
    )
    # Each GPU reported in the latest complete minute weighs the same, whatever its node.
    for name, ratios in (("busy", (0.9, 0.7)), ("half", (0.3,)), ("over", (0.5, 0.5, None))):
        gpus = [
            gpu_minute(SETTLED, f"GPU-{i}", utilization_mean_ratio=r) for i, r in enumerate(ratios)
        ]
        write_minutes(db, name, gpus, now=T0)
    write_minutes(
        db, "spare", [gpu_minute(SETTLED - 60, "GPU-0", utilization_mean_ratio=1.0)], now=T0
    )
    write_pods(
        db,
        pod("b", node_name="busy", gpus=8),
        pod("h", node_name="half", gpus=4),
        pod("o1", node_name="over", gpus=4),
        pod("o2", node_name="over", gpus=2),  # more than the node has: all of it held
        pod("x", node_name="odd", gpus=8, phase="Succeeded"),  # ended: holds nothing
        pod("g", node_name="gone", gpus=2),
        pod("n", node_name="nowhere", gpus=1),  # on no node of the table
    )
    figures = clusters.overview(db, cluster=CLUSTER, now=NOW)
    assert figures.total_nodes == 7
    assert (figures.healthy_nodes, figures.faulty_nodes) == (4, 3)  # half, down, odd
    assert (figures.busy_nodes, figures.partially_idle_nodes, figures.fully_idle_nodes) == (
        2,  # busy, over
        1,  # half
        3,  # down, odd, spare
    )
    assert (figures.total_gpus, figures.allocated_gpus) == (8 * 5 + 4, 8 + 4 + 4)
    assert figures.allocation_percent == pytest.approx(100 * 16 / 44)
    # The GPUs known in the latest complete minute; spare's minute before it is not read.
    assert figures.minute == at(SETTLED)
    assert figures.utilization_percent == pytest.approx((90 + 70 + 30 + 50 + 50) / 5)
