"""`lens jobs`' GPU allocation: the original's `gpu_allocation_rate` (percent, cluster) and
`lens_node_gpu_allocation_ratio` per node, from the watch caches on the leader
(lens/kube/cluster/allocation.py says what counts)."""

from __future__ import annotations

from collections.abc import Callable

from lens.kube.cluster import nodefacts
from lens.kube.cluster.allocation import ClusterAllocation, allocation
from lens.kube.cluster.caches import ClusterCaches
from lens.kube.cluster.nodefacts import NodeFacts
from lens.roles.jobs.leading import add_leader_loop
from lens.runtime.config import Config
from lens.runtime.process import Process
from lens.runtime.selfmetrics import SelfMetrics


class AllocationGauges:
    def __init__(self, metrics: SelfMetrics) -> None:
        self.rate = metrics.gauge(
            "gpu_allocation_rate",
            "Percent of the cluster's GPUs allocated to pods bound to a node and not finished "
            "(each pod once; a node not Ready counts none allocated and keeps its capacity); "
            "only the replica running the jobs has the series.",
            ("cluster",),
        )
        self.node_ratio = metrics.gauge(
            "lens_node_gpu_allocation_ratio",
            "A GPU node's GPUs allocated to its pods over its GPU capacity (0-1; 0 while the "
            "node is not Ready).",
            ("node",),
        )

    def show(self, cluster: str, found: ClusterAllocation) -> None:
        self.rate.labels(cluster).set(found.rate_percent)
        self.node_ratio.clear()
        for node in found.nodes:
            self.node_ratio.labels(node.node).set(node.ratio)


def node_facts(config: Config, caches: ClusterCaches) -> list[NodeFacts]:
    """Every GPU node in the cache, as the node info and allocation jobs read it."""
    found = (
        nodefacts.facts(
            node,
            gpu_resources=config.controller.gpu_resources,
            gpu_model_labels=config.controller.gpu_model_labels,
            cpu_model_label=config.jobs.node_cpu_model_label,
        )
        for node in caches.nodes.cache.objects()
    )
    return [facts for facts in found if facts.is_gpu_node]


def cluster_allocation(
    config: Config, caches: ClusterCaches, nodes: list[NodeFacts]
) -> ClusterAllocation:
    return allocation(nodes, caches.pods.cache.on_node, config.controller.gpu_resources)


class Allocation:
    """The loop's body."""

    def __init__(self, config: Config, caches: ClusterCaches, gauges: AllocationGauges) -> None:
        self._config = config
        self._caches = caches
        self._gauges = gauges

    def run(self) -> None:
        if not self._caches.synced():
            return  # the gauges keep saying nothing rather than a partial figure
        nodes = node_facts(self._config, self._caches)
        found = cluster_allocation(self._config, self._caches, nodes)
        self._gauges.show(self._config.cluster.name, found)


def add(
    config: Config, process: Process, caches: ClusterCaches, *, leading: Callable[[], bool]
) -> Allocation:
    body = Allocation(config, caches, AllocationGauges(process.metrics))
    add_leader_loop(
        process,
        name="allocation",
        interval_seconds=config.jobs.allocation_interval_seconds,
        run=body.run,
        leading=leading,
    )
    return body
