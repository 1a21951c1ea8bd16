from __future__ import annotations

from lens.sim.kubelet.devices import Device, DeviceAllocator
from lens.sim.kubelet.podresources import pod_resources


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
