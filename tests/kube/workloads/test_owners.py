"""Owner chains through per-kind caches started on demand, on the API emulator."""

from __future__ import annotations

from collections.abc import Callable

import kubernetes

from lens.kube.machinery import resources
from lens.kube.machinery.cache import ObjectCache
from lens.kube.machinery.reflector import WatchSettings
from lens.kube.machinery.resources import Kind
from lens.kube.workloads.owners import OwnerTree
from lens.sim.kube.server import KubeApiServer
from lens.sim.scenario import manifests


def _chain(apiserver: KubeApiServer) -> tuple[dict[str, object], ...]:
    deployment = apiserver.create(
        manifests.controller("Deployment", "apps/v1", "serve", "default", {"replicas": 1})
    )
    replica_set = apiserver.create(
        manifests.controller(
            "ReplicaSet", "apps/v1", "serve-1", "default", {}, owners=[manifests.owner(deployment)]
        )
    )
    pod = apiserver.create(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": "serve-1-a",
                "namespace": "default",
                "ownerReferences": [manifests.owner(replica_set)],
            },
            "spec": {"containers": [{"name": "main", "image": "x"}]},
        }
    )
    return deployment, replica_set, pod


def test_chains_up_and_down_from_caches_started_on_first_need(
    apiserver: KubeApiServer,
    api_client: kubernetes.client.ApiClient,
    eventually: Callable[..., None],
) -> None:
    deployment, replica_set, pod = _chain(apiserver)
    pods = ObjectCache()
    pods.replace([pod])
    listed: list[str] = []
    tree = OwnerTree(
        api_client,
        pods=pods,
        settings=WatchSettings(stall_seconds=10.0),
        handle=lambda kind, changes: None,
        on_listed=lambda kind: listed.append(kind.kind),
    )
    try:
        eventually(lambda: len(tree.ancestors(pod)) == 2, timeout=10)
        names = [o["metadata"]["name"] for o in tree.ancestors(pod)]
        assert names == ["serve-1", "serve"]
        assert sorted(listed) == ["Deployment", "ReplicaSet"]
        watched = [tree.kind_of("apps/v1", k) for k in ("Deployment", "ReplicaSet")]
        assert [k.plural if k else None for k in watched] == ["deployments", "replicasets"]
        assert tree.synced()
        under = tree.pods_under(deployment["metadata"]["uid"])
        assert [p["metadata"]["name"] for p in under] == ["serve-1-a"]
        kind = tree.kind_of("apps/v1", "ReplicaSet")
        cache = tree.cache_of(kind) if kind is not None else None
        assert cache is not None and cache.get(replica_set["metadata"]["uid"]) is not None
        assert cache.get("no-such-uid") is None
    finally:
        tree.stop()


def test_a_kind_the_api_does_not_serve_is_asked_for_again_later(
    apiserver: KubeApiServer, api_client: kubernetes.client.ApiClient
) -> None:
    now = [0.0]
    asked: list[str] = []

    class CountingDiscovery(resources.Discovery):
        def find(self, api_version: str, kind: str) -> Kind:
            asked.append(kind)
            return super().find(api_version, kind)

    tree = OwnerTree(
        api_client,
        pods=ObjectCache(),
        settings=WatchSettings(stall_seconds=10.0),
        handle=lambda kind, changes: None,
        on_listed=lambda kind: None,
        discovery=CountingDiscovery(api_client),
        monotonic=lambda: now[0],
    )
    try:
        assert tree.watch("kubeflow.org/v1", "PyTorchJob") is None
        assert tree.watch("kubeflow.org/v1", "PyTorchJob") is None
        assert asked == ["PyTorchJob"], "not asked again within a minute"
        apiserver.create(manifests.PYTORCHJOB_CRD)
        now[0] = 61.0
        assert tree.watch("kubeflow.org/v1", "PyTorchJob") is not None
        assert tree.watch("kubeflow.org/v1", "PyTorchJob") is not None
        assert asked == ["PyTorchJob", "PyTorchJob"]
    finally:
        tree.stop()
