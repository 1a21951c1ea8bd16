"""The multi-cluster storage config in `lens jobs` against two API emulators: the aggregate
created in the home cluster in the shape its readers parse, written again only when a cluster's
config changed, a cluster that cannot be reached skipped and named."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator
from pathlib import Path

import kubernetes
import pytest

from lens.roles.jobs import multistorage
from lens.roles.jobs.kubestorage import KubeSecrets
from lens.runtime.config import ClusterConfig, Config, ControllerConfig, JobsConfig
from lens.runtime.process import Process
from lens.sim.kube.server import KubeApiServer
from lens.sim.scenario import manifests
from lens.storage import multicluster
from lens.storage.secrets import SecretRef
from tests.roles.jobs.storageobjects import put_secret

CONFIG = SecretRef(namespace="lens", name="lens-storage-config")
AGGREGATE = SecretRef(namespace="lens", name="lens-multi-storage-config")
CLUSTERS = SecretRef(namespace="lens", name="lens-clusters")
HOME_POSTGRES = {"service": "pg", "port": 5432, "namespace": "lens", "password": "pw"}
EAST_POSTGRES = {**HOME_POSTGRES, "service": "pg-east"}


@pytest.fixture
def east() -> Iterator[KubeApiServer]:
    server = KubeApiServer().start()
    server.create(manifests.namespace("lens"))
    yield server
    server.stop()


def _config(*, aggregate: str = str(AGGREGATE)) -> Config:
    return Config(
        cluster=ClusterConfig(name="home"),
        jobs=JobsConfig(multi_storage_config_secret=aggregate),
        controller=ControllerConfig(clusters_secret=str(CLUSTERS)),
    )


def _add(api: kubernetes.client.ApiClient) -> tuple[Process, multistorage.MultiStorage]:
    config = _config()
    process = Process("jobs", server=config.server, service=config.service, handle_signals=False)
    body = multistorage.add(config, process, api=api, leading=lambda: True)
    assert body is not None
    return process, body


def _aggregate(api: kubernetes.client.ApiClient) -> dict[str, object]:
    secret = KubeSecrets(api, cluster="home").read(AGGREGATE)
    assert secret is not None
    return {c: dict(s.entries) for c, s in multicluster.parse_aggregate(secret).items()}


def _writes(apiserver: KubeApiServer) -> int:
    return sum(
        count
        for (method, path), count in apiserver.requests().items()
        if method in ("POST", "PATCH", "PUT") and "/secrets" in path
    )


@pytest.fixture
def clusters(
    apiserver: KubeApiServer, east: KubeApiServer, tmp_path: Path, free_port: Callable[[], int]
) -> None:
    """Home and east with a storage config; west listed but not answering."""
    apiserver.create(manifests.namespace("lens"))
    put_secret(apiserver, CONFIG, {"postgres": json.dumps(HOME_POSTGRES)})
    put_secret(east, CONFIG, {"postgres": json.dumps(EAST_POSTGRES), "region": "us-east"})
    east_kubeconfig = east.write_kubeconfig(tmp_path / "east").read_text()
    west_kubeconfig = east_kubeconfig.replace(east.url, f"http://127.0.0.1:{free_port()}")
    put_secret(apiserver, CLUSTERS, {"east": east_kubeconfig, "west": west_kubeconfig})


@pytest.mark.usefixtures("clusters")
def test_the_aggregate_is_created_and_written_again_only_when_different(
    apiserver: KubeApiServer,
    api_client: kubernetes.client.ApiClient,
    east: KubeApiServer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    process, body = _add(api_client)
    assert process.loops.runs("multi-storage") == 0  # the loop is on the process's runner
    with caplog.at_level(logging.WARNING, logger="lens.storage.gathering"):
        body.run()
        body.run()
    assert body.last is not None and body.last.gathered == ("east", "home")
    assert _aggregate(api_client) == {
        "home": {"postgres": HOME_POSTGRES},
        "east": {"postgres": EAST_POSTGRES, "region": "us-east"},
    }
    # urllib3 logs its own retries of west; Lens says it once, for every run.
    (line,) = [r for r in caplog.records if r.name == "lens.storage.gathering"]
    assert list(line.__dict__["clusters"]) == ["west"]
    assert "cluster west: get secret lens/lens-storage-config" in line.__dict__["clusters"]["west"]
    value = process.metrics.registry.get_sample_value
    assert value("lens_multi_storage_clusters", {"result": "success"}) == 2
    assert value("lens_multi_storage_clusters", {"result": "error"}) == 1

    assert body.last.written == "unchanged"
    writes = _writes(apiserver)
    put_secret(east, CONFIG, {"postgres": json.dumps({**EAST_POSTGRES, "port": 5433})})
    body.run()
    assert body.last.written == "updated" and _writes(apiserver) == writes + 1
    assert _aggregate(api_client)["east"] == {"postgres": {**EAST_POSTGRES, "port": 5433}}


@pytest.mark.usefixtures("clusters")
def test_nothing_is_written_when_no_cluster_could_be_read(
    apiserver: KubeApiServer, api_client: kubernetes.client.ApiClient, east: KubeApiServer
) -> None:
    secrets = apiserver.resource("v1", "Secret")
    apiserver.store.delete(secrets, "lens", CONFIG.name)
    east.store.delete(secrets, "lens", CONFIG.name)
    _, body = _add(api_client)
    body.run()
    assert body.last is not None and body.last.written == "nothing"
    assert KubeSecrets(api_client, cluster="home").read(AGGREGATE) is None


def test_nothing_runs_without_an_aggregate_secret(api_client: kubernetes.client.ApiClient) -> None:
    config = _config(aggregate="")
    process = Process("jobs", server=config.server, service=config.service, handle_signals=False)
    assert multistorage.add(config, process, api=api_client, leading=lambda: True) is None
    with pytest.raises(KeyError):
        process.loops.runs("multi-storage")
