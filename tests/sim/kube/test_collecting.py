"""Finalizers and garbage collection through the official client."""

from __future__ import annotations

import kubernetes
import pytest
from kubernetes.client.exceptions import ApiException

from lens.sim.kube.server import KubeApiServer

from .conftest import pod


def _owner(obj: object, kind: str, api_version: str = "apps/v1") -> dict[str, object]:
    return {
        "apiVersion": api_version,
        "kind": kind,
        "name": obj.metadata.name,
        "uid": obj.metadata.uid,  # type: ignore[attr-defined]
        "controller": True,
        "blockOwnerDeletion": True,
    }


TEMPLATE = {
    "metadata": {"labels": {"app": "train"}},
    "spec": {"containers": [{"name": "main", "image": "busybox"}]},
}
SPEC = {"replicas": 2, "selector": {"matchLabels": {"app": "train"}}, "template": TEMPLATE}


def _tree(
    api: kubernetes.client.ApiClient,
) -> tuple[kubernetes.client.AppsV1Api, kubernetes.client.CoreV1Api]:
    apps, core = kubernetes.client.AppsV1Api(api), kubernetes.client.CoreV1Api(api)
    deployment = apps.create_namespaced_deployment(
        "default", {"metadata": {"name": "train"}, "spec": SPEC}
    )
    replicaset = apps.create_namespaced_replica_set(
        "default",
        {
            "metadata": {
                "name": "train-abc",
                "ownerReferences": [_owner(deployment, "Deployment")],
            },
            "spec": SPEC,
        },
    )
    for i in range(2):
        core.create_namespaced_pod(
            "default", pod(f"train-abc-{i}", owners=[_owner(replicaset, "ReplicaSet")])
        )
    return apps, core


def _names(core: kubernetes.client.CoreV1Api) -> list[str]:
    return [p.metadata.name for p in core.list_namespaced_pod("default").items]


def test_a_finalizer_holds_an_object_until_it_is_removed(core: kubernetes.client.CoreV1Api) -> None:
    core.create_namespaced_pod("default", pod("held", finalizers=["lens.example/keep"]))
    marked = core.delete_namespaced_pod("held", "default")
    assert marked.metadata.deletion_timestamp is not None
    assert core.read_namespaced_pod("held", "default").metadata.finalizers == ["lens.example/keep"]
    again = core.delete_namespaced_pod("held", "default")
    assert again.metadata.deletion_timestamp == marked.metadata.deletion_timestamp
    core.patch_namespaced_pod(
        "held",
        "default",
        {"metadata": {"$deleteFromPrimitiveList/finalizers": ["lens.example/keep"]}},
    )
    with pytest.raises(ApiException) as caught:
        core.read_namespaced_pod("held", "default")
    assert caught.value.status == 404


def test_finalizers_merge_as_a_set_under_strategic_merge(core: kubernetes.client.CoreV1Api) -> None:
    core.create_namespaced_pod("default", pod("f", finalizers=["a/one"]))
    merged = core.patch_namespaced_pod(
        "f", "default", {"metadata": {"finalizers": ["a/two", "a/one"]}}
    )
    assert merged.metadata.finalizers == ["a/one", "a/two"]


def test_background_deletion_collects_the_whole_tree(
    kube: KubeApiServer, api: kubernetes.client.ApiClient
) -> None:
    apps, core = _tree(api)
    apps.delete_namespaced_deployment("train", "default")
    assert kube.settle()
    assert apps.list_namespaced_replica_set("default").items == []
    assert _names(core) == []


def test_orphan_deletion_keeps_dependents_without_the_owner(
    kube: KubeApiServer, api: kubernetes.client.ApiClient
) -> None:
    apps, core = _tree(api)
    apps.delete_namespaced_deployment("train", "default", propagation_policy="Orphan")
    assert kube.settle()
    replicaset = apps.read_namespaced_replica_set("train-abc", "default")
    assert replicaset.metadata.owner_references is None
    assert len(_names(core)) == 2


def test_foreground_deletion_removes_dependents_before_the_owner(
    kube: KubeApiServer, api: kubernetes.client.ApiClient
) -> None:
    apps, core = _tree(api)
    # A deletion still in progress answers with the object, which the client, expecting a
    # V1Status, hands back as a dict (as it does against a real API server).
    marked = apps.delete_namespaced_deployment("train", "default", propagation_policy="Foreground")
    assert "foregroundDeletion" in marked["metadata"]["finalizers"]
    assert kube.settle()
    assert _names(core) == []
    with pytest.raises(ApiException):
        apps.read_namespaced_deployment("train", "default")


def test_a_dependent_with_another_live_owner_only_loses_the_reference(
    kube: KubeApiServer, api: kubernetes.client.ApiClient
) -> None:
    core = kubernetes.client.CoreV1Api(api)
    one = core.create_namespaced_config_map("default", {"metadata": {"name": "one"}})
    two = core.create_namespaced_config_map("default", {"metadata": {"name": "two"}})
    core.create_namespaced_pod(
        "default",
        pod("shared", owners=[_owner(one, "ConfigMap", "v1"), _owner(two, "ConfigMap", "v1")]),
    )
    core.delete_namespaced_config_map("one", "default")
    assert kube.settle()
    survivor = core.read_namespaced_pod("shared", "default")
    assert [r.name for r in survivor.metadata.owner_references] == ["two"]


def test_deleting_a_namespace_deletes_its_contents(
    kube: KubeApiServer, core: kubernetes.client.CoreV1Api
) -> None:
    core.create_namespace({"metadata": {"name": "team"}})
    core.create_namespaced_pod("team", pod("p", namespace="team"))
    core.create_namespaced_pod("team", pod("held", namespace="team", finalizers=["x/hold"]))
    terminating = core.delete_namespace("team")
    assert terminating["status"]["phase"] == "Terminating"
    with pytest.raises(ApiException) as refused:
        core.create_namespaced_pod("team", pod("late", namespace="team"))
    assert refused.value.status == 403
    assert kube.settle()
    assert [p.metadata.name for p in core.list_namespaced_pod("team").items] == ["held"]
    assert core.read_namespace("team").status.phase == "Terminating"
    core.patch_namespaced_pod("held", "team", {"metadata": {"finalizers": None}})
    assert kube.settle()
    assert "team" not in [n.metadata.name for n in core.list_namespace().items]
    assert core.list_pod_for_all_namespaces().items == []


def test_deleting_a_job_orphans_its_pods_by_default(
    kube: KubeApiServer, api: kubernetes.client.ApiClient
) -> None:
    batch, core = kubernetes.client.BatchV1Api(api), kubernetes.client.CoreV1Api(api)
    job = batch.create_namespaced_job(
        "default", {"metadata": {"name": "j"}, "spec": {"template": TEMPLATE}}
    )
    core.create_namespaced_pod("default", pod("j-1", owners=[_owner(job, "Job", "batch/v1")]))
    batch.delete_namespaced_job("j", "default")
    assert kube.settle()
    assert _names(core) == ["j-1"]
