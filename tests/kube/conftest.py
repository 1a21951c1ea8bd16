"""Fixtures: an API emulator and the simulated kubelet of node gpu-node-1, with a token file."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from lens.runtime.clock import FakeClock
from lens.runtime.config import KubeletConfig
from lens.sim.kube.server import KubeApiServer
from lens.sim.kubelet.devices import Device
from lens.sim.kubelet.server import KubeletServer


@dataclass
class Kubelet:
    kube: KubeApiServer
    server: KubeletServer
    token_file: Path
    config: KubeletConfig

    def add_pod(self, name: str, spec: dict[str, object], phase: str = "Running") -> None:
        body = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"nodeName": "gpu-node-1", **spec},
            "status": {"phase": phase},
        }
        self.kube.create(body)


@pytest.fixture
def kubelet(tmp_path: Path) -> Iterator[Kubelet]:
    clock = FakeClock(start_time=1_800_000_000.0)
    kube = KubeApiServer(clock=clock).start()
    inventory = {"amd.com/gpu": [Device(f"0000:{i:02x}:00.0", 0) for i in range(8)]}
    server = KubeletServer(
        kube.store, "gpu-node-1", directory=tmp_path / "kubelet", inventory=inventory, clock=clock
    ).start()
    token_file = tmp_path / "token"
    token_file.write_text("sim-kubelet-token\n")
    config = KubeletConfig(
        url=server.url,
        token_file=str(token_file),
        ca_file=str(server.cert.ca_file),
        timeout_seconds=2.0,
    )
    yield Kubelet(kube, server, token_file, config)
    server.stop()
    kube.stop()
