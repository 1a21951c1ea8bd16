"""GPU allocation, cluster-wide and per node, from cached Node and Pod objects (pure).

What the original meant (REFERENCE.md 5.1) rather than what it did: a pod holds GPUs from the
moment it is bound to a node until it finishes, as the scheduler counts them (a pod still
Pending on its node holds them too: nothing else can be scheduled onto them); each pod is
counted once with its effective request (the original counted a pod once per GPU container).
A node that is not Ready keeps its capacity and counts nothing allocated, as the original did.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from lens.kube.cluster.nodefacts import READY, NodeFacts
from lens.kube.machinery.cache import node_of
from lens.kube.workloads import gpupods

JsonObject = dict[str, Any]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class NodeAllocation:
    node: str
    capacity: int
    allocated: int  # 0 when the node is not Ready

    @property
    def ratio(self) -> float:
        """Allocated over capacity; 0 for a node without GPU capacity."""
        return self.allocated / self.capacity if self.capacity else 0.0


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ClusterAllocation:
    nodes: tuple[NodeAllocation, ...]

    @property
    def capacity(self) -> int:
        return sum(n.capacity for n in self.nodes)

    @property
    def allocated(self) -> int:
        return sum(n.allocated for n in self.nodes)

    @property
    def rate_percent(self) -> float:
        """The original's gpu_allocation_rate: 100 * allocated / capacity (0 without GPUs)."""
        capacity = self.capacity
        return 100.0 * self.allocated / capacity if capacity else 0.0


def holds_gpus(pod: JsonObject) -> bool:
    """Bound to a node and not finished."""
    return bool(node_of(pod)) and gpupods.phase(pod) not in gpupods.FINISHED


def allocated_on(pods: Iterable[JsonObject], resources: Sequence[str]) -> int:
    return sum(gpupods.gpu_count(pod, resources) for pod in pods if holds_gpus(pod))


def allocation(
    nodes: Iterable[NodeFacts],
    pods_on: Callable[[str], Iterable[JsonObject]],
    resources: Sequence[str],
) -> ClusterAllocation:
    """Each GPU node's allocation; `pods_on(node)` gives the pods bound to it."""
    found = []
    for node in nodes:
        if not node.is_gpu_node:
            continue
        allocated = allocated_on(pods_on(node.name), resources) if node.status == READY else 0
        found.append(
            NodeAllocation(node=node.name, capacity=node.gpu_capacity, allocated=allocated)
        )
    return ClusterAllocation(nodes=tuple(sorted(found, key=lambda n: n.node)))
