"""A cluster's overview from its tables: GPU nodes healthy or faulty, idle or busy, GPUs
allocated, utilization and storage, for the API's /v1/clusters/overview.

Three queries, whatever the cluster's size (the original made 3 node LISTs, 3N node GETs and 2N
kubelet calls per request, REFERENCE.md 15.3). GPUs held are the running GPU pods of `gpu_pods`,
each pod counted once (the original counted a pod once per GPU container, 15.1 #1).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping

import peewee

from lens.store import database, models
from lens.store.queries import storage
from lens.store.queries.reading import reading
from lens.store.queries.storage import StorageTotals

READY = "Ready"
DELETED = "Deleted"  # a node that left the cluster keeps its row (kube/cluster/noderows.py)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class NodeLoad:
    """What the overview needs of one GPU node."""

    name: str
    status: str
    tainted: bool
    gpu_count: int
    gpus_held: int
    utilization_percent: float | None


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
    utilization_percent: float | None = None  # GPU-weighted; None: no node reported one
    storage: StorageTotals = dataclasses.field(default_factory=StorageTotals)


def is_tainted(taints: str) -> bool:
    """Whether a `nodes.taints` text lists a taint (text that is no JSON list counts as one:
    a node whose state cannot be read is not called healthy)."""
    try:
        parsed = json.loads(taints)
    except ValueError:
        return True
    return not isinstance(parsed, list) or len(parsed) > 0


def summarize(nodes: Iterable[NodeLoad]) -> ClusterOverview:
    """The overview's node and GPU figures (pure)."""
    loads = list(nodes)
    faulty = sum(1 for n in loads if n.status != READY or n.tainted)
    with_gpus = [n for n in loads if n.gpu_count > 0]
    held = [min(n.gpus_held, n.gpu_count) for n in with_gpus]
    total_gpus = sum(n.gpu_count for n in with_gpus)
    reported = [n for n in with_gpus if n.utilization_percent is not None]
    reported_gpus = sum(n.gpu_count for n in reported)
    utilization = None
    if reported_gpus:
        weighted = sum(n.gpu_count * (n.utilization_percent or 0.0) for n in reported)
        utilization = weighted / reported_gpus
    return ClusterOverview(
        total_nodes=len(loads),
        healthy_nodes=len(loads) - faulty,
        faulty_nodes=faulty,
        fully_idle_nodes=sum(1 for h in held if h == 0),
        partially_idle_nodes=sum(
            1 for h, n in zip(held, with_gpus, strict=True) if 0 < h < n.gpu_count
        ),
        busy_nodes=sum(1 for h, n in zip(held, with_gpus, strict=True) if h == n.gpu_count),
        total_gpus=total_gpus,
        allocated_gpus=sum(held),
        allocation_percent=100.0 * sum(held) / total_gpus if total_gpus else None,
        utilization_percent=utilization,
    )


def _gpus_held(cluster: str) -> Mapping[str, int]:
    pod = models.GpuPod
    query = (
        pod.select(pod.node_name, peewee.fn.SUM(pod.gpu_allocated))
        .where((pod.cluster == cluster) & pod.running & ~pod.deleted)
        .group_by(pod.node_name)
        .tuples()
    )
    return {str(node): int(held or 0) for node, held in database.tuple_rows(query)}


def _node_loads(cluster: str) -> list[NodeLoad]:
    node = models.Node
    query = (
        node.select(node.name, node.status, node.taints, node.gpu_count, node.gpu_utilization)
        .where((node.cluster == cluster) & (node.status != DELETED))
        .tuples()
    )
    held = _gpus_held(cluster)
    return [
        NodeLoad(
            name=str(name),
            status=str(status),
            tainted=is_tainted(str(taints)),
            gpu_count=int(gpu_count),
            gpus_held=held.get(str(name), 0),
            utilization_percent=utilization,
        )
        for name, status, taints, gpu_count, utilization in database.tuple_rows(query)
    ]


def overview(db: peewee.Database, *, cluster: str) -> ClusterOverview:
    """`cluster`'s overview now; every figure 0 or None for a cluster with no rows."""
    with reading(db):
        figures = summarize(_node_loads(cluster))
        return dataclasses.replace(figures, storage=storage.summed(cluster))
