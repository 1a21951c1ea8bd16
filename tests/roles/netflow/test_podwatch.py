"""netflow.peer_pods for real: `lens netflow` built in-process against the API emulator, a
connection to an address a pod holds, and the peer named in lens_netflow_peer_pod_info by the
pod's namespace and Deployment — then let go when the pod is deleted."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from lens.roles.netflow import main as netflow_main
from lens.runtime.config import Config, NetflowConfig
from lens.sim.kube.server import KubeApiServer
from tests.deploy.roleruns import LOOPBACK, Running, kubeconfig_of, process_of

pytestmark = pytest.mark.slow_timeout

POD_IP = "127.0.0.2"


def _pod() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "web-6b7c9-x2x4q",
            "namespace": "ml",
            "labels": {"app": "web", "pod-template-hash": "6b7c9"},
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": "web-6b7c9",
                    "uid": "rs-1",
                    "controller": True,
                },
            ],
            "annotations": {"note": "x" * 2000},
        },
        "spec": {
            "nodeName": "gpu-1",
            "containers": [{"name": "web", "image": "web:1", "env": [{"name": "K", "value": "v"}]}],
        },
        "status": {"phase": "Running", "podIP": POD_IP, "podIPs": [{"ip": POD_IP}]},
    }


@pytest.fixture
def kube() -> Iterator[KubeApiServer]:
    server = KubeApiServer(bookmark_interval=0.5).start()
    try:
        yield server
    finally:
        server.stop()


@contextlib.contextmanager
def _connection_to_the_pod() -> Iterator[None]:
    """A connection to POD_IP with bytes sent, open while the block runs."""
    with socket.create_server((POD_IP, 0)) as server:
        client = socket.create_connection(server.getsockname())
        accepted, _ = server.accept()
        with client, accepted:
            client.sendall(b"x" * 10_000)
            yield


def test_a_peer_that_is_a_pod_is_named_until_the_pod_goes(
    kube: KubeApiServer, tmp_path: Path, eventually: Callable[..., None]
) -> None:
    kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml"}})
    created = kube.create(_pod())
    config = Config(
        server=LOOPBACK,
        kube=kubeconfig_of(kube, tmp_path, "home"),
        netflow=NetflowConfig(backend="sockdiag", interval_seconds=0.5, peer_pods=True),
    )
    built = netflow_main.build(config, process_of("netflow"))
    registry = built.process.metrics.registry
    named = {"peer": POD_IP, "namespace": "ml", "pod": "web-6b7c9-x2x4q",
             "workload_kind": "Deployment", "workload": "web"}  # fmt: skip

    def info() -> float | None:
        return registry.get_sample_value("lens_netflow_peer_pod_info", named)

    def addresses() -> float | None:
        return registry.get_sample_value("lens_netflow_peer_pod_addresses")

    running = Running(built.process)
    try:
        with _connection_to_the_pod():
            eventually(lambda: info() == 1, timeout=10)
        assert addresses() == 1
        assert registry.get_sample_value("lens_netflow_peer_pod_watch_synced") == 1
        kube.store.delete(kube.resource("v1", "Pod"), "ml", created["metadata"]["name"])
        # Shown again (new bytes) or not, the peer's name goes with its pod.
        with _connection_to_the_pod():
            eventually(lambda: addresses() == 0 and info() is None, timeout=10)
    finally:
        running.stop()
