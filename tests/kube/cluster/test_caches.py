"""The jobs' watch caches: listed once, then kept by the watch; readiness says what is awaited."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import kubernetes
import pytest

from lens.kube.cluster.caches import ClusterCaches
from lens.kube.machinery.reflector import WatchSettings
from lens.runtime import errors
from lens.sim.kube.server import KubeApiServer
from lens.sim.scenario import manifests


def test_caches_list_then_follow_and_say_when_something_changed(
    apiserver: KubeApiServer,
    api_client: kubernetes.client.ApiClient,
    eventually: Callable[..., None],
) -> None:
    apiserver.create(manifests.node("gpu-a", model="MI300X", gpus=8, address="10.0.0.1"))
    caches = ClusterCaches(api_client, watch=WatchSettings(watch_timeout_seconds=30))
    with pytest.raises(errors.NoDataError, match="jobs-nodes, jobs-pods"):
        caches.check()
    asyncio.run(caches.start())
    try:
        assert caches.wait_synced(10)
        caches.check()
        assert len(caches.nodes.cache) == 1 and len(caches.pods.cache) == 0
        assert caches.changed_since_last_asked()
        assert not caches.changed_since_last_asked()
        apiserver.create(manifests.node("gpu-b", model="MI300X", gpus=8, address="10.0.0.2"))
        eventually(lambda: len(caches.nodes.cache) == 2)
        assert caches.changed_since_last_asked()
        lists = {k: v for k, v in apiserver.requests().items() if k[0] == "GET"}
        assert set(lists) == {("GET", "/api/v1/nodes"), ("GET", "/api/v1/pods")}
    finally:
        asyncio.run(caches.stop())
