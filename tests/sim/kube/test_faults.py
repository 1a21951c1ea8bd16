"""Injected request failures through the official client."""

from __future__ import annotations

import kubernetes
import pytest
from kubernetes.client.exceptions import ApiException

from lens.sim.kube.server import KubeApiServer


def test_the_next_requests_fail_with_the_injected_code(
    kube: KubeApiServer, core: kubernetes.client.CoreV1Api
) -> None:
    kube.faults.fail_requests(500, count=2, method="GET", path_contains="/pods")
    for _ in range(2):
        with pytest.raises(ApiException) as caught:
            core.list_pod_for_all_namespaces()
        assert (caught.value.status, caught.value.reason) == (500, "Internal Server Error")
    assert core.list_namespace().items  # other paths were never affected
    assert core.list_pod_for_all_namespaces().items == []


def test_too_many_requests_carries_retry_after(
    kube: KubeApiServer, core: kubernetes.client.CoreV1Api
) -> None:
    kube.faults.fail_requests(429, retry_after=3, method="POST")
    with pytest.raises(ApiException) as caught:
        core.create_namespaced_config_map("default", {"metadata": {"name": "c"}})
    assert caught.value.status == 429
    assert caught.value.headers["Retry-After"] == "3"
    assert (
        core.create_namespaced_config_map("default", {"metadata": {"name": "c"}}).metadata.name
        == "c"
    )


def test_faults_bookkeeping() -> None:
    from lens.sim.kube.faults import Faults

    faults = Faults()
    assert faults.take_failure("GET", "/api") is None
    faults.force_gone(2)
    assert [faults.take_gone() for _ in range(3)] == [True, True, False]
    generation = faults.close_generation
    faults.close_watches()
    assert faults.close_generation == generation + 1
    faults.stall_watches()
    assert faults.stalled and not faults.wait_unstalled(0.01)
    faults.resume_watches()
    assert not faults.stalled
