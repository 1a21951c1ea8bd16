"""The summarisers' inputs mirror what the node agent's devices already read."""

from __future__ import annotations

import dataclasses
import typing

from lens.devices.gpu import GpuSnapshot
from lens.devices.ib import RdmaPort
from lens.reports.samples import GpuSample, Holder, Holding, PortSample

# A sample's own fields, or those it names differently from the device's snapshot.
GPU_RENAMED = {"vram_used_bytes": "memory_used_bytes"}
NOT_FROM_THE_SNAPSHOT = {"time"}  # the collection's, not the device's


def _hints(cls: type) -> dict[str, object]:
    return typing.get_type_hints(cls)


def test_every_gpu_sample_field_is_a_snapshot_field_of_the_same_type() -> None:
    snapshot = _hints(GpuSnapshot)
    for name, hint in _hints(GpuSample).items():
        if name in NOT_FROM_THE_SNAPSHOT:
            continue
        assert snapshot[GPU_RENAMED.get(name, name)] == hint, name


def test_every_port_sample_field_is_an_rdma_port_field_of_the_same_type() -> None:
    port = _hints(RdmaPort)
    for name, hint in _hints(PortSample).items():
        if name in NOT_FROM_THE_SNAPSHOT:
            continue
        assert port[name] == hint, name


def test_a_sample_knows_nothing_it_is_not_told() -> None:
    gpu = GpuSample(uuid="GPU-1", index=0, pci_bus_id="0000:0c:00.0", time=1.0)
    identity = {"uuid", "index", "pci_bus_id", "time"}
    readings = [f.name for f in dataclasses.fields(gpu) if f.name not in identity]
    assert all(getattr(gpu, name) in (None, ()) for name in readings)
    port = PortSample(device="mlx5_0", port=1, time=1.0)
    assert port.transmit_bytes is None and port.counters == ()


def holder(namespace: str, pod: str, container: str = "main") -> Holder:
    return Holder(
        cluster="prod",
        namespace=namespace,
        pod_name=pod,
        container=container,
        pod_uid=f"uid-{pod}",
        container_id=f"id-{pod}-{container}",
    )


def test_holders_sort_by_cluster_namespace_pod_and_container() -> None:
    holders = [holder("b", "a"), holder("a", "z", "side"), holder("a", "z")]
    assert sorted(holders) == [holder("a", "z"), holder("a", "z", "side"), holder("b", "a")]


def test_a_holding_without_an_end_is_still_held() -> None:
    holding = Holding(gpu_uuid="GPU-1", holder=holder("a", "p"), since=10.0)
    assert holding.until is None
