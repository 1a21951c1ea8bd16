"""The emulator through the official client: discovery, CRUD, concurrency, selectors, paging."""

from __future__ import annotations

import json
from pathlib import Path

import kubernetes
import pytest
from kubernetes.client.exceptions import ApiException
from kubernetes.dynamic import DynamicClient

from lens.sim.kube.server import KubeApiServer

from .conftest import pod


def _status(exc: ApiException) -> dict[str, object]:
    return json.loads(exc.body)


def test_discovery_lists_every_builtin_group_and_kind(api: kubernetes.client.ApiClient) -> None:
    assert kubernetes.client.VersionApi(api).get_code().major == "1"
    assert kubernetes.client.CoreApi(api).get_api_versions().versions == ["v1"]
    groups = {g.name for g in kubernetes.client.ApisApi(api).get_api_versions().groups}
    assert groups >= {
        "apps",
        "batch",
        "coordination.k8s.io",
        "discovery.k8s.io",
        "storage.k8s.io",
        "apiextensions.k8s.io",
    }
    dynamic = DynamicClient(api)
    for api_version, kind in [
        ("v1", "Pod"),
        ("v1", "Node"),
        ("v1", "Service"),
        ("v1", "Endpoints"),
        ("v1", "Secret"),
        ("v1", "ConfigMap"),
        ("v1", "Namespace"),
        ("v1", "Event"),
        ("apps/v1", "Deployment"),
        ("apps/v1", "ReplicaSet"),
        ("apps/v1", "StatefulSet"),
        ("apps/v1", "DaemonSet"),
        ("batch/v1", "Job"),
        ("batch/v1", "CronJob"),
        ("coordination.k8s.io/v1", "Lease"),
        ("discovery.k8s.io/v1", "EndpointSlice"),
        ("storage.k8s.io/v1", "StorageClass"),
    ]:
        assert dynamic.resources.get(api_version=api_version, kind=kind).kind == kind


def test_create_get_replace_patch_delete_a_pod(core: kubernetes.client.CoreV1Api) -> None:
    created = core.create_namespaced_pod("default", pod("p1", labels={"app": "a"}))
    assert created.metadata.uid and created.metadata.creation_timestamp
    assert created.status.phase == "Pending"
    fetched = core.read_namespaced_pod("p1", "default")
    assert fetched.metadata.resource_version == created.metadata.resource_version
    fetched.metadata.labels["tier"] = "gpu"
    replaced = core.replace_namespaced_pod("p1", "default", fetched)
    assert int(replaced.metadata.resource_version) > int(created.metadata.resource_version)
    patched = core.patch_namespaced_pod("p1", "default", {"metadata": {"annotations": {"x": "1"}}})
    assert patched.metadata.annotations == {"x": "1"}
    assert patched.metadata.labels == {"app": "a", "tier": "gpu"}
    json_patched = core.patch_namespaced_pod(
        "p1", "default", [{"op": "replace", "path": "/metadata/labels/app", "value": "b"}]
    )
    assert json_patched.metadata.labels["app"] == "b"
    deleted = core.delete_namespaced_pod("p1", "default")
    assert deleted.metadata.name == "p1"
    with pytest.raises(ApiException) as caught:
        core.read_namespaced_pod("p1", "default")
    assert caught.value.status == 404
    assert _status(caught.value)["reason"] == "NotFound"
    assert _status(caught.value)["kind"] == "Status"


def test_resource_versions_increase_cluster_wide_and_stale_writes_conflict(
    core: kubernetes.client.CoreV1Api,
) -> None:
    first = core.create_namespaced_pod("default", pod("a"))
    second = core.create_namespaced_config_map(
        "default", {"metadata": {"name": "c"}, "data": {"k": "v"}}
    )
    third = core.create_node({"metadata": {"name": "n1"}})
    versions = [int(o.metadata.resource_version) for o in (first, second, third)]
    assert versions == sorted(versions) and len(set(versions)) == 3
    core.patch_namespaced_pod("a", "default", {"metadata": {"labels": {"v": "2"}}})
    first.metadata.labels = {"v": "stale"}
    with pytest.raises(ApiException) as caught:
        core.replace_namespaced_pod("a", "default", first)
    assert caught.value.status == 409
    assert _status(caught.value)["reason"] == "Conflict"
    with pytest.raises(ApiException) as duplicate:
        core.create_namespaced_pod("default", pod("a"))
    assert (duplicate.value.status, _status(duplicate.value)["reason"]) == (409, "AlreadyExists")


def test_namespaces_must_exist_and_names_must_be_valid(core: kubernetes.client.CoreV1Api) -> None:
    with pytest.raises(ApiException) as missing:
        core.create_namespaced_pod("nowhere", pod("p", namespace="nowhere"))
    assert missing.value.status == 404
    with pytest.raises(ApiException) as bad:
        core.create_namespaced_pod("default", pod("Not_Valid"))
    assert (bad.value.status, _status(bad.value)["reason"]) == (422, "Invalid")
    generated = core.create_namespaced_pod(
        "default", {"metadata": {"generateName": "worker-"}, "spec": {"containers": []}}
    )
    assert (
        generated.metadata.name.startswith("worker-")
        and len(generated.metadata.name) == len("worker-") + 5
    )


def test_status_is_a_subresource(core: kubernetes.client.CoreV1Api) -> None:
    core.create_namespaced_pod("default", pod("s", node="n1"))
    running = core.patch_namespaced_pod_status(
        "s", "default", {"status": {"phase": "Running", "podIP": "10.0.0.5"}}
    )
    assert running.status.phase == "Running"
    ignored = core.patch_namespaced_pod(
        "s", "default", {"status": {"phase": "Failed"}, "metadata": {"labels": {"x": "y"}}}
    )
    assert ignored.status.phase == "Running"
    assert ignored.metadata.labels == {"x": "y"}
    spec_untouched = core.patch_namespaced_pod_status(
        "s", "default", {"spec": {"nodeName": "n2"}, "status": {"phase": "Succeeded"}}
    )
    assert (spec_untouched.spec.node_name, spec_untouched.status.phase) == ("n1", "Succeeded")


def test_label_and_field_selectors(core: kubernetes.client.CoreV1Api) -> None:
    core.create_namespace({"metadata": {"name": "ml"}})
    core.create_namespaced_pod("default", pod("a", node="n1", labels={"app": "train", "gpu": "8"}))
    core.create_namespaced_pod("default", pod("b", node="n2", labels={"app": "serve"}))
    core.create_namespaced_pod("ml", pod("c", namespace="ml", node="n1", labels={"app": "train"}))
    core.patch_namespaced_pod_status("b", "default", {"status": {"phase": "Running"}})

    def names(**kwargs: str) -> list[str]:
        return [p.metadata.name for p in core.list_pod_for_all_namespaces(**kwargs).items]

    assert names(label_selector="app=train") == ["a", "c"]
    assert names(label_selector="app in (serve, other)") == ["b"]
    assert names(label_selector="app!=train") == ["b"]
    assert names(label_selector="gpu") == ["a"]
    assert names(label_selector="!gpu") == ["b", "c"]
    assert names(label_selector="gpu>4") == ["a"]
    assert names(field_selector="spec.nodeName=n1") == ["a", "c"]
    assert names(field_selector="status.phase=Running") == ["b"]
    assert names(field_selector="metadata.namespace=ml") == ["c"]
    assert names(field_selector="metadata.name=a,spec.nodeName=n1") == ["a"]
    assert names(field_selector="metadata.name!=a") == ["b", "c"]
    assert [p.metadata.name for p in core.list_namespaced_pod("ml").items] == ["c"]
    with pytest.raises(ApiException) as caught:
        core.list_pod_for_all_namespaces(field_selector="spec.colour=red")
    assert caught.value.status == 400
    assert "field label not supported: spec.colour" in _status(caught.value)["message"]


def test_list_pagination_pages_a_consistent_snapshot(core: kubernetes.client.CoreV1Api) -> None:
    for i in range(7):
        core.create_namespaced_pod("default", pod(f"p{i}"))
    first = core.list_namespaced_pod("default", limit=3)
    assert [p.metadata.name for p in first.items] == ["p0", "p1", "p2"]
    assert first.metadata.remaining_item_count == 4
    core.create_namespaced_pod("default", pod("p7"))  # not in the snapshot
    second = core.list_namespaced_pod("default", limit=3, _continue=first.metadata._continue)
    third = core.list_namespaced_pod("default", limit=3, _continue=second.metadata._continue)
    assert [p.metadata.name for p in second.items + third.items] == ["p3", "p4", "p5", "p6"]
    assert not third.metadata._continue
    assert second.metadata.resource_version == first.metadata.resource_version
    with pytest.raises(ApiException) as expired:
        core.list_namespaced_pod("default", limit=3, _continue="999")
    assert (expired.value.status, _status(expired.value)["reason"]) == (410, "Expired")


def test_every_builtin_kind_supports_crud_through_the_dynamic_client(
    api: kubernetes.client.ApiClient,
) -> None:
    dynamic = DynamicClient(api)
    for api_version, kind, body in [
        ("v1", "Service", {"spec": {"ports": [{"port": 80}]}}),
        ("v1", "Endpoints", {"subsets": []}),
        ("v1", "Secret", {"type": "Opaque", "data": {"k": "dg=="}}),
        ("v1", "ConfigMap", {"data": {"k": "v"}}),
        ("v1", "Event", {"involvedObject": {"kind": "Pod", "name": "x"}, "reason": "Started"}),
        ("apps/v1", "Deployment", {"spec": {"replicas": 1}}),
        ("apps/v1", "ReplicaSet", {"spec": {"replicas": 1}}),
        ("apps/v1", "StatefulSet", {"spec": {"replicas": 1}}),
        ("apps/v1", "DaemonSet", {"spec": {}}),
        ("batch/v1", "Job", {"spec": {}}),
        ("batch/v1", "CronJob", {"spec": {"schedule": "* * * * *"}}),
        ("coordination.k8s.io/v1", "Lease", {"spec": {"holderIdentity": "me"}}),
        ("discovery.k8s.io/v1", "EndpointSlice", {"addressType": "IPv4", "endpoints": []}),
    ]:
        resource = dynamic.resources.get(api_version=api_version, kind=kind)
        created = resource.create(
            body={"apiVersion": api_version, "kind": kind, "metadata": {"name": "x"}, **body},
            namespace="default",
        )
        assert created.metadata.name == "x", kind
        assert resource.get(name="x", namespace="default").kind == kind
        assert len(resource.get(namespace="default").items) == 1
        resource.patch(
            name="x",
            namespace="default",
            body={"metadata": {"labels": {"k": kind.lower()}}},
            content_type="application/merge-patch+json",
        )
        resource.delete(name="x", namespace="default")
    classes = dynamic.resources.get(api_version="storage.k8s.io/v1", kind="StorageClass")
    classes.create(
        body={
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"name": "fast"},
            "provisioner": "csi.juicefs.com",
        }
    )
    assert classes.get(name="fast").provisioner == "csi.juicefs.com"


def test_a_token_is_required_when_configured(tmp_path: Path) -> None:
    with KubeApiServer(token="s3cret") as server:
        configuration = kubernetes.client.Configuration()
        configuration.host = server.url
        with (
            kubernetes.client.ApiClient(configuration) as client,
            pytest.raises(ApiException) as caught,
        ):
            kubernetes.client.CoreV1Api(client).list_namespace()
        assert caught.value.status == 401
        kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig")
        loaded = kubernetes.config.new_client_from_config(config_file=str(kubeconfig))
        assert {
            n.metadata.name for n in kubernetes.client.CoreV1Api(loaded).list_namespace().items
        } >= {"default", "kube-system"}
        loaded.close()


def test_requests_are_counted_by_method_and_path_with_watches_apart(
    kube: KubeApiServer, core: kubernetes.client.CoreV1Api
) -> None:
    core.list_node()
    core.list_node()
    core.list_node(watch=True, timeout_seconds=1, _preload_content=False).release_conn()
    seen = kube.requests()
    assert seen[("GET", "/api/v1/nodes")] == 2
    assert seen[("WATCH", "/api/v1/nodes")] == 1
