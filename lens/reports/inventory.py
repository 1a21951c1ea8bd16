"""A node's device inventory as the agent reports it: its GPUs and RDMA devices with the facts
that identify and describe them (never readings), from a successful read only.

The node agent role makes a DeviceInventory from its collections (devices/gpu.py GpuSnapshot
with its GpuStatic, devices/ib.py RdmaDevice) and sends it at start and whenever it changes;
`lens jobs` upserts gpu_devices and rdma_devices from it and writes node_device_changelog
(storing/devices.py). `gpus` or `rdma` None: that part was not read successfully this time, so
the server leaves what it holds of it alone; an empty tuple: read, and there are none.
"""

from __future__ import annotations

import dataclasses
from typing import TypeVar


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class GpuFacts:
    """One GPU's identity and static facts. None: unknown (never made up)."""

    uuid: str  # the agent's GPU uuid (GpuSnapshot.uuid): the device's identity on the node
    index: int
    vendor: str  # amd or nvidia
    model: str
    serial: str
    pci_bus_id: str
    vbios: str | None = None
    vram_bytes: int | None = None
    numa_node: int | None = None
    compute_partition: str | None = None  # SPX, CPX, ... (AMD); None where there is none
    memory_partition: str | None = None  # NPS1, NPS4, ... (AMD)
    driver_version: str | None = None
    # The agent's judgement of it, "healthy" or "degraded: throttle_thermal" (its state and
    # active reasons); None: not judged. A fact, not a reading: it changes by the health rules.
    health: str | None = None


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class RdmaPortFacts:
    """One port of an RDMA device: what describes it, not its counters."""

    port: int
    state: str | None = None  # ACTIVE, DOWN, ...
    physical_state: str | None = None  # LinkUp, Polling, ...
    link_layer: str | None = None  # InfiniBand or Ethernet
    rate_bytes_per_second: float | None = None
    netdev: str | None = None


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class RdmaFacts:
    """One RDMA device; its identity on the node is its name (mlx5_0)."""

    name: str
    node_guid: str | None = None
    sys_image_guid: str | None = None
    fw_version: str | None = None
    node_type: str | None = None
    hca_type: str | None = None
    board_id: str | None = None
    pci_bus_id: str | None = None
    numa_node: int | None = None
    netdevs: tuple[str, ...] = ()
    ports: tuple[RdmaPortFacts, ...] = ()


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class DeviceInventory:
    """A node's devices at `time` (epoch seconds). None: not read successfully, so unknown."""

    time: float
    gpus: tuple[GpuFacts, ...] | None = None
    rdma: tuple[RdmaFacts, ...] | None = None


_Facts = TypeVar("_Facts", RdmaFacts, RdmaPortFacts)


def fill_unknown(facts: RdmaFacts, before: RdmaFacts | None) -> RdmaFacts:
    """`facts` with what it does not know (None, no netdevs) taken from `before`, an earlier
    read of the same device (same name and node GUID).

    A read through the rdma tool, when sysfs is unavailable, knows less than one through
    sysfs: without this, each switch between the two would report the HCA type, board and
    link layer gone and back, a changelog entry each time, though nothing changed."""
    if before is None or before.name != facts.name or before.node_guid != facts.node_guid:
        return facts
    earlier_ports = {port.port: port for port in before.ports}
    ports = tuple(_filled(port, earlier_ports.get(port.port)) for port in facts.ports)
    filled = _filled(facts, before)
    return dataclasses.replace(filled, netdevs=facts.netdevs or before.netdevs, ports=ports)


def _filled(facts: _Facts, before: _Facts | None) -> _Facts:
    if before is None:
        return facts
    unknown = {
        field.name: getattr(before, field.name)
        for field in dataclasses.fields(facts)
        if getattr(facts, field.name) is None
    }
    return dataclasses.replace(facts, **unknown) if unknown else facts
