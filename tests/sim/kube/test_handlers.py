"""Custom resources and request edge cases through the official client."""

from __future__ import annotations

import json
import urllib.request
from urllib.error import HTTPError

import kubernetes
import pytest
from kubernetes import watch
from kubernetes.client.exceptions import ApiException
from kubernetes.dynamic import DynamicClient

from lens.sim.kube.server import KubeApiServer
from lens.sim.scenario import manifests

PYTORCHJOB_CRD = manifests.PYTORCHJOB_CRD


def _job(name: str) -> dict[str, object]:
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": name},
        "spec": {"pytorchReplicaSpecs": {"Master": {"replicas": 1}, "Worker": {"replicas": 3}}},
    }


@pytest.fixture
def custom(api: kubernetes.client.ApiClient) -> kubernetes.client.CustomObjectsApi:
    crd = kubernetes.client.ApiextensionsV1Api(api).create_custom_resource_definition(
        PYTORCHJOB_CRD
    )
    assert {c.type for c in crd.status.conditions} == {"Established", "NamesAccepted"}
    return kubernetes.client.CustomObjectsApi(api)


def test_a_crd_registers_its_kind_at_run_time(
    custom: kubernetes.client.CustomObjectsApi, api: kubernetes.client.ApiClient
) -> None:
    groups = {g.name for g in kubernetes.client.ApisApi(api).get_api_versions().groups}
    assert "kubeflow.org" in groups
    assert (
        DynamicClient(api)
        .resources.get(api_version="kubeflow.org/v1", kind="PyTorchJob")
        .namespaced
    )
    args = ("kubeflow.org", "v1", "default", "pytorchjobs")
    created = custom.create_namespaced_custom_object(*args, _job("llama"))
    assert created["metadata"]["uid"]
    assert "status" not in created
    listed = custom.list_namespaced_custom_object(*args)
    assert listed["kind"] == "PyTorchJobList" and [
        i["metadata"]["name"] for i in listed["items"]
    ] == ["llama"]
    patched = custom.patch_namespaced_custom_object(
        *args, "llama", {"metadata": {"labels": {"team": "ml"}}}
    )
    assert patched["metadata"]["labels"] == {"team": "ml"}
    status = custom.patch_namespaced_custom_object_status(
        *args, "llama", {"status": {"conditions": [{"type": "Running", "status": "True"}]}}
    )
    assert status["status"]["conditions"][0]["type"] == "Running"
    assert patched["metadata"]["generation"] == 1
    custom.delete_namespaced_custom_object(*args, "llama")
    assert custom.list_namespaced_custom_object(*args)["items"] == []


def test_custom_objects_can_be_watched(custom: kubernetes.client.CustomObjectsApi) -> None:
    args = ("kubeflow.org", "v1", "default", "pytorchjobs")
    rv = custom.list_namespaced_custom_object(*args)["metadata"]["resourceVersion"]
    custom.create_namespaced_custom_object(*args, _job("a"))
    events = []
    for event in watch.Watch().stream(
        custom.list_namespaced_custom_object, *args, resource_version=rv, timeout_seconds=2
    ):
        events.append((event["type"], event["object"]["metadata"]["name"]))
        break
    assert events == [("ADDED", "a")]


def test_deleting_the_crd_removes_the_kind(
    custom: kubernetes.client.CustomObjectsApi, api: kubernetes.client.ApiClient
) -> None:
    kubernetes.client.ApiextensionsV1Api(api).delete_custom_resource_definition(
        "pytorchjobs.kubeflow.org"
    )
    with pytest.raises(ApiException) as caught:
        custom.list_namespaced_custom_object("kubeflow.org", "v1", "default", "pytorchjobs")
    assert caught.value.status == 404


def test_an_invalid_crd_is_refused(api: kubernetes.client.ApiClient) -> None:
    bad = json.loads(json.dumps(PYTORCHJOB_CRD))
    bad["metadata"]["name"] = "wrong"
    with pytest.raises(ApiException) as caught:
        kubernetes.client.ApiextensionsV1Api(api).create_custom_resource_definition(bad)
    assert caught.value.status == 422


def _raw(
    kube: KubeApiServer,
    method: str,
    path: str,
    body: bytes = b"",
    content_type: str = "application/json",
) -> tuple[int, dict[str, object]]:
    request = urllib.request.Request(
        kube.url + path, data=body or None, method=method, headers={"Content-Type": content_type}
    )
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, json.loads(response.read())
    except HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_request_errors_answer_with_status_objects(
    kube: KubeApiServer, custom: kubernetes.client.CustomObjectsApi
) -> None:
    assert _raw(kube, "GET", "/api/v1/nothings")[0] == 404
    assert _raw(kube, "GET", "/apis/nowhere.io/v1")[0] == 404
    assert _raw(kube, "POST", "/api")[0] == 405
    code, status = _raw(kube, "POST", "/api/v1/namespaces/default/configmaps", b"{not json")
    assert (code, status["reason"], status["kind"]) == (400, "BadRequest", "Status")
    code, status = _raw(
        kube,
        "POST",
        "/api/v1/namespaces/default/configmaps",
        json.dumps({"kind": "Secret", "apiVersion": "v1", "metadata": {"name": "x"}}).encode(),
    )
    assert code == 400
    kube.create(
        {
            "apiVersion": "kubeflow.org/v1",
            "kind": "PyTorchJob",
            "metadata": {"name": "j", "namespace": "default"},
        }
    )
    code, status = _raw(
        kube,
        "PATCH",
        "/apis/kubeflow.org/v1/namespaces/default/pytorchjobs/j",
        b"{}",
        "application/strategic-merge-patch+json",
    )
    assert code == 415
    code, status = _raw(
        kube,
        "PATCH",
        "/apis/kubeflow.org/v1/namespaces/default/pytorchjobs/j",
        b"{}",
        "application/apply-patch+yaml",
    )
    assert code == 415
    code, status = _raw(
        kube,
        "PATCH",
        "/api/v1/namespaces/default",
        b'[{"op": "test", "path": "/metadata/name", "value": "other"}]',
        "application/json-patch+json",
    )
    assert (code, status["reason"]) == (422, "Invalid")
    assert _raw(kube, "GET", "/api/v1/pods?watch=true&resourceVersion=abc")[0] == 400
    assert _raw(kube, "GET", "/api/v1/pods?labelSelector=a%20in%20()")[0] == 400
