"""Each role run against API emulators as the manifests configure it, every feature that calls
the API server exercised, and the requests it made recorded (lens/sim/kube/recording.py):
the evidence tests/deploy/test_rbac.py holds against the rendered RBAC."""

from __future__ import annotations

import base64
import collections
import dataclasses
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from lens.runtime.config import DatabaseConfig, KubeConfig, ServerConfig, ServiceConfig
from lens.runtime.process import Process
from lens.sim.kube.recording import ApiRequest
from lens.sim.kube.server import KubeApiServer
from lens.sim.kube.status import ApiError
from lens.sim.scenario import manifests

Requests = collections.Counter[ApiRequest]
WAIT_SECONDS = 20.0


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Settings:
    """What names Kubernetes objects in the roles' configuration, as the manifests set it
    (features no overlay turns on get the names the RBAC files expect)."""

    namespace: str
    controller_lease: str
    kubelet_service: str
    clusters_secret: str
    finalizer_kinds: tuple[str, ...]
    jobs_lease: str
    storage_config_secret: str
    multi_storage_config_secret: str


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Recorded:
    """A role's requests: to its own cluster, and to the other cluster it reached with the
    kubeconfig of the clusters Secret (as the identity that kubeconfig holds)."""

    home: Requests
    remote: Requests = dataclasses.field(default_factory=collections.Counter)


def wait_for(what: str, predicate: Callable[[], bool], timeout: float = WAIT_SECONDS) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"waited {timeout} s for {what}"
        time.sleep(0.05)


@contextmanager
def emulator() -> Iterator[KubeApiServer]:
    server = KubeApiServer(bookmark_interval=0.5, history_size=10_000).start()
    try:
        yield server
    finally:
        server.stop()


def split(ref: str) -> tuple[str, str]:
    namespace, _, name = ref.partition("/")
    return namespace, name


def ensure_namespace(kube: KubeApiServer, namespace: str) -> None:
    try:
        kube.create(manifests.namespace(namespace))
    except ApiError as exc:
        if exc.code != 409:
            raise


def put_secret(kube: KubeApiServer, ref: str, texts: dict[str, str]) -> None:
    """Create the Secret `NAMESPACE/NAME`, or replace its data, as an operator would."""
    namespace, name = split(ref)
    rtype = kube.resource("v1", "Secret")
    data = {key: base64.b64encode(text.encode()).decode() for key, text in texts.items()}
    body: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": namespace},
        "data": data,
    }
    try:
        current = kube.store.get(rtype, namespace, name)
    except ApiError:
        kube.create(body)
        return
    body["metadata"] = dict(current["metadata"])
    kube.store.update(rtype, namespace, name, body)


def kubeconfig_of(kube: KubeApiServer, directory: Path, name: str) -> KubeConfig:
    path = kube.write_kubeconfig(directory / f"{name}.kubeconfig", context=name)
    return KubeConfig(source="kubeconfig", kubeconfig=str(path), stall_seconds=10)


def database_of(directory: Path, name: str) -> DatabaseConfig:
    return DatabaseConfig(url=f"sqlite:///{directory / f'{name}.db'}")


LOOPBACK = ServerConfig(host="127.0.0.1", port=0)


class Running:
    """A built role's process served on its own thread."""

    def __init__(self, process: Process) -> None:
        self.process = process
        self._thread = threading.Thread(target=process.service.run, daemon=True)
        self._thread.start()
        assert process.service.started.wait(15), "the role did not start"

    def stop(self) -> None:
        if self._thread.is_alive():
            self.process.service.request_stop("test over")
            self._thread.join(20)
        assert not self._thread.is_alive(), "the role did not stop"


def process_of(role: str, server: ServerConfig = LOOPBACK) -> Process:
    service = ServiceConfig(readiness_interval_seconds=0.2)
    return Process(role, server=server, service=service, handle_signals=False)
