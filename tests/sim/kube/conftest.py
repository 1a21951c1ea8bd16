"""Fixtures: a running Kubernetes API emulator and the official client pointed at it."""

from __future__ import annotations

import random
from collections.abc import Iterator

import kubernetes
import pytest

from lens.sim.kube.server import KubeApiServer


@pytest.fixture
def kube() -> Iterator[KubeApiServer]:
    server = KubeApiServer(bookmark_interval=0.2, history_size=100, rng=random.Random(7))
    server.start()
    yield server
    server.stop()


@pytest.fixture
def core(api: kubernetes.client.ApiClient) -> kubernetes.client.CoreV1Api:
    return kubernetes.client.CoreV1Api(api)


def pod(
    name: str,
    *,
    namespace: str = "default",
    node: str = "",
    labels: dict[str, str] | None = None,
    owners: list[dict[str, object]] | None = None,
    finalizers: list[str] | None = None,
) -> dict[str, object]:
    metadata: dict[str, object] = {"name": name, "namespace": namespace, "labels": labels or {}}
    if owners:
        metadata["ownerReferences"] = owners
    if finalizers:
        metadata["finalizers"] = finalizers
    spec: dict[str, object] = {"containers": [{"name": "main", "image": "busybox"}]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}
