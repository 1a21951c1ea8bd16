"""release-finalizers: every object holding a Lens (or Primus-Lens) finalizer lets go, any kind."""

from __future__ import annotations

import kubernetes
import pytest

from lens.kube.workloads import uninstall
from lens.kube.workloads.finalizers import FINALIZER, ORIGINAL_FINALIZER
from lens.sim.kube.server import KubeApiServer
from lens.sim.kube.status import ApiError
from lens.sim.scenario import manifests


def _with_finalizers(obj: dict[str, object], *names: str) -> dict[str, object]:
    obj["metadata"]["finalizers"] = list(names)  # type: ignore[index]
    return obj


def test_every_kind_is_scanned_and_only_lens_finalizers_go(
    apiserver: KubeApiServer, api_client: kubernetes.client.ApiClient
) -> None:
    apiserver.create(manifests.PYTORCHJOB_CRD)
    apiserver.create(manifests.namespace("ml"))
    job = manifests.controller("Job", "batch/v1", "train", "ml", {"template": {}})
    apiserver.create(_with_finalizers(job, FINALIZER, "example.com/keep"))
    torch = manifests.controller("PyTorchJob", "kubeflow.org/v1", "bert", "ml", {})
    apiserver.create(_with_finalizers(torch, ORIGINAL_FINALIZER))
    untouched = manifests.controller("Job", "batch/v1", "other", "ml", {"template": {}})
    apiserver.create(_with_finalizers(untouched, "example.com/keep"))
    jobs = apiserver.resource("batch/v1", "Job")
    torches = apiserver.resource("kubeflow.org/v1", "PyTorchJob")
    apiserver.store.delete(torches, "ml", "bert")  # held by the finalizer until released
    released = uninstall.release_all(api_client)
    assert sorted((r.kind, r.namespace, r.name) for r in released) == [
        ("Job", "ml", "train"),
        ("PyTorchJob", "ml", "bert"),
    ]
    assert apiserver.store.get(jobs, "ml", "train")["metadata"]["finalizers"] == [
        "example.com/keep"
    ]
    assert apiserver.store.get(jobs, "ml", "other")["metadata"]["finalizers"] == [
        "example.com/keep"
    ]
    with pytest.raises(ApiError):  # the deletion it held went through
        apiserver.store.get(torches, "ml", "bert")
    assert uninstall.release_all(api_client) == []


def test_served_kinds_are_those_that_can_be_listed_and_patched(
    api_client: kubernetes.client.ApiClient,
) -> None:
    kinds = {(k.api_version, k.kind) for k in uninstall.served_kinds(api_client)}
    assert ("batch/v1", "Job") in kinds and ("apps/v1", "Deployment") in kinds
    assert all("/" not in k.plural for k in uninstall.served_kinds(api_client))
