"""The simulated kubelet's pod-resources service: pods' allocations, and an outage."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from lens.containers.node.podresources import PodResourcesClient
from lens.runtime import errors
from lens.sim.kubelet.devices import Device, DeviceAllocator
from lens.sim.kubelet.podresources import pod_resources, serve


def test_a_pod_becomes_pod_resources_with_numa_topology() -> None:
    allocator = DeviceAllocator(
        {"amd.com/gpu": [Device("0000:05:00.0", 0), Device("0000:85:00.0", 1)]}
    )
    pod = {
        "metadata": {"uid": "u", "name": "p", "namespace": "ns"},
        "spec": {"containers": [{"name": "c", "resources": {"limits": {"amd.com/gpu": "2"}}}]},
    }
    resources = pod_resources(pod, allocator)
    assert (resources.name, resources.namespace) == ("p", "ns")
    (devices,) = resources.containers[0].devices
    assert list(devices.device_ids) == ["0000:05:00.0", "0000:85:00.0"]
    assert [n.ID for n in devices.topology.nodes] == [0, 1]


def test_list_answers_unavailable_while_the_kubelet_is_down(tmp_path: Path) -> None:
    allocator = DeviceAllocator({"amd.com/gpu": [Device("0000:05:00.0", 0)]})
    pod = {
        "metadata": {"uid": "u", "name": "p", "namespace": "ns"},
        "spec": {"containers": [{"name": "c", "resources": {"limits": {"amd.com/gpu": "1"}}}]},
    }
    down = threading.Event()
    down.set()
    server = serve(tmp_path / "kubelet.sock", lambda: [pod], allocator, unavailable=down.is_set)
    client = PodResourcesClient(str(tmp_path / "kubelet.sock"), timeout_seconds=5)
    try:
        with pytest.raises(errors.SourceError, match="UNAVAILABLE: kubelet not serving"):
            client.list()
        down.clear()
        (allocated,) = client.list()[("ns", "p", "c")]
        assert allocated.ids == ("0000:05:00.0",)
    finally:
        client.close()
        server.stop(grace=0).wait(5)
