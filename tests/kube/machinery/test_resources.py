"""Discovery of kinds and the generic list function, against the API emulator."""

from __future__ import annotations

from collections.abc import Callable

import kubernetes
import pytest
from kubernetes.client.exceptions import ApiException

from lens.kube.machinery import resources
from lens.kube.machinery.cache import ObjectCache
from lens.kube.machinery.reflector import Reflector, WatchSettings
from lens.runtime import errors
from lens.runtime.backoff import Backoff
from lens.sim.kube.server import KubeApiServer
from lens.sim.scenario import manifests


def test_discovery_finds_built_in_kinds_and_crds_added_later(
    apiserver: KubeApiServer, api_client: kubernetes.client.ApiClient
) -> None:
    discovery = resources.Discovery(api_client)
    replica_sets = discovery.find("apps/v1", "ReplicaSet")
    assert (replica_sets.plural, replica_sets.namespaced) == ("replicasets", True)
    assert discovery.find("v1", "Node") == resources.NODES
    assert discovery.find("v1", "Pod") == resources.PODS
    with pytest.raises(errors.SourceError, match=r"PyTorchJob in kubeflow\.org/v1"):
        discovery.find("kubeflow.org/v1", "PyTorchJob")
    apiserver.create(manifests.PYTORCHJOB_CRD)
    found = discovery.find("kubeflow.org/v1", "PyTorchJob")
    assert found.collection_path() == "/apis/kubeflow.org/v1/pytorchjobs"
    assert (
        found.object_path("team", "bert")
        == "/apis/kubeflow.org/v1/namespaces/team/pytorchjobs/bert"
    )
    with pytest.raises(errors.SourceError, match="no kind Widget"):
        discovery.find("apps/v1", "Widget")


def test_a_reflector_over_the_generic_lister_follows_any_kind(
    apiserver: KubeApiServer,
    api_client: kubernetes.client.ApiClient,
    eventually: Callable[..., None],
) -> None:
    apiserver.create(manifests.PYTORCHJOB_CRD)
    kind = resources.Discovery(api_client).find("kubeflow.org/v1", "PyTorchJob")
    body = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "bert", "namespace": "default"},
        "spec": {"pytorchReplicaSpecs": {}},
    }
    resources.request_json(api_client, "POST", kind.collection_path("default"), body=body)
    cache = ObjectCache()
    reflector = Reflector(
        name="pytorchjobs",
        list_func=resources.Lister(api_client, kind.collection_path()),
        cache=cache,
        handle=lambda changes: None,
        settings=WatchSettings(stall_seconds=10.0, page_size=1),
        backoff=Backoff(initial=0.05, maximum=0.2),
    )
    reflector.start()
    try:
        assert reflector.wait_synced(10)
        assert [o["metadata"]["name"] for o in cache.objects()] == ["bert"]
        patch = {"metadata": {"labels": {"team": "nlp"}}}
        resources.request_json(
            api_client,
            "PATCH",
            kind.object_path("default", "bert"),
            body=patch,
            content_type="application/merge-patch+json",
        )
        eventually(
            lambda: cache.objects()[0]["metadata"].get("labels") == {"team": "nlp"}, timeout=10
        )
    finally:
        reflector.stop()


def test_an_error_answer_raises_with_its_status(api_client: kubernetes.client.ApiClient) -> None:
    with pytest.raises(ApiException) as raised:
        resources.request_json(api_client, "GET", resources.PODS.object_path("default", "nope"))
    assert raised.value.status == 404
