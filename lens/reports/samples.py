"""What the per-minute summarisers take in: one GPU's or RDMA port's readings at one collection,
and which containers held a GPU when.

The node agent role converts its devices' snapshots (devices/gpu.py GpuSnapshot, devices/ib.py
RdmaPort) and its container tracking (containers/model.py Container) into these; gpuminutes.py,
portminutes.py and attribution.py consume them. None always means unknown, never 0.
"""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class GpuSample:
    """One GPU at one collection (GpuSnapshot's identity and readings, in the same units)."""

    uuid: str
    index: int
    pci_bus_id: str
    time: float  # epoch seconds of the collection
    utilization_ratio: float | None = None
    memory_activity_ratio: float | None = None
    vram_used_bytes: int | None = None  # GpuSnapshot.memory_used_bytes
    power_watts: float | None = None
    # A cumulative hardware counter (energy since the driver loaded); None where the GPU has none.
    energy_joules: float | None = None
    temperatures_celsius: tuple[tuple[str, float], ...] = ()  # (sensor, celsius); absent: unknown


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class PortSample:
    """One RDMA port at one collection: RdmaPort's cumulative counters as the kernel counts them.

    `counters` are the port's error and discard counters from the IB performance management agent
    (sysfs `counters/`, e.g. symbol_error, port_xmit_discards) and `hw_counters` the driver's
    error and discard counters (`hw_counters/`, e.g. out_of_buffer); the role picks which.
    """

    device: str
    port: int
    time: float  # epoch seconds of the collection
    rate_bytes_per_second: float | None = None
    transmit_bytes: int | None = None
    receive_bytes: int | None = None
    transmit_packets: int | None = None
    receive_packets: int | None = None
    counters: tuple[tuple[str, int], ...] = ()
    hw_counters: tuple[tuple[str, int], ...] = ()


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True, order=True)
class Holder:
    """A container that can hold a GPU, as the agent's container tracking names it."""

    cluster: str
    namespace: str
    pod_name: str
    container: str  # the Kubernetes container name
    pod_uid: str
    container_id: str


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Holding:
    """A container holding a GPU from `since` until `until` (epoch seconds; None: still held)."""

    gpu_uuid: str
    holder: Holder
    since: float
    until: float | None = None
