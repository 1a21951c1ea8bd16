"""The storage jobs' Kubernetes side against the API emulator: StorageClasses listed, Secrets
read and written, errors said in one line, and the clusters of the clusters Secret reached."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import kubernetes
import pytest

from lens.roles.jobs import kubestorage
from lens.roles.jobs.kubestorage import ClusterClients, KubeSecrets
from lens.runtime import errors
from lens.sim.kube.server import KubeApiServer
from lens.sim.scenario import manifests
from lens.storage import secrets
from lens.storage.secrets import SecretRef
from tests.roles.jobs.storageobjects import put_secret, storage_class

REF = SecretRef(namespace="lens", name="lens-multi-storage-config")
CLUSTERS = SecretRef(namespace="lens", name="lens-clusters")


@pytest.fixture
def east() -> Iterator[KubeApiServer]:
    server = KubeApiServer().start()
    yield server
    server.stop()


def test_storage_classes_are_listed(
    apiserver: KubeApiServer, api_client: kubernetes.client.ApiClient
) -> None:
    for name in ("jfs", "gp3"):
        apiserver.create(storage_class(name, "csi.juicefs.com"))
    listing = kubestorage.list_storage_classes(api_client)
    assert isinstance(listing, dict)
    assert sorted(item["metadata"]["name"] for item in listing["items"]) == ["gp3", "jfs"]


def test_secrets_are_read_created_and_replaced(
    apiserver: KubeApiServer, api_client: kubernetes.client.ApiClient
) -> None:
    apiserver.create(manifests.namespace("lens"))
    store = KubeSecrets(api_client, cluster="home")
    assert store.read(REF) is None
    store.create(REF, {"east": secrets.encode_text("{}"), "west": secrets.encode_text("{}")})
    first = store.read(REF)
    assert first is not None and set(first.data) == {"east", "west"}
    store.replace(REF, {"east": secrets.encode_text('{"a":1}')}, previous=first)
    second = store.read(REF)
    assert second is not None and second.data == {"east": secrets.encode_text('{"a":1}')}
    stored = apiserver.store.get(apiserver.resource("v1", "Secret"), "lens", REF.name)
    assert stored["metadata"]["labels"] == {"app.kubernetes.io/managed-by": "lens"}
    assert stored["type"] == "Opaque"
    with pytest.raises(errors.Conflict, match="cluster home: update secret lens/"):
        store.replace(REF, {}, previous=first)  # someone wrote since: not overwritten unseen


def test_api_errors_are_one_line_without_headers(
    apiserver: KubeApiServer,
    api_client: kubernetes.client.ApiClient,
    free_port: Callable[[], int],
) -> None:
    store = KubeSecrets(api_client, cluster="home")
    apiserver.faults.fail_requests(500, path_contains="/secrets/")
    with pytest.raises(errors.KubeError) as failed:
        store.read(REF)
    said = str(failed.value)
    assert said.startswith("cluster home: get secret lens/lens-multi-storage-config: 500")
    assert "\n" not in said and "Content-Type" not in said
    assert failed.value.__cause__ is None and failed.value.__suppress_context__
    apiserver.faults.fail_requests(403, path_contains="/secrets/")
    with pytest.raises(errors.Forbidden):
        store.read(REF)
    with pytest.raises(errors.NotFound, match='namespaces "lens" not found'):
        store.create(REF, {})
    configuration = kubernetes.client.Configuration()
    configuration.host = f"http://127.0.0.1:{free_port()}"
    configuration.retries = 0
    with (
        kubernetes.client.ApiClient(configuration) as nowhere,
        pytest.raises(errors.SourceError, match="cluster x: get secret"),
    ):
        KubeSecrets(nowhere, cluster="x").read(REF)


def test_clusters_come_from_the_clusters_secret(
    apiserver: KubeApiServer,
    api_client: kubernetes.client.ApiClient,
    east: KubeApiServer,
    tmp_path: Path,
) -> None:
    apiserver.create(manifests.namespace("lens"))
    clients = ClusterClients(api_client, home="home", clusters_secret=str(CLUSTERS))
    assert [t.name for t in clients.targets()] == ["home"], "no Secret yet: this cluster alone"
    kubeconfig = east.write_kubeconfig(tmp_path / "east").read_text()
    put_secret(apiserver, CLUSTERS, {"east": kubeconfig, "home": kubeconfig, "Bad": kubeconfig})
    home, bad, east_target = clients.targets()
    assert (home.name, bad.name, east_target.name) == ("home", "Bad", "east")
    assert bad.secrets is None and "DNS label" in bad.problem
    assert east_target.secrets is not None and east_target.secrets.read(REF) is None
    assert clients.targets()[2] is east_target, "an unchanged kubeconfig keeps its client"

    put_secret(apiserver, CLUSTERS, {"east": "not: [a kubeconfig", "north": "%%"})
    _, east_again, north = clients.targets()
    assert east_again is east_target, "a broken edit does not stop a working cluster"
    assert north.secrets is None and "not a usable kubeconfig" in north.problem

    apiserver.faults.fail_requests(500, path_contains="lens-clusters")
    assert [t.name for t in clients.targets()] == ["home", "east", "north"]
    put_secret(apiserver, CLUSTERS, {})
    assert [t.name for t in clients.targets()] == ["home"]
    clients.close()
