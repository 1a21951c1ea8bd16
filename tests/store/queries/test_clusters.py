"""The overview's figures: faulty and idle classes by the original's rules (15.1 #1: a pod once),
GPU-weighted utilization, storage sums with unknown left unknown."""

from __future__ import annotations

import peewee
import pytest

from lens.store.queries import clusters
from lens.store.queries.clusters import NodeLoad
from lens.store.queries.storage import StorageTotals
from tests.roles.api.conftest import CLUSTER, node, pod, write_nodes, write_pods


def _load(name: str, **values: object) -> NodeLoad:
    fields: dict[str, object] = {
        "name": name,
        "status": "Ready",
        "tainted": False,
        "gpu_count": 8,
        "gpus_held": 0,
        "utilization_percent": None,
        **values,
    }
    return NodeLoad(**fields)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("taints", "tainted"),
    [("[]", False), ('[{"key": "k", "effect": "NoSchedule"}]', True), ("{", True), ("{}", True)],
)
def test_taints(taints: str, tainted: bool) -> None:
    assert clusters.is_tainted(taints) is tainted


def test_summarize_by_the_originals_rules() -> None:
    figures = clusters.summarize(
        [
            _load("busy", gpus_held=8, utilization_percent=90.0),
            _load("half", gpus_held=4, utilization_percent=30.0, tainted=True),
            _load("idle", status="NotReady"),
            _load("cpu-only", gpu_count=0),
            _load("over", gpu_count=4, gpus_held=6, utilization_percent=50.0),
        ]
    )
    assert figures.total_nodes == 5
    assert (figures.healthy_nodes, figures.faulty_nodes) == (3, 2)
    assert (figures.busy_nodes, figures.partially_idle_nodes, figures.fully_idle_nodes) == (
        2,
        1,
        1,
    )
    assert (figures.total_gpus, figures.allocated_gpus) == (28, 8 + 4 + 4)
    assert figures.allocation_percent == pytest.approx(100 * 16 / 28)
    # GPU-weighted over the nodes that reported: (8*90 + 8*30 + 4*50) / 20
    assert figures.utilization_percent == pytest.approx((720 + 240 + 200) / 20)


def test_nothing_known_is_none_not_zero() -> None:
    empty = clusters.summarize([])
    assert empty.allocation_percent is None and empty.utilization_percent is None
    assert clusters.summarize([_load("a")]).utilization_percent is None


def test_overview_from_the_tables(db: peewee.Database) -> None:
    write_nodes(db, node("gpu-1"), node("gpu-2", status="Deleted"), node("gpu-3"))
    write_pods(db, pod("p1", node_name="gpu-1", gpus=2), pod("p2", node_name="gpu-1", gpus=1))
    write_pods(db, pod("p3", node_name="gpu-3", gpus=8, phase="Succeeded"))
    figures = clusters.overview(db, cluster=CLUSTER)
    assert figures.total_nodes == 2  # the Deleted node is gone from the cluster
    assert (figures.allocated_gpus, figures.total_gpus) == (3, 16)
    assert figures.storage == StorageTotals()  # no storage rows: unknown
    assert clusters.overview(db, cluster="other") == clusters.ClusterOverview()
