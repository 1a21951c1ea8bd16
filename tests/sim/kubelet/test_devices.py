from __future__ import annotations

from lens.sim.kubelet.devices import Device, DeviceAllocator


def _pod(uid: str, **limits: str) -> dict[str, object]:
    containers = [
        {"name": name, "resources": {"limits": {"amd.com/gpu": count}}}
        for name, count in limits.items()
    ]
    return {"metadata": {"uid": uid}, "spec": {"containers": containers}}


def test_devices_are_given_once_per_pod_and_returned_on_release() -> None:
    allocator = DeviceAllocator(
        {"amd.com/gpu": [Device(f"0000:0{i}:00.0", i // 2) for i in range(4)]}
    )
    first = allocator.assignments(_pod("a", main="2", side="1"))
    assert [(a.container, [d.id for d in a.devices]) for a in first] == [
        ("main", ["0000:00:00.0", "0000:01:00.0"]),
        ("side", ["0000:02:00.0"]),
    ]
    assert allocator.assignments(_pod("a", main="2", side="1")) == first
    (second,) = allocator.assignments(_pod("b", main="4"))
    assert [d.id for d in second.devices] == ["0000:03:00.0"], "only what is free"
    allocator.release({"a"})
    assert allocator.known() == {"b"}
    (third,) = allocator.assignments(_pod("c", main="3"))
    assert len(third.devices) == 3


def test_unknown_resources_and_odd_quantities_are_ignored() -> None:
    allocator = DeviceAllocator({"amd.com/gpu": [Device("0000:05:00.0", 0)]})
    pod = {
        "metadata": {"uid": "x"},
        "spec": {
            "containers": [
                {"name": "c", "resources": {"limits": {"nvidia.com/gpu": "1", "amd.com/gpu": "1k"}}}
            ]
        },
    }
    assert [a.devices for a in allocator.assignments(pod)] == [()]
