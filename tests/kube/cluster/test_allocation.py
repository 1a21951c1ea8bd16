"""GPU allocation: each pod once with its effective request, only pods holding GPUs now, and a
node that is not Ready keeps its capacity with nothing allocated (REFERENCE.md 5.1)."""

from __future__ import annotations

from typing import Any

from lens.kube.cluster import nodefacts
from lens.kube.cluster.allocation import allocation, holds_gpus
from lens.sim.scenario import manifests

RESOURCES = ("amd.com/gpu", "nvidia.com/gpu")


def _pod(node: str, phase: str, *gpus_per_container: int) -> dict[str, Any]:
    containers = [
        {"name": f"c{i}", "resources": {"limits": {"amd.com/gpu": str(g)}}}
        for i, g in enumerate(gpus_per_container)
    ]
    return {
        "metadata": {"name": "p", "uid": f"{node}-{phase}-{gpus_per_container}"},
        "spec": {"nodeName": node, "containers": containers},
        "status": {"phase": phase},
    }


def _node(name: str, *, gpus: int = 8, ready: bool = True) -> nodefacts.NodeFacts:
    node = manifests.node(name, model="MI300X", gpus=gpus, address="10.0.0.1", ready=ready)
    return nodefacts.facts(
        node, gpu_resources=RESOURCES, gpu_model_labels=("amd.com/gpu.product-name",)
    )


def test_a_pod_with_two_gpu_containers_is_counted_once_with_both_requests() -> None:
    pods = {"a": [_pod("a", "Running", 2, 2)]}
    found = allocation([_node("a")], lambda n: pods.get(n, []), RESOURCES)
    assert (found.allocated, found.capacity) == (4, 8)  # the original said 8: 4 per container
    assert found.rate_percent == 50.0
    assert found.nodes[0].ratio == 0.5


def test_only_pods_bound_and_not_finished_hold_gpus() -> None:
    pods = {
        "a": [
            _pod("a", "Running", 4),
            _pod("a", "Pending", 2),  # bound, its containers starting: the GPUs are taken
            _pod("a", "Succeeded", 8),
            _pod("a", "Failed", 8),
        ]
    }
    found = allocation([_node("a")], lambda n: pods.get(n, []), RESOURCES)
    assert found.allocated == 6
    unbound = _pod("", "Pending", 1)
    assert not holds_gpus(unbound)


def test_a_node_not_ready_keeps_its_capacity_and_counts_nothing_allocated() -> None:
    pods = {"a": [_pod("a", "Running", 8)], "b": [_pod("b", "Running", 4)]}
    nodes = [_node("a", ready=False), _node("b")]
    found = allocation(nodes, lambda n: pods.get(n, []), RESOURCES)
    assert [(n.node, n.allocated, n.capacity) for n in found.nodes] == [("a", 0, 8), ("b", 4, 8)]
    assert found.rate_percent == 25.0


def test_a_cluster_without_gpus_is_zero_percent_not_an_error() -> None:
    cpu = nodefacts.facts(
        {"metadata": {"name": "cpu"}}, gpu_resources=RESOURCES, gpu_model_labels=()
    )
    found = allocation([cpu], lambda n: [], RESOURCES)
    assert found.nodes == () and found.rate_percent == 0.0
