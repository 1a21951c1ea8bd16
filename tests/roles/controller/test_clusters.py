"""Clusters from a Secret of the home cluster: each watched into rows carrying its name."""

from __future__ import annotations

import base64
import logging
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import cast

import kubernetes
import pytest

from lens.kube.workloads.clustersync import ClusterSync
from lens.roles.controller.clusters import ClusterSecret
from lens.roles.controller.fleet import ClusterTarget, Fleet
from lens.sim.kube.server import KubeApiServer
from lens.sim.scenario import manifests


class Started:
    def __init__(self, cluster: str, api: kubernetes.client.ApiClient) -> None:
        self.cluster = cluster
        self.cluster_api = api

    def start(self) -> None:
        """Nothing to watch in this test: the fleet's choice of clusters is what is checked."""

    def stop(self) -> None:
        """As start."""

    def listed(self) -> bool:
        return True


@pytest.fixture
def east() -> Iterator[KubeApiServer]:
    server = KubeApiServer().start()
    yield server
    server.stop()


def _put_secret(home: KubeApiServer, data: dict[str, str]) -> None:
    secrets = home.resource("v1", "Secret")
    encoded = {k: base64.b64encode(v.encode()).decode() for k, v in data.items()}
    body = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "lens-clusters", "namespace": "lens"},
        "data": encoded,
    }
    try:
        current = home.store.get(secrets, "lens", "lens-clusters")
    except Exception:  # first write
        home.create(body)
        return
    body["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]  # type: ignore[index]
    home.store.update(secrets, "lens", "lens-clusters", body)


def test_clusters_come_and_go_with_the_secret(
    apiserver: KubeApiServer,
    api_client: kubernetes.client.ApiClient,
    east: KubeApiServer,
    tmp_path: Path,
    eventually: Callable[..., None],
    caplog: pytest.LogCaptureFixture,
) -> None:
    apiserver.create(manifests.namespace("lens"))
    fleet = Fleet(lambda name, api: cast(ClusterSync, Started(name, api)))
    home = ClusterTarget("home", api_client)
    secret = ClusterSecret(api_client, secret="lens/lens-clusters", home=home, fleet=fleet)
    fleet.start()
    fleet.lead()
    try:
        secret.refresh()  # no Secret yet: the home cluster alone
        eventually(lambda: [s.cluster for s in fleet.syncs()] == ["home"])
        kubeconfig = east.write_kubeconfig(tmp_path / "east").read_text()
        _put_secret(apiserver, {"east": kubeconfig})
        secret.refresh()
        assert secret.names() == ["east"]
        eventually(lambda: sorted(s.cluster for s in fleet.syncs()) == ["east", "home"])
        east_sync = next(s for s in fleet.syncs() if s.cluster == "east")
        with caplog.at_level(logging.ERROR):
            _put_secret(apiserver, {"east": "not: [a kubeconfig", "home": kubeconfig, "Bad": "x"})
            secret.refresh()
        assert secret.names() == ["east"], "a broken edit keeps the working cluster"
        assert next(s for s in fleet.syncs() if s.cluster == "east") is east_sync
        assert set(secret.problems()) == {"east", "home", "Bad"}
        assert "home cluster's own name" in secret.problems()["home"]
        _put_secret(apiserver, {})
        secret.refresh()
        eventually(lambda: [s.cluster for s in fleet.syncs()] == ["home"])
    finally:
        fleet.close()
