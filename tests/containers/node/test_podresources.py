"""Reading the kubelet's device allocations from a pod-resources server on a unix socket."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from lens.containers.model import Pod
from lens.containers.node.podresources import (
    AllocatedDevices,
    Allocations,
    PodResourcesClient,
    device_id,
)
from lens.runtime import errors
from lens.sim.kubelet import podresources as sim
from lens.sim.kubelet.devices import Device, DeviceAllocator

BDFS = ["0000:05:00.0", "0000:26:00.0", "0000:46:00.0"]


def _pod(name: str, *containers: tuple[str, int]) -> dict[str, object]:
    return {
        "metadata": {"uid": f"uid-{name}", "name": name, "namespace": "team-a"},
        "spec": {
            "containers": [
                {"name": c, "resources": {"limits": {"amd.com/gpu": str(n)}} if n else {}}
                for c, n in containers
            ]
        },
    }


@pytest.fixture
def kubelet(tmp_path: Path) -> Iterator[tuple[Path, list[dict[str, object]]]]:
    pods: list[dict[str, object]] = []
    allocator = DeviceAllocator({"amd.com/gpu": [Device(b, 0) for b in BDFS]})
    socket = tmp_path / "pod-resources" / "kubelet.sock"
    server = sim.serve(socket, lambda: list(pods), allocator)
    try:
        yield socket, pods
    finally:
        server.stop(grace=0).wait(5)


def test_list_keys_allocations_by_namespace_pod_and_container(
    kubelet: tuple[Path, list[dict[str, object]]],
) -> None:
    socket, pods = kubelet
    pods.append(_pod("train", ("worker", 2), ("sidecar", 0)))
    client = PodResourcesClient(str(socket), timeout_seconds=5)
    try:
        assert client.list() == {
            ("team-a", "train", "worker"): (
                AllocatedDevices(resource="amd.com/gpu", ids=tuple(BDFS[:2])),
            )
        }
    finally:
        client.close()


def test_allocations_are_read_again_for_a_new_pod_at_most_every_interval(
    kubelet: tuple[Path, list[dict[str, object]]],
) -> None:
    socket, pods = kubelet
    client = PodResourcesClient(str(socket), timeout_seconds=5)
    now = [100.0]
    allocations = Allocations(client.list, min_interval=1.0, monotonic=lambda: now[0])
    late = Pod(uid="uid-late", name="late", namespace="team-a")
    try:
        assert allocations.of(late, "worker") == ()
        pods.append(_pod("late", ("worker", 1)))
        assert allocations.of(late, "worker") == (), "read less than a second ago"
        now[0] += 1.0
        (devices,) = allocations.of(late, "worker")
        assert devices.ids == (BDFS[0],)
    finally:
        client.close()


def test_an_unreachable_kubelet_keeps_the_last_good_allocations(tmp_path: Path) -> None:
    missing = PodResourcesClient(str(tmp_path / "none.sock"), timeout_seconds=1)
    with pytest.raises(errors.SourceError, match="pod-resources List"):
        missing.list()
    missing.close()
    answers: list[object] = [
        {("ns", "p", "c"): (AllocatedDevices(resource="amd.com/gpu", ids=("x",)),)},
        errors.SourceError("kubelet down"),
    ]

    def read() -> dict[tuple[str, str, str], tuple[AllocatedDevices, ...]]:
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        assert isinstance(answer, dict)
        return answer

    allocations = Allocations(read)
    allocations.refresh()
    allocations.refresh()
    assert allocations.of(Pod(uid="u", name="p", namespace="ns"), "c")[0].ids == ("x",)


def test_plugin_ids_name_their_device() -> None:
    assert device_id("0000:1B:00.0") == "0000:1b:00.0"
    assert device_id("GPU-8f2d::3") == "gpu-8f2d"
