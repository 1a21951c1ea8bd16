"""A cluster's overview from its tables: GPU nodes healthy or faulty, idle or busy, GPUs
allocated, utilization and storage, for the API's /v1/clusters/overview.

A few queries, whatever the cluster's size (the original made 3 node LISTs, 3N node GETs and 2N
kubelet calls per request, REFERENCE.md 15.3): the nodes counted by class in SQL, the GPUs'
mean utilization in the latest complete minute (seriesnow.py: the minute the node list and the
heatmap show), and the storage sums. GPUs held are the running GPU pods of `gpu_pods`, each pod
counted once (the original counted a pod once per GPU container, 15.1 #1).
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import json
from collections.abc import Iterable
from typing import Any

import peewee

from lens.store import models
from lens.store.queries import seriesnow, storage
from lens.store.queries.reading import reading, rows_built_once
from lens.store.queries.storage import StorageTotals

READY = "Ready"
DELETED = "Deleted"  # a node that left the cluster keeps its row (kube/cluster/noderows.py)


class Holding(enum.IntEnum):
    """How many of a node's GPUs its running pods hold (the original's idle classes)."""

    NO_GPUS = 0  # a node without GPUs: in no class
    IDLE = 1  # none held
    PARTIAL = 2  # some held
    BUSY = 3  # every one held (pods asking more than the node has count as all)
    NEITHER = 4  # fewer than none held: a negative sum, in no class either


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class NodeClass:
    """Nodes the overview counts alike, with the sums it needs of them: their status, whether
    they are tainted and how many of their GPUs are held."""

    status: str
    tainted: bool
    holding: Holding
    nodes: int
    gpus: int  # the nodes' GPUs
    held: int  # GPUs held, each node's at most its GPUs


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ClusterOverview:
    total_nodes: int = 0
    healthy_nodes: int = 0
    faulty_nodes: int = 0  # not Ready, or tainted (the original's rule)
    fully_idle_nodes: int = 0  # GPUs, none held
    partially_idle_nodes: int = 0
    busy_nodes: int = 0  # every GPU held
    total_gpus: int = 0
    allocated_gpus: int = 0
    allocation_percent: float | None = None  # None: no GPU
    utilization_percent: float | None = None  # GPU-weighted; None: no GPU known in `minute`
    minute: datetime.datetime | None = None  # of utilization: the latest complete one
    storage: StorageTotals = dataclasses.field(default_factory=StorageTotals)


def is_tainted(taints: str) -> bool:
    """Whether a `nodes.taints` text lists a taint (text that is no JSON list counts as one:
    a node whose state cannot be read is not called healthy)."""
    try:
        parsed = json.loads(taints)
    except ValueError:
        return True
    return not isinstance(parsed, list) or len(parsed) > 0


def summarize(classes: Iterable[NodeClass]) -> ClusterOverview:
    """The overview's node and GPU figures (pure)."""
    found = list(classes)
    faulty = sum(c.nodes for c in found if c.status != READY or c.tainted)
    with_gpus = [c for c in found if c.holding is not Holding.NO_GPUS]
    total_gpus = sum(c.gpus for c in with_gpus)
    held = sum(c.held for c in with_gpus)

    def nodes(holding: Holding) -> int:
        return sum(c.nodes for c in found if c.holding is holding)

    return ClusterOverview(
        total_nodes=sum(c.nodes for c in found),
        healthy_nodes=sum(c.nodes for c in found) - faulty,
        faulty_nodes=faulty,
        fully_idle_nodes=nodes(Holding.IDLE),
        partially_idle_nodes=nodes(Holding.PARTIAL),
        busy_nodes=nodes(Holding.BUSY),
        total_gpus=total_gpus,
        allocated_gpus=held,
        allocation_percent=100.0 * held / total_gpus if total_gpus else None,
    )


def _held_by_node(cluster: str) -> Any:
    """GPUs held by each node's running pods, a pod counted once."""
    pod = models.GpuPod
    return (
        pod.select(pod.node_name, peewee.fn.SUM(pod.gpu_allocated).alias("held"))
        .where((pod.cluster == cluster) & pod.running & ~pod.deleted)
        .group_by(pod.node_name)
        .alias("held_by_node")
    )


def _classes_query(cluster: str) -> Any:
    """The cluster's nodes (but those deleted) counted in SQL by status, taints text and
    holding: a few rows whatever the cluster's size, where reading every node's row made the
    overview's cost grow with the nodes (PERFORMANCE.md, `bench api`)."""
    node, held_by_node = models.Node, _held_by_node(cluster)
    gpus = node.gpu_count
    held = peewee.fn.COALESCE(held_by_node.c.held, 0)
    capped = peewee.Case(None, [(held < gpus, held)], gpus)
    holding = peewee.Case(
        None,
        [
            (gpus <= 0, Holding.NO_GPUS.value),
            (capped == 0, Holding.IDLE.value),
            (capped == gpus, Holding.BUSY.value),
            (capped > 0, Holding.PARTIAL.value),
        ],
        Holding.NEITHER.value,
    )
    return (
        node.select(
            node.status,
            node.taints,
            holding,
            peewee.fn.COUNT(peewee.SQL("*")),
            peewee.fn.SUM(gpus),
            peewee.fn.SUM(capped),
        )
        .join(held_by_node, peewee.JOIN.LEFT_OUTER, on=(held_by_node.c.node_name == node.name))
        .where((node.cluster == cluster) & (node.status != DELETED))
        # By position: the CASE's bound values would make it another expression to some
        # engines when spelled out again.
        .group_by(peewee.SQL("1"), peewee.SQL("2"), peewee.SQL("3"))
        .tuples()
    )


def _classes(db: peewee.Database, cluster: str) -> list[NodeClass]:
    return [
        NodeClass(
            status=str(status),
            tainted=is_tainted(str(taints)),
            holding=Holding(int(kind)),
            nodes=int(count),
            gpus=int(total or 0),
            held=int(taken or 0),
        )
        for status, taints, kind, count, total, taken in rows_built_once(
            db, _classes_query, cluster
        )
    ]


def overview(db: peewee.Database, *, cluster: str, now: datetime.datetime) -> ClusterOverview:
    """`cluster`'s overview at `now`; every figure 0 or None for a cluster with no rows."""
    with reading(db):
        figures = summarize(_classes(db, cluster))
        minute = seriesnow.latest_minute(cluster, now)
        return dataclasses.replace(
            figures,
            utilization_percent=seriesnow.utilization_in(cluster, minute),
            minute=minute,
            storage=storage.summed(db, cluster),
        )
