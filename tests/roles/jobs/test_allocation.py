"""The allocation job: the original's gauge in percent and a ratio per node, from the watch
caches — no request to the API per run."""

from __future__ import annotations

from collections.abc import Callable

import kubernetes

from lens.roles.jobs.allocation import Allocation, AllocationGauges
from lens.runtime.config import Config
from lens.runtime.selfmetrics import SelfMetrics
from lens.sim.kube.server import KubeApiServer
from tests.roles.jobs.clusterobjects import add_node, add_pod, set_phase, watching


def test_allocation_follows_the_cluster_without_asking_the_api(
    apiserver: KubeApiServer,
    api_client: kubernetes.client.ApiClient,
    eventually: Callable[..., None],
) -> None:
    add_node(apiserver, "gpu-a")
    add_node(apiserver, "gpu-b")
    add_node(apiserver, "gpu-lost", ready=False)
    add_pod(apiserver, "train-0", "gpu-a", 8)
    add_pod(apiserver, "train-1", "gpu-b", 2)
    add_pod(apiserver, "stuck", "gpu-lost", 8)
    add_pod(apiserver, "done", "gpu-b", 4, phase="Succeeded")
    metrics = SelfMetrics(process=False)

    def value(name: str, **labels: str) -> float | None:
        return metrics.registry.get_sample_value(name, labels)

    with watching(api_client) as caches:
        body = Allocation(Config(), caches, AllocationGauges(metrics))
        before = sum(apiserver.requests().values())
        for _ in range(5):
            body.run()
        assert sum(apiserver.requests().values()) == before  # the runs read memory only
        assert value("gpu_allocation_rate", cluster="default") == 100 * 10 / 24
        assert value("lens_node_gpu_allocation_ratio", node="gpu-a") == 1.0
        assert value("lens_node_gpu_allocation_ratio", node="gpu-b") == 0.25
        assert value("lens_node_gpu_allocation_ratio", node="gpu-lost") == 0.0
        set_phase(apiserver, "train-0", "Succeeded")

        def freed() -> bool:
            body.run()
            return value("lens_node_gpu_allocation_ratio", node="gpu-a") == 0.0

        eventually(freed)
        assert value("gpu_allocation_rate", cluster="default") == 100 * 2 / 24
