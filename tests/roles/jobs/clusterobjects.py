"""A small GPU cluster in the API emulator for the tests of the jobs reading it, and the jobs'
watch caches of it."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from typing import Any

import kubernetes

from lens.kube.cluster.caches import ClusterCaches
from lens.kube.machinery.reflector import WatchSettings
from lens.sim.kube.server import KubeApiServer
from lens.sim.kube.status import ApiError
from lens.sim.scenario import manifests

STARTED = "2026-11-24T09:00:00Z"


def add_node(kube: KubeApiServer, name: str, *, gpus: int = 8, ready: bool = True) -> None:
    index = sum(1 for _ in name)
    kube.create(
        manifests.node(name, model="MI300X", gpus=gpus, address=f"10.0.0.{index}", ready=ready)
    )


def add_pod(
    kube: KubeApiServer, name: str, node: str, gpus: int, *, phase: str = "Running"
) -> dict[str, Any]:
    """A GPU pod of namespace ml bound to `node` in `phase` (Running, Pending or Succeeded)."""
    with contextlib.suppress(ApiError):  # the first pod makes the namespace
        kube.create(manifests.namespace("ml"))
    template = manifests.pod_template(name, gpus=gpus, resource="amd.com/gpu")
    created = kube.create(
        manifests.pod(name, "ml", template, owners=[], node_name=node, labels={}),
        keep_status=False,
    )
    if phase != "Pending":
        set_phase(kube, name, phase)
    return created


def set_phase(kube: KubeApiServer, name: str, phase: str) -> None:
    rtype = kube.resource("v1", "Pod")
    pod = kube.store.get(rtype, "ml", name)
    running = manifests.running_status(pod, started=STARTED, host_ip="10.0.0.1", pod_ip="10.1.0.1")
    status = (
        running
        if phase == "Running"
        else manifests.finished_status(running, failed=phase == "Failed", finished=STARTED)
    )
    kube.store.put_status(rtype, "ml", name, status)


@contextlib.contextmanager
def watching(api: kubernetes.client.ApiClient) -> Iterator[ClusterCaches]:
    """The jobs' caches of the emulator's cluster, listed."""
    caches = ClusterCaches(api, watch=WatchSettings(watch_timeout_seconds=30))
    asyncio.run(caches.start())
    try:
        assert caches.wait_synced(10)
        yield caches
    finally:
        asyncio.run(caches.stop())
