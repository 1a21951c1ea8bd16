"""A node's device inventory as a lens.v1 message and back (reports.proto DeviceInventory).

A part the agent did not read successfully is absent from the message, and the server leaves
what it holds of it alone; a part read and empty is present with no items. The inventory's time
is the record's `observed_at`, which the outbox stamps when the agent puts it. Texts are cut to
their columns on the way out and refused when longer on the way in, as in wire.py.
"""

from __future__ import annotations

import math

from lens.proto._generated.lens.v1 import events_pb2 as pb
from lens.proto._generated.lens.v1 import reports_pb2 as rpb
from lens.reports.inventory import DeviceInventory, GpuFacts, RdmaFacts, RdmaPortFacts
from lens.runtime.wirevalues import WireError, checked_number, checked_text, checked_time
from lens.runtime.wirevalues import usable_text as _fit

# Column sizes of gpu_devices and rdma_devices (lens/store/models/nodes.py).
UUID_CHARS = 128
NAME_CHARS = 128  # a model, serial, firmware, VBIOS or RDMA device name
SHORT_CHARS = 64  # vendor, PCI address, GUIDs, partition modes, states, netdev names


def inventory_record(inventory: DeviceInventory) -> pb.Record:
    """A Record (sequence and time unset: the outbox sets them) carrying `inventory`."""
    record = pb.Record()
    wire = record.devices
    if inventory.gpus is not None:
        wire.gpus.SetInParent()
        wire.gpus.items.extend(_gpu(gpu) for gpu in inventory.gpus)
    if inventory.rdma is not None:
        wire.rdma.SetInParent()
        wire.rdma.items.extend(_rdma(device) for device in inventory.rdma)
    return record


def _gpu(gpu: GpuFacts) -> rpb.GpuFacts:
    wire = rpb.GpuFacts(
        uuid=_fit(gpu.uuid, UUID_CHARS),
        index=gpu.index if -(2**31) <= gpu.index < 2**31 else -1,
        vendor=_fit(gpu.vendor, SHORT_CHARS),
        model=_fit(gpu.model, NAME_CHARS),
        serial=_fit(gpu.serial, NAME_CHARS),
        pci_bus_id=_fit(gpu.pci_bus_id, SHORT_CHARS),
    )
    _set_text(wire, "vbios", gpu.vbios, NAME_CHARS)
    _set_text(wire, "compute_partition", gpu.compute_partition, SHORT_CHARS)
    _set_text(wire, "memory_partition", gpu.memory_partition, SHORT_CHARS)
    _set_text(wire, "driver_version", gpu.driver_version, SHORT_CHARS)
    _set_text(wire, "health", gpu.health, NAME_CHARS)
    if gpu.vram_bytes is not None and 0 <= gpu.vram_bytes < 2**63:
        wire.vram_bytes = gpu.vram_bytes
    if gpu.numa_node is not None and -(2**31) <= gpu.numa_node < 2**31:
        wire.numa_node = gpu.numa_node
    return wire


def _rdma(device: RdmaFacts) -> rpb.RdmaFacts:
    wire = rpb.RdmaFacts(
        name=_fit(device.name, NAME_CHARS),
        netdevs=[_fit(n, SHORT_CHARS) for n in device.netdevs],
        ports=[_port(p) for p in device.ports],
    )
    for name in ("node_guid", "sys_image_guid", "node_type", "hca_type", "pci_bus_id"):
        _set_text(wire, name, getattr(device, name), SHORT_CHARS)
    _set_text(wire, "fw_version", device.fw_version, NAME_CHARS)
    _set_text(wire, "board_id", device.board_id, NAME_CHARS)
    if device.numa_node is not None and -(2**31) <= device.numa_node < 2**31:
        wire.numa_node = device.numa_node
    return wire


def _port(port: RdmaPortFacts) -> rpb.RdmaPortFacts:
    wire = rpb.RdmaPortFacts(port=port.port if 0 <= port.port < 2**31 else -1)
    for name in ("state", "physical_state", "link_layer", "netdev"):
        _set_text(wire, name, getattr(port, name), SHORT_CHARS)
    rate = port.rate_bytes_per_second
    if rate is not None and math.isfinite(rate):
        wire.rate_bytes_per_second = rate
    return wire


def _set_text(
    wire: rpb.GpuFacts | rpb.RdmaFacts | rpb.RdmaPortFacts, name: str, value: str | None, limit: int
) -> None:
    if value is not None:
        setattr(wire, name, _fit(value, limit))


def device_inventory(record: pb.Record) -> DeviceInventory:
    """The inventory a record carries; WireError when the store cannot hold it."""
    wire = record.devices
    gpus = rdma = None
    if wire.HasField("gpus"):
        gpus = tuple(_read_gpu(g) for g in wire.gpus.items)
        _unique([g.uuid for g in gpus], "GPU uuid")
    if wire.HasField("rdma"):
        rdma = tuple(_read_rdma(d) for d in wire.rdma.items)
        _unique([d.name for d in rdma], "RDMA device name")
    return DeviceInventory(
        time=checked_time(record.observed_at, "observed_at"), gpus=gpus, rdma=rdma
    )


def _unique(identities: list[str], what: str) -> None:
    if len(set(identities)) != len(identities):
        raise WireError("device listed twice", what)


def _text_of(
    wire: rpb.GpuFacts | rpb.RdmaFacts | rpb.RdmaPortFacts, name: str, limit: int
) -> str | None:
    if not wire.HasField(name):
        return None
    return checked_text(getattr(wire, name), limit, name)


def _read_gpu(wire: rpb.GpuFacts) -> GpuFacts:
    if not wire.uuid:
        raise WireError("GPU without a uuid")
    return GpuFacts(
        uuid=checked_text(wire.uuid, UUID_CHARS, "uuid"),
        index=wire.index,
        vendor=checked_text(wire.vendor, SHORT_CHARS, "vendor"),
        model=checked_text(wire.model, NAME_CHARS, "model"),
        serial=checked_text(wire.serial, NAME_CHARS, "serial"),
        pci_bus_id=checked_text(wire.pci_bus_id, SHORT_CHARS, "pci_bus_id"),
        vbios=_text_of(wire, "vbios", NAME_CHARS),
        vram_bytes=wire.vram_bytes if wire.HasField("vram_bytes") else None,
        numa_node=wire.numa_node if wire.HasField("numa_node") else None,
        compute_partition=_text_of(wire, "compute_partition", SHORT_CHARS),
        memory_partition=_text_of(wire, "memory_partition", SHORT_CHARS),
        driver_version=_text_of(wire, "driver_version", SHORT_CHARS),
        health=_text_of(wire, "health", NAME_CHARS),
    )


def _read_rdma(wire: rpb.RdmaFacts) -> RdmaFacts:
    if not wire.name:
        raise WireError("RDMA device without a name")
    return RdmaFacts(
        name=checked_text(wire.name, NAME_CHARS, "name"),
        node_guid=_text_of(wire, "node_guid", SHORT_CHARS),
        sys_image_guid=_text_of(wire, "sys_image_guid", SHORT_CHARS),
        fw_version=_text_of(wire, "fw_version", NAME_CHARS),
        node_type=_text_of(wire, "node_type", SHORT_CHARS),
        hca_type=_text_of(wire, "hca_type", SHORT_CHARS),
        board_id=_text_of(wire, "board_id", NAME_CHARS),
        pci_bus_id=_text_of(wire, "pci_bus_id", SHORT_CHARS),
        numa_node=wire.numa_node if wire.HasField("numa_node") else None,
        netdevs=tuple(checked_text(n, SHORT_CHARS, "netdev") for n in wire.netdevs),
        ports=tuple(_read_port(p) for p in wire.ports),
    )


def _read_port(wire: rpb.RdmaPortFacts) -> RdmaPortFacts:
    rate = wire.rate_bytes_per_second if wire.HasField("rate_bytes_per_second") else None
    return RdmaPortFacts(
        port=wire.port,
        state=_text_of(wire, "state", SHORT_CHARS),
        physical_state=_text_of(wire, "physical_state", SHORT_CHARS),
        link_layer=_text_of(wire, "link_layer", SHORT_CHARS),
        rate_bytes_per_second=None if rate is None else checked_number(rate, "rate"),
        netdev=_text_of(wire, "netdev", SHORT_CHARS),
    )
