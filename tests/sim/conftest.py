"""Shared by the simulator tests: the official client pointed at a `kube` fixture's emulator."""

from __future__ import annotations

from collections.abc import Iterator

import kubernetes
import pytest

from lens.sim.kube.server import KubeApiServer


@pytest.fixture
def api(kube: KubeApiServer) -> Iterator[kubernetes.client.ApiClient]:
    configuration = kubernetes.client.Configuration()
    configuration.host = kube.url
    client = kubernetes.client.ApiClient(configuration)
    yield client
    client.close()
