"""Devices and containers as the reports domain takes them."""

from __future__ import annotations

from lens.containers.model import Container, Device, Pod
from lens.devices.gpu import GpuSnapshot, GpuStatic
from lens.devices.ib import RdmaDevice, RdmaPort
from lens.roles.node_agent import conversions


def test_a_port_sample_keeps_only_error_and_discard_counters() -> None:
    port = RdmaPort(
        device="mlx5_0",
        port=1,
        transmit_bytes=10,
        counters=(
            ("symbol_error", 1),
            ("unicast_xmit_packets", 9),
            ("port_xmit_discards", 2),
            ("port_xmit_wait", 40_000),  # congestion, not an error
        ),
        hw_counters=(("out_of_buffer", 3), ("rx_write_requests", 99), ("packet_seq_err", 4)),
    )
    sampler = conversions.PortSampler()
    sample = sampler.sample(port, 5.0)
    assert sampler.sample(port, 5.0) == sample  # the names judged once, the same way
    assert sample.counters == (("symbol_error", 1), ("port_xmit_discards", 2))
    assert sample.hw_counters == (("out_of_buffer", 3), ("packet_seq_err", 4))
    assert (sample.time, sample.transmit_bytes) == (5.0, 10)


def test_a_gpu_sample_carries_the_snapshots_readings() -> None:
    gpu = GpuSnapshot(
        vendor="nvidia",
        index=3,
        pci_bus_id="0000:3b:00.0",
        card="",
        model="H100",
        serial="1",
        uuid="GPU-abc",
        memory_used_bytes=7,
        energy_joules=9.5,
    )
    sample = conversions.gpu_sample(gpu, 12.0)
    assert (sample.uuid, sample.index, sample.vram_used_bytes, sample.energy_joules) == (
        "GPU-abc",
        3,
        7,
        9.5,
    )


def _container(**changes: object) -> Container:
    fields: dict[str, object] = {
        "id": "c1",
        "name": "main",
        "pod": Pod(uid="u", name="p", namespace="ns"),
        "devices": (
            Device(type="gpu", name="H100", number=0, uuid="GPU-0"),
            Device(type="ib", name="mlx5_0", number=0, uuid="guid"),
        ),
        "created_at": 100.0,
        "status": "Running",
    }
    fields.update(changes)
    return Container(**fields)  # type: ignore[arg-type]


def test_a_container_holds_its_gpus_from_creation_until_it_exited() -> None:
    (holding,) = conversions.holdings(_container())
    assert (holding.gpu_uuid, holding.since, holding.until) == ("GPU-0", 100.0, None)
    assert holding.holder.pod_uid == "u" and holding.holder.container_id == "c1"
    (ended,) = conversions.holdings(_container(status="Exit", exited_at=160.0))
    assert ended.until == 160.0
    (gone,) = conversions.holdings(_container(), ended_at=170.0)
    assert gone.until == 170.0
    assert conversions.holdings(_container(devices=())) == []


def test_gpu_facts_take_static_facts_and_fall_back_to_the_snapshot() -> None:
    gpu = GpuSnapshot(
        vendor="amd",
        index=0,
        pci_bus_id="0000:05:00.0",
        card="card0",
        model="MI300X",
        serial="S",
        uuid="U",
        memory_total_bytes=100,
        numa_node=1,
        static=GpuStatic(pci_bus_id="0000:05:00.0", compute_partition="SPX", numa_node=0),
    )
    facts = conversions.gpu_facts(gpu)
    assert (facts.vram_bytes, facts.numa_node, facts.compute_partition) == (100, 1, "SPX")
    device = RdmaDevice(
        name="mlx5_0", index=0, fw_version="28.1", ports=(RdmaPort(device="mlx5_0", port=1),)
    )
    rdma = conversions.rdma_facts(device)
    assert (rdma.name, rdma.fw_version, rdma.ports[0].port) == ("mlx5_0", "28.1", 1)
