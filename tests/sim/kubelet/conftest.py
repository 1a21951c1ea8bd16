"""Fixtures: an API emulator with one MI300X node and its simulated kubelet."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from lens.runtime.clock import FakeClock
from lens.sim.hosts.state import NodeSpec
from lens.sim.hosts.tree import HostTree
from lens.sim.kube.server import KubeApiServer
from lens.sim.kubelet.server import KubeletServer, inventory_from_tree


@dataclass
class Node:
    kube: KubeApiServer
    kubelet: KubeletServer
    tree: HostTree
    clock: FakeClock

    def pod(
        self, name: str, *, gpus: int = 0, init_gpus: int = 0, node: str = "gpu-node-1"
    ) -> dict[str, object]:
        def container(cname: str, count: int) -> dict[str, object]:
            limits = {"amd.com/gpu": str(count)} if count else {}
            return {"name": cname, "image": "rocm/pytorch", "resources": {"limits": limits}}

        spec: dict[str, object] = {
            "nodeName": node,
            "containers": [container("trainer", gpus), container("sidecar", 0)],
        }
        if init_gpus:
            spec["initContainers"] = [container("warmup", init_gpus)]
        body = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": "default"},
            "spec": spec,
        }
        return self.kube.create(body)


@pytest.fixture
def node(tmp_path: Path) -> Iterator[Node]:
    clock = FakeClock(start_time=1_800_000_000.0)
    tree = HostTree(tmp_path / "host", NodeSpec(name="gpu-node-1", rdma=0), clock=clock).build()
    kube = KubeApiServer(clock=clock).start()
    kubelet = KubeletServer(
        kube.store,
        "gpu-node-1",
        directory=tmp_path / "kubelet",
        inventory=inventory_from_tree(tree.node.gpus, "amd.com/gpu"),
        clock=clock,
    ).start()
    yield Node(kube, kubelet, tree, clock)
    kubelet.stop()
    kube.stop()
